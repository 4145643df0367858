"""The Claude Code plugin installed from this repository's marketplace by the real `claude` CLI.

agent_clis (session)   @anthropic-ai/claude-code at its pinned version (tests/agent_clis.py)
guarded_url            the app over the test database, with a token
claude_env             HOME from conftest (so ~/.claude is the test's), the CLI first on PATH,
                       offline: no updater, no telemetry, no login

The CLI validates the marketplace and the plugin, adds this checkout's folder as a marketplace,
installs the plugin (copying it into its cache under HOME), and health-checks the plugin's MCP
server in `claude mcp list`. A prompt hook then runs as Claude Code runs it: the command from
the installed hooks.json through the shell, CLAUDE_PLUGIN_ROOT and the plugin's options in the
environment, the event JSON on stdin. And a whole `claude -p` session runs the plugin's hooks
itself, with tests/messages_stub.py standing in for the model. The server runs in the test's
event loop, so every subprocess is awaited, never waited on with a blocking call.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client

from server import __version__
from server.core.models.journal import JournalFilter
from server.service.memory import MemoryService
from tests.db_fixtures import TOKEN, free_port
from tests.integration.processes import ran, run_cli
from tests.messages_stub import ScriptedReply

pytestmark = pytest.mark.integration

REPOSITORY = Path(__file__).resolve().parents[2]
PLUGIN_DIR = REPOSITORY / "plugins" / "memories"
PLUGIN = "memories@claude-memory"
SERVER_LINE = "plugin:memories:claude-memory"
RATE_LIMIT = (
    "Rate limit POST /invoices per API key (x-api-key) at 30/min; anonymous requests without a "
    "key are limited per IP at 10/min."
)
PROMPT = "how do we rate limit POST /invoices: per API key or per IP?"
# Where the real output of the install goes for the docs (`CLAUDE_MEMORY_PLUGIN_TRANSCRIPT`).
TRANSCRIPT = os.environ.get("CLAUDE_MEMORY_PLUGIN_TRANSCRIPT")


@pytest.fixture
def claude_env(agent_clis: Path, isolated_home: Path) -> dict[str, str]:
    skipped = ("CLAUDE_CONFIG_DIR", "CLAUDE_MEMORY_URL", "CLAUDE_MEMORY_TOKEN")
    env = {key: value for key, value in os.environ.items() if key not in skipped}
    env.update(
        PATH=f"{agent_clis}{os.pathsep}{env.get('PATH', '')}",
        DISABLE_AUTOUPDATER="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        NO_COLOR="1",
    )
    return env


async def claude(
    *args: str, env: dict[str, str], cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    done = await asyncio.to_thread(ran, ["claude", *args], env, cwd, 120)
    if TRANSCRIPT:
        with open(TRANSCRIPT, "a", encoding="utf-8") as out:
            shown = done.stdout + done.stderr
            out.write(f"$ claude {' '.join(args)}\n{shown}(exit {done.returncode})\n\n")
    return done


async def claude_memory(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = await asyncio.to_thread(run_cli, *args, env=env)
    if TRANSCRIPT:
        with open(TRANSCRIPT, "a", encoding="utf-8") as out:
            shown = done.stdout + done.stderr
            out.write(f"$ claude-memory {' '.join(args)}\n{shown}(exit {done.returncode})\n\n")
    return done


def server_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.startswith(SERVER_LINE)]
    assert lines, output
    return lines[0]


def installed_root(home: Path) -> Path:
    """Where Claude Code copied the plugin (its installed_plugins.json says)."""
    installed = json.loads((home / ".claude" / "plugins" / "installed_plugins.json").read_text())
    [entry] = installed["plugins"][PLUGIN]
    return Path(entry["installPath"])


async def run_plugin_hook(
    root: Path, event: str, data: dict[str, Any], env: dict[str, str]
) -> tuple[int, str, str]:
    """The installed hooks.json's command for `event`, as Claude Code runs a plugin's hook."""
    hooks = json.loads((root / "hooks" / "hooks.json").read_text())
    [group] = hooks["hooks"][event]
    [handler] = group["hooks"]
    process = await asyncio.create_subprocess_shell(
        handler["command"],
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**env, "CLAUDE_PLUGIN_ROOT": str(root)},
    )
    out, err = await asyncio.wait_for(process.communicate(json.dumps(data).encode()), 30)
    return process.returncode or 0, out.decode(), err.decode()


async def test_claude_code_installs_the_plugin_connects_it_and_runs_its_prompt_hook(
    guarded_url: str,
    claude_env: dict[str, str],
    isolated_home: Path,
    service: MemoryService,
    tmp_path: Path,
) -> None:
    marketplace = await claude("plugin", "validate", "--strict", str(REPOSITORY), env=claude_env)
    plugin = await claude("plugin", "validate", "--strict", str(PLUGIN_DIR), env=claude_env)
    added = await claude("plugin", "marketplace", "add", str(REPOSITORY), env=claude_env)
    installed = await claude(
        "plugin", "install", PLUGIN, "--config", f"url={guarded_url}", env=claude_env
    )

    assert marketplace.returncode == 0, marketplace.stdout + marketplace.stderr
    assert "Validation passed" in marketplace.stdout
    assert plugin.returncode == 0, plugin.stdout + plugin.stderr
    assert "Validation passed" in plugin.stdout
    assert added.returncode == 0, added.stdout + added.stderr
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert f"Successfully installed plugin: {PLUGIN}" in installed.stdout

    # The URL from the plugin's option, the token from the environment.
    listed = await claude("mcp", "list", env={**claude_env, "CLAUDE_MEMORY_TOKEN": TOKEN})
    tokenless = await claude("mcp", "list", env=claude_env)
    elsewhere = f"http://127.0.0.1:{free_port()}"
    moved = {**claude_env, "CLAUDE_MEMORY_TOKEN": TOKEN, "CLAUDE_MEMORY_URL": elsewhere}
    overridden = await claude("mcp", "list", env=moved)

    line = server_line(listed.stdout)
    assert f"{guarded_url}/mcp (HTTP)" in line and "Connected" in line, listed.stdout
    assert "Connected" not in server_line(tokenless.stdout)
    assert f"{elsewhere}/mcp (HTTP)" in server_line(overridden.stdout)
    assert TOKEN not in (isolated_home / ".claude" / "settings.json").read_text()

    root = installed_root(isolated_home)
    assert PLUGIN_DIR not in (root, *root.parents)  # a copy: no path back into this checkout
    project = tmp_path / "acme-api"
    project.mkdir()
    saved = await service.save(
        RATE_LIMIT, project="acme-api", project_path=str(project), kind="distilled", force=True
    )
    payload = {
        "session_id": "plugin-session-1",
        "transcript_path": str(tmp_path / "plugin-session-1.jsonl"),
        "cwd": str(project),
        "hook_event_name": "UserPromptSubmit",
        "prompt": PROMPT,
    }
    # Claude Code hands a hook the plugin's options as CLAUDE_PLUGIN_OPTION_<KEY>.
    options = {"CLAUDE_PLUGIN_OPTION_URL": guarded_url, "CLAUDE_PLUGIN_OPTION_TOKEN": TOKEN}
    code, out, err = await run_plugin_hook(
        root, "UserPromptSubmit", payload, {**claude_env, **options}
    )

    assert (code, err) == (0, "")
    specific = json.loads(out)["hookSpecificOutput"]
    assert specific["hookEventName"] == "UserPromptSubmit"
    assert f"#{saved.id}" in specific["additionalContext"]
    assert "per API key" in specific["additionalContext"]


async def test_a_claude_code_session_runs_the_plugin_hooks_with_its_options(
    guarded_url: str,
    claude_env: dict[str, str],
    service: MemoryService,
    tmp_path: Path,
) -> None:
    """A whole `claude -p` session, its model a local stand-in, the URL and the token from the
    plugin's options alone: the session-start context carries the saved memory to the model,
    and the prompt hook reaches the server (its prompt is in the journal)."""
    project = tmp_path / "acme-api"
    project.mkdir()
    saved = await service.save(
        RATE_LIMIT, project="acme-api", project_path=str(project), kind="distilled", force=True
    )
    await claude("plugin", "marketplace", "add", str(REPOSITORY), env=claude_env)
    options = ("--config", f"url={guarded_url}", "--config", f"token={TOKEN}")
    installed = await claude("plugin", "install", PLUGIN, *options, env=claude_env)
    assert installed.returncode == 0, installed.stdout + installed.stderr

    with ScriptedReply("Per API key.") as model:
        session_env = {
            **claude_env,
            "ANTHROPIC_BASE_URL": model.root_url,
            "ANTHROPIC_API_KEY": "sk-ant-stub-key",
        }
        asking = ("-p", PROMPT, "--output-format", "json")
        session = await claude(*asking, env=session_env, cwd=project)
        asked = [json.dumps(body) for body in model.requests if PROMPT in json.dumps(body)]
    page = await service.journal(JournalFilter(project="acme-api"), limit=10)

    assert session.returncode == 0, session.stdout + session.stderr
    assert json.loads(session.stdout)["result"] == "Per API key."
    assert asked, model.requests
    assert "SessionStart hook additional context" in asked[0]
    assert f"#{saved.id}" in asked[0]
    assert "per API key (x-api-key) at 30/min" in asked[0]
    assert PROMPT in [entry.prompt for entry in page.entries]


async def test_without_a_token_the_plugin_connects_to_a_server_that_needs_none(
    app_url: str, claude_env: dict[str, str]
) -> None:
    """The everyday case: a server on this machine without a token, no token configured."""
    await claude("plugin", "marketplace", "add", str(REPOSITORY), env=claude_env)
    await claude("plugin", "install", PLUGIN, "--config", f"url={app_url}", env=claude_env)
    listed = await claude("mcp", "list", env=claude_env)

    line = server_line(listed.stdout)
    assert f"{app_url}/mcp (HTTP)" in line and "Connected" in line, listed.stdout


async def test_the_skill_and_commands_name_only_tools_the_server_has(guarded_url: str) -> None:
    documents = [
        PLUGIN_DIR / "skills" / "memory" / "SKILL.md",
        *PLUGIN_DIR.glob("commands/*.md"),
        *PLUGIN_DIR.glob("agents/*.md"),
    ]
    named = {
        word
        for path in documents
        for word in re.findall(r"`([a-z]+(?:_[a-z]+)+)`", path.read_text(encoding="utf-8"))
    }

    async with Client(f"{guarded_url}/mcp", auth=TOKEN) as client:
        tools = {tool.name for tool in await client.list_tools()}

    assert {"hybrid_search", "save_memory", "get_memory", "delete_memory"} <= named
    assert named <= tools


async def test_claude_code_validates_the_recall_agent_on_a_small_model_with_read_only_tools(
    guarded_url: str, claude_env: dict[str, str]
) -> None:
    """The agent is only validated and listed here: running it needs a model (#67)."""
    validated = await claude("plugin", "validate", "--strict", str(PLUGIN_DIR), env=claude_env)
    agent = (PLUGIN_DIR / "agents" / "recall.md").read_text(encoding="utf-8")
    # Each frontmatter value is written as JSON, which YAML reads unchanged (recall_agent.py).
    front = {
        key: json.loads(value)
        for key, value in (line.split(": ", 1) for line in agent.split("---\n")[1].splitlines())
    }
    async with Client(f"{guarded_url}/mcp", auth=TOKEN) as client:
        read_only = {
            tool.name
            for tool in await client.list_tools()
            if tool.annotations is not None and tool.annotations.read_only_hint
        }
    prefix = f"mcp__plugin_memories_{SERVER_LINE.rsplit(':', 1)[1]}__"
    tools = [name.strip() for name in front["tools"].split(",")]
    skill = (PLUGIN_DIR / "skills" / "memory" / "SKILL.md").read_text(encoding="utf-8")

    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert "agents: memories:recall" in validated.stdout
    assert (front["name"], front["model"]) == ("recall", "haiku")
    assert all(name.startswith(prefix) for name in tools)
    assert {"hybrid_search", "get_memory"} <= {name.removeprefix(prefix) for name in tools}
    assert {name.removeprefix(prefix) for name in tools} <= read_only
    assert "`memories:recall`" in skill


async def test_server_info_carries_our_name_and_version(guarded_url: str) -> None:
    """Over streamable HTTP (a modern client discovers it) and legacy SSE (initialize)."""
    async with Client(f"{guarded_url}/mcp", auth=TOKEN) as client:
        discovered = client.server_info
    async with Client(f"{guarded_url}/sse", auth=TOKEN) as client:
        initialized = client.initialize_result
        assert initialized is not None

    assert discovered is not None
    assert (discovered.name, discovered.version) == ("claude-memory", __version__)
    assert (initialized.server_info.name, initialized.server_info.version) == (
        "claude-memory",
        __version__,
    )


async def test_doctor_flags_our_old_user_entry_next_to_the_plugin_and_connect_removes_it(
    app_url: str, claude_env: dict[str, str], isolated_home: Path
) -> None:
    """The path of a user from before the plugin: `connect claude-code` (our user-scope entry,
    checked against the running server), then the plugin; doctor sees two connections to one
    server, connect removes ours (a backup kept), and doctor is then clean."""
    before = await claude_memory("connect", "claude-code", "--url", app_url, env=claude_env)
    await claude("plugin", "marketplace", "add", str(REPOSITORY), env=claude_env)
    await claude("plugin", "install", PLUGIN, "--config", f"url={app_url}", env=claude_env)
    listed_both = await claude("mcp", "list", env=claude_env)
    doctor = await claude_memory("doctor", "--json", env=claude_env)
    shown = await claude_memory("doctor", env=claude_env)
    connected = await claude_memory("connect", "claude-code", "--plain", env=claude_env)
    listed = await claude("mcp", "list", env=claude_env)
    after = await claude_memory("doctor", "--json", env=claude_env)

    assert before.returncode == 0, before.stderr
    assert re.search(r"^claude-memory: .*/mcp \(HTTP\)", listed_both.stdout, re.M)
    report = json.loads(doctor.stdout)
    [claude_code] = [agent for agent in report["agents"] if agent["agent"] == "claude-code"]
    plugin_route = claude_code["routes"][0]
    assert doctor.returncode == 1, doctor.stderr
    assert (plugin_route["path"], plugin_route["url"]) == (f"plugin {PLUGIN}", app_url)
    assert plugin_route["answers"]["ours"] and plugin_route["answers"]["version"] == __version__
    # connect (before the plugin) wrote our entry and our hooks: both sit beside the plugin.
    problems = claude_code["problems"]
    assert len(problems) == 2, problems
    assert any("user-scope MCP entry" in p["message"] for p in problems)
    assert any(
        "in the plugin: Claude Code runs each of them twice" in p["message"] for p in problems
    )
    assert {p["fix"] for p in problems} == {"claude-memory connect claude-code"}
    assert "PROBLEM: a user-scope MCP entry" in shown.stdout and shown.returncode == 1

    assert connected.returncode == 0, connected.stderr
    assert "ran: claude mcp remove claude-memory --scope user" in connected.stdout
    assert (
        f"connected by the plugin {PLUGIN} ({app_url}): removed our user-scope MCP entry and the"
        " hooks install-hooks wrote" in connected.stdout
    )
    kept = Path(claude_env["CLAUDE_MEMORY_HOME"]) / "backups" / "agent-files"
    backups = list(kept.glob("*_.claude.json.bak-*"))
    assert backups and '"claude-memory"' in backups[0].read_text()
    assert f"(backup: {backups[0]})" in connected.stdout
    assert not list(isolated_home.glob(".claude.json.bak-*"))
    assert not re.search(r"^claude-memory: ", listed.stdout, re.M), listed.stdout
    assert "Connected" in server_line(listed.stdout)
    assert after.returncode == 0, after.stdout
    assert json.loads(after.stdout)["ok"]


async def test_install_hooks_and_connect_write_the_url_of_a_running_server_only(
    app_url: str, claude_env: dict[str, str], isolated_home: Path
) -> None:
    settings = isolated_home / ".claude" / "settings.json"
    closed = f"http://127.0.0.1:{free_port()}"

    installed = await claude_memory("install-hooks", "--url", app_url, env=claude_env)
    refused = await claude_memory("install-hooks", "--url", closed, env=claude_env)
    not_connected = await claude_memory("connect", "codex", "--url", closed, env=claude_env)

    assert installed.returncode == 0, installed.stderr
    assert f"--url {app_url}" in settings.read_text()
    assert refused.returncode == 1 and closed not in settings.read_text()
    assert f"no claude-memory server answers at {closed} (connection refused)" in refused.stderr
    assert not_connected.returncode == 1
    assert "claude-memory serve --port" in not_connected.stderr
    assert not (isolated_home / ".codex" / "config.toml").exists()
