"""doctor: each agent's detection on the files our own connect and install-hooks write, the
problems it flags with their fixes, and the URL check connect and install-hooks make before
writing a URL. No claude-memory server runs here: a closed port and a stand-in HTTP server that
is not ours; the real server, the real `claude` CLI and its plugin: tests/integration/
test_claude_plugin.py.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from server.agents.claude_code import PLUGIN
from server.agents.doctor import as_json, diagnose
from server.agents.registry import AGENTS, connect
from server.cli.main import main
from server.jobs import hook_install
from server.jobs.agent_files import backups_folder
from server.jobs.server_check import check_server
from tests.db_fixtures import free_port
from tests.stub_server import QuietHandler, StubServer, send_json

NOW = datetime(2026, 8, 22, 12, 0, tzinfo=UTC)


class SomeoneElse(StubServer):
    """An HTTP server that is not claude-memory: its /health says ok, in its own words."""

    def handler(self) -> type[BaseHTTPRequestHandler]:
        class Handler(QuietHandler):
            def do_GET(self) -> None:
                send_json(self, 200, {"status": "ok", "uptime": 12})

        return Handler

    @property
    def root_url(self) -> str:
        return self.base_url.removesuffix("/v1")


def closed_url() -> str:
    return f"http://127.0.0.1:{free_port()}"


def attach(agent: str, home: Path, url: str) -> Any:
    return connect(agent, url, use_token=False, environ=env(home), home=home, now=NOW)


def env(home: Path, **more: str) -> dict[str, str]:
    """An environment whose data dir, where connect keeps its backups, is under `home`."""
    return {"CLAUDE_MEMORY_HOME": str(data_dir(home)), **more}


def data_dir(home: Path) -> Path:
    return home / "claude-memory-data"


def install_hooks(home: Path, url: str) -> None:
    """`install-hooks` into the user's Claude Code settings, its backups under `home`."""
    settings = home / ".claude" / "settings.json"
    hook_install.install(settings, url, now=NOW, backups=backups_folder(data_dir(home)))


def report(home: Path, cwd: Path, environ: dict[str, str] | None = None) -> dict[str, Any]:
    found = diagnose(environ or {}, home, cwd, closed_url())
    return as_json(found)


def agent(result: dict[str, Any], name: str) -> dict[str, Any]:
    [one] = [entry for entry in result["agents"] if entry["agent"] == name]
    return one


def routes(entry: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(route["path"], route["role"], route["url"]) for route in entry["routes"]]


def write_json(path: Path, data: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))
    return path


def install_plugin(home: Path, url: str | None) -> None:
    """What `claude plugin install memories@claude-memory --config url=...` leaves (2.1.331)."""
    claude = home / ".claude"
    root = claude / "plugins" / "cache" / "claude-memory" / "memories" / "0.1.0"
    write_json(
        root / ".claude-plugin" / "plugin.json",
        {"name": "memories", "userConfig": {"url": {"default": "http://127.0.0.1:3333"}}},
    )
    install = {"scope": "user", "installPath": str(root), "version": "0.1.0"}
    write_json(claude / "plugins" / "installed_plugins.json", {"plugins": {PLUGIN: [install]}})
    settings_file = claude / "settings.json"
    settings = json.loads(settings_file.read_text()) if settings_file.exists() else {}
    settings["enabledPlugins"] = {PLUGIN: True}
    if url is not None:
        settings["pluginConfigs"] = {PLUGIN: {"options": {"url": url}}}
    write_json(settings_file, settings)


def user_entry(home: Path, url: str) -> None:
    """What `claude mcp add --scope user --transport http claude-memory <url>/mcp` writes."""
    entry = {"type": "http", "url": f"{url}/mcp"}
    write_json(home / ".claude.json", {"mcpServers": {"claude-memory": entry}})


# --- each agent's detection, on what our connect wrote ---------------------------------------


