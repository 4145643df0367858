"""`claude-memory connect` checked by the agents' own CLIs (from npm) against the real app.

agent_clis (session)   @openai/codex, @google/gemini-cli and @anthropic-ai/claude-code at pinned
                       versions (tests/agent_clis.py), installed once with npm into a cache
                       folder outside the work tree and reused while the versions match
guarded_url            the app over the test database, requiring TOKEN (tests/db_fixtures.py)
agent_env              HOME (from conftest), CODEX_HOME and the rest inside tmp_path, the CLIs
                       first on PATH, the token in the environment as a user would export it

Each agent reports the connection itself, offline and without a login: Gemini CLI and Claude
Code health-check the server in `mcp list`; Codex's `mcp list` only prints its configuration,
so its app server (the JSON-RPC backend of its UI) is asked for `mcpServerStatus/list`, which
connects and lists our tools. Every subprocess runs in a worker thread: the server under test
shares this event loop.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.agent_clis import agent_env as agent_clis_env
from tests.agent_clis import codex_app_server
from tests.db_fixtures import TOKEN
from tests.integration.processes import cli_command, ran

pytestmark = pytest.mark.integration

CODEX_USER_CONFIG = """\
# my own settings
model = "o3"

[mcp_servers.docs]
command = "docs-server"
args = ["--stdio"]
"""


@pytest.fixture
def agent_env(agent_clis: Path, isolated_home: Path) -> dict[str, str]:
    return agent_clis_env(
        agent_clis,
        isolated_home,
        DISABLE_AUTOUPDATER="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )


async def run(*command: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return await asyncio.to_thread(ran, list(command), env, None, 120)


async def claude_memory(*args: str, env: dict[str, str]) -> dict[str, Any]:
    done = await run(*cli_command(*args), env=env)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def codex_mcp_status(env: dict[str, str]) -> dict[str, Any]:
    """Ask Codex's app server for the live status of our server (it connects to list tools)."""
    result = codex_app_server(env, "mcpServerStatus/list", {"serverName": "claude-memory"})
    [status] = result["data"]
    return dict(status)


async def test_codex_connects_over_streamable_http_with_the_token_from_its_environment(
    guarded_url: str, agent_env: dict[str, str], isolated_home: Path
) -> None:
    config = isolated_home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(CODEX_USER_CONFIG)

    connected = await claude_memory("connect", "codex", "--url", guarded_url, env=agent_env)
    shown = await run("codex", "mcp", "get", "claude-memory", "--json", env=agent_env)
    status = await asyncio.to_thread(codex_mcp_status, agent_env)
    tokenless = await asyncio.to_thread(codex_mcp_status, {**agent_env, "CLAUDE_MEMORY_TOKEN": ""})

    assert connected["changed"] and connected["transport"] == "streamable-http"
    assert shown.returncode == 0, shown.stderr
    transport = json.loads(shown.stdout)["transport"]
    assert transport["type"] == "streamable_http"
    assert transport["url"] == f"{guarded_url}/mcp"
    assert transport["bearer_token_env_var"] == "CLAUDE_MEMORY_TOKEN"
    assert status.get("toolsError") is None
    assert status["serverInfo"]["name"] == "claude-memory"
    assert {"startup_context", "hybrid_search", "save_memory"} <= set(status["tools"])
    assert "CLAUDE_MEMORY_TOKEN" in tokenless["toolsError"]
    assert TOKEN not in config.read_text()

    again = await claude_memory("connect", "codex", "--url", guarded_url, env=agent_env)
    removed = await claude_memory("disconnect", "codex", env=agent_env)
    listed = await run("codex", "mcp", "list", "--json", env=agent_env)

    assert not again["changed"] and removed["changed"]
    assert [server["name"] for server in json.loads(listed.stdout)] == ["docs"]
    assert config.read_text() == CODEX_USER_CONFIG


async def test_gemini_cli_lists_the_server_as_connected(
    guarded_url: str, agent_env: dict[str, str], isolated_home: Path
) -> None:
    settings = isolated_home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"ui": {"theme": "Dracula"}}, indent=2) + "\n")

    connected = await claude_memory("connect", "gemini", "--url", guarded_url, env=agent_env)
    listed = await run("gemini", "mcp", "list", env=agent_env)
    tokenless = await run("gemini", "mcp", "list", env={**agent_env, "CLAUDE_MEMORY_TOKEN": ""})

    assert connected["changed"]
    entry = json.loads(settings.read_text())["mcpServers"]["claude-memory"]
    assert entry["httpUrl"] == f"{guarded_url}/mcp"
    line = server_line(listed.stdout + listed.stderr, "claude-memory")
    assert f"{guarded_url}/mcp (http) - Connected" in line
    assert "Disconnected" in server_line(tokenless.stdout + tokenless.stderr, "claude-memory")
    assert TOKEN not in settings.read_text()

    await claude_memory("disconnect", "gemini", env=agent_env)
    after = await run("gemini", "mcp", "list", env=agent_env)

    assert "claude-memory" not in after.stdout + after.stderr
    assert json.loads(settings.read_text()) == {"ui": {"theme": "Dracula"}}


async def test_claude_code_adds_the_server_with_its_own_command(
    guarded_url: str, agent_env: dict[str, str], isolated_home: Path
) -> None:
    connected = await claude_memory("connect", "claude-code", "--url", guarded_url, env=agent_env)
    listed = await run("claude", "mcp", "list", env=agent_env)
    again = await claude_memory("connect", "claude-code", "--url", guarded_url, env=agent_env)

    assert connected["changed"] and connected["commands"][0].startswith("claude mcp add")
    line = server_line(listed.stdout, "claude-memory")
    assert f"{guarded_url}/mcp (HTTP)" in line and "Connected" in line, listed.stdout
    assert not again["changed"] and again["commands"] == []
    assert TOKEN not in (isolated_home / ".claude.json").read_text()

    removed = await claude_memory("disconnect", "claude-code", env=agent_env)
    after = await run("claude", "mcp", "list", env=agent_env)

    assert removed["commands"] == ["claude mcp remove claude-memory --scope user"]
    assert "claude-memory" not in after.stdout


def server_line(output: str, name: str) -> str:
    lines = [line for line in output.splitlines() if name in line]
    assert lines, output
    return lines[0]