@pytest.mark.parametrize("name", ["codex", "gemini", "opencode", "copilot"])
def test_each_agent_reports_what_connect_wrote(name: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    url = closed_url()
    attach(name, home, url)

    entry = agent(report(home, tmp_path), name)

    assert entry["connected"]
    assert {route["url"] for route in entry["routes"]} == {url}
    assert entry["routes"][0]["role"] == "mcp"
    assert Path(entry["routes"][0]["source"]).is_file()
    hooked = {"codex": "hooks", "gemini": "hooks", "opencode": "plugin (hooks)", "copilot": "hooks"}
    assert (hooked[name], "hooks", url) in routes(entry)


def test_an_agent_not_connected_reports_nothing_and_no_problem(tmp_path: Path) -> None:
    result = report(tmp_path / "home", tmp_path)

    assert result["ok"] and result["problems"] == 0
    assert not any(entry["connected"] for entry in result["agents"])
    assert {entry["agent"] for entry in result["agents"]} == set(AGENTS)


def test_claude_code_user_entry_and_install_hooks_agreeing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    url = closed_url()
    user_entry(home, url)
    install_hooks(home, url)

    entry = agent(report(home, tmp_path), "claude-code")

    assert routes(entry) == [
        ("user-scope MCP entry", "mcp", url),
        ("install-hooks hooks", "hooks", url),
    ]
    # Nothing answers there: one problem, the command that starts the server.
    [problem] = entry["problems"]
    assert f"no claude-memory server answers at {url}" in problem["message"]
    assert problem["fix"] == f"claude-memory serve --port {url.rsplit(':', 1)[1]}"


def test_claude_code_hooks_calling_another_port_than_the_mcp_entry(tmp_path: Path) -> None:
    home = tmp_path / "home"
    served, stale = closed_url(), closed_url()
    user_entry(home, served)
    install_hooks(home, stale)

    problems = agent(report(home, tmp_path), "claude-code")["problems"]

    fixes = [p["fix"] for p in problems if "but the MCP server is at" in p["message"]]
    assert fixes == [f"claude-memory install-hooks --url {served}"]


def test_claude_code_plugin_next_to_a_user_entry_and_install_hooks(tmp_path: Path) -> None:
    home = tmp_path / "home"
    url = closed_url()
    user_entry(home, url)
    install_hooks(home, url)
    install_plugin(home, url)

    entry = agent(report(home, tmp_path), "claude-code")

    assert routes(entry)[:2] == [
        (f"plugin {PLUGIN}", "mcp", url),
        (f"plugin {PLUGIN}", "hooks", url),
    ]
    messages = [p["message"] for p in entry["problems"]]
    assert any("user-scope MCP entry" in m and "next to the plugin" in m for m in messages)
    assert any("Claude Code runs each of them twice" in m for m in messages)
    assert {p["fix"] for p in entry["problems"][:2]} == {"claude-memory connect claude-code"}


def test_claude_code_plugin_url_from_its_default_the_environment_or_config_dir(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    install_plugin(home, None)
    moved = closed_url()

    default = agent(report(home, tmp_path), "claude-code")
    overridden = agent(report(home, tmp_path, {"CLAUDE_MEMORY_URL": moved}), "claude-code")
    elsewhere = agent(report(home, tmp_path, {"CLAUDE_CONFIG_DIR": str(tmp_path)}), "claude-code")

    assert routes(default)[0] == (f"plugin {PLUGIN}", "mcp", "http://127.0.0.1:3333")
    assert routes(overridden)[0][2] == moved
    assert not elsewhere["connected"]


def test_a_disabled_plugin_is_a_note_not_a_route(tmp_path: Path) -> None:
    home = tmp_path / "home"
    install_plugin(home, closed_url())
    settings = home / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    data["enabledPlugins"][PLUGIN] = False
    write_json(settings, data)

    entry = agent(report(home, tmp_path), "claude-code")

    assert not entry["connected"]
    assert entry["notes"] == [f"the plugin {PLUGIN} is disabled: claude plugin enable {PLUGIN}"]


def test_claude_code_local_and_project_entries(tmp_path: Path) -> None:
    home = tmp_path / "home"
    url = closed_url()
    entry = {"type": "http", "url": f"{url}/mcp"}
    project = {str(tmp_path): {"mcpServers": {"claude-memory": entry}}}
    write_json(home / ".claude.json", {"projects": project})
    write_json(tmp_path / ".mcp.json", {"mcpServers": {"claude-memory": entry}})
    install_plugin(home, url)

    found = agent(report(home, tmp_path), "claude-code")

    assert ("local-scope MCP entry", "mcp", url) in routes(found)
    assert ("project MCP entry", "mcp", url) in routes(found)
    fixes = {p["fix"] for p in found["problems"]}
    assert "claude mcp remove claude-memory --scope local" in fixes
    assert "claude mcp remove claude-memory --scope project" in fixes


def test_a_config_that_is_not_json_is_a_note(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "settings.json").write_text("{not json")

    entry = agent(report(home, tmp_path), "gemini")

    assert not entry["connected"]
    assert "is not valid JSON (line 1)" in entry["notes"][0]


# --- connect claude-code with the plugin ------------------------------------------------------


def test_connect_claude_code_with_the_plugin_removes_install_hooks_hooks(tmp_path: Path) -> None:
    home = tmp_path / "home"
    url = closed_url()
    settings = home / ".claude" / "settings.json"
    install_hooks(home, url)
    install_plugin(home, url)
    before = settings.read_text()

    change = attach("claude-code", home, url)

    assert change.changed and change.url is None and change.commands == []
    [file] = change.files
    assert file.path == settings and file.backup is not None
    assert file.backup.read_text() == before
    assert "hooks" not in json.loads(settings.read_text())
    assert change.notes == [
        f"Claude Code is connected by the plugin {PLUGIN} ({url}): removed the hooks "
        "install-hooks wrote instead of adding a second connection"
    ]
    assert agent(report(home, tmp_path), "claude-code")["problems"][0]["message"].startswith(
        f"no claude-memory server answers at {url}"
    )
    again = attach("claude-code", home, "http://127.0.0.1:3377")
    assert not again.changed
    assert again.notes == [
        f"Claude Code is connected by the plugin {PLUGIN} ({url}); nothing else to do",
        f"the plugin calls {url}, not http://127.0.0.1:3377: change its url option (/plugin "
        f"configure {PLUGIN} in Claude Code) or set CLAUDE_MEMORY_URL",
    ]


def test_connect_claude_code_with_the_plugin_dry_run_writes_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    url = closed_url()
    settings = home / ".claude" / "settings.json"
    install_hooks(home, url)
    install_plugin(home, url)
    before = settings.read_text()

    change = connect(
        "claude-code", url, use_token=False, environ=env(home), home=home, now=NOW, dry_run=True
    )

    assert change.changed and change.dry_run
    assert change.files[0].diff.startswith(f"--- {settings}")
    assert "would remove the hooks install-hooks wrote" in change.notes[0]
    assert settings.read_text() == before
    assert not backups_folder(data_dir(home)).exists()


# --- the check before a URL is written --------------------------------------------------------


def test_check_server_tells_ours_from_another_server_and_from_nothing() -> None:
    with SomeoneElse() as other:
        elsewhere = check_server(f"{other.root_url}/mcp")
    nothing = check_server(closed_url())

    assert (elsewhere.ours, elsewhere.detail) == (
        False,
        "HTTP 200 from something that is not claude-memory",
    )
    assert elsewhere.url == other.root_url
    assert (nothing.ours, nothing.detail) == (False, "connection refused")


def test_connect_refuses_a_url_where_claude_memory_does_not_answer(
    isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with SomeoneElse() as other:
        refused = main(["connect", "gemini", "--url", other.root_url])
    err = capsys.readouterr().err
    dry = main(["connect", "gemini", "--url", other.root_url, "--dry-run"])

    assert refused == 1
    assert f"no claude-memory server answers at {other.root_url}" in err
    assert f"`claude-memory serve --port {other.root_url.rsplit(':', 1)[1]}`" in err
    assert "--no-check" in err
    assert not (isolated_home / ".gemini").exists()
    assert dry == 0


def test_install_hooks_refuses_a_closed_port_unless_told_not_to_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = tmp_path / "settings.json"
    url = closed_url()

    refused = main(["install-hooks", "--settings", str(settings), "--url", url])
    err = capsys.readouterr().err
    unchecked = main(["install-hooks", "--settings", str(settings), "--url", url, "--no-check"])

    assert refused == 1
    assert "connection refused" in err and "claude-memory serve --port" in err
    assert unchecked == 0 and f"--url {url}" in settings.read_text()


def test_doctor_exit_code_and_json(isolated_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    clean = main(["doctor", "--json"])
    fine = json.loads(capsys.readouterr().out)
    attach("codex", isolated_home, closed_url())
    broken = main(["doctor"])
    text = capsys.readouterr().out

    assert (clean, fine["ok"]) == (0, True)
    assert broken == 1
    assert "Codex CLI (codex):" in text and "PROBLEM: no claude-memory server answers" in text
    assert text.endswith("1 problem found (exit code 1)\n")
