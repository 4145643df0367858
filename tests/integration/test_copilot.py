"""GitHub Copilot CLI as the fifth agent, driven through its own CLI (@github/copilot,
tests/agent_clis.py).

`claude-memory connect copilot` registers the server in `$COPILOT_HOME/mcp-config.json`, where
Copilot's own `copilot mcp get` reads it back; a real `copilot -p` run (offline, its model a
custom provider: tests/chat_stream_stub.py) connects to the server with the token from its
environment, offers the model our tools and runs its search, and loads the instructions block
connect wrote to its personal instructions file. Copilot's hooks and session files are not read
yet (see server/agents/copilot.py).
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from server.service.memory import MemoryService
from tests.agent_clis import CLIS_DIR
from tests.chat_stream_stub import ScriptedChat
from tests.db_fixtures import TOKEN
from tests.integration.processes import cli_json, completed


def copilot_env(agent_clis: Path, root: Path) -> dict[str, str]:
    """Copilot's environment: its home under `root`, offline, never updating itself."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COPILOT_", "XDG_"))}
    env.update(
        PATH=f"{agent_clis}{os.pathsep}{env.get('PATH', '')}",
        HOME=str(root / "home"),
        # Where the CLI unpacks its bundle (235 MB) on first start: once for every test.
        XDG_CACHE_HOME=str(CLIS_DIR / "copilot-cache"),
        COPILOT_AUTO_UPDATE="false",
        NO_COLOR="1",
    )
    return env


async def test_connect_copilot_writes_what_copilot_reads_back(
    guarded_url: str, agent_clis: Path, tmp_path: Path
) -> None:
    env = {**copilot_env(agent_clis, tmp_path), "CLAUDE_MEMORY_TOKEN": TOKEN}
    config = tmp_path / "home" / ".copilot" / "mcp-config.json"
    config.parent.mkdir(parents=True)
    mine = {"mcpServers": {"notes": {"type": "http", "url": "https://notes.example/mcp"}}}
    config.write_text(json.dumps(mine, indent=2) + "\n")

    connected = await asyncio.to_thread(
        cli_json, "connect", "copilot", "--url", guarded_url, env=env
    )
    get = ["copilot", "mcp", "get", "claude-memory", "--json"]
    shown = await asyncio.to_thread(completed, get, env)
    again = await asyncio.to_thread(cli_json, "connect", "copilot", "--url", guarded_url, env=env)

    assert connected["changed"] and connected["agent_version"] == "1.0.102"
    assert json.loads(shown)["claude-memory"] == {
        "type": "http",
        "url": f"{guarded_url}/mcp",
        "tools": ["*"],
        "headers": {"Authorization": "Bearer ${CLAUDE_MEMORY_TOKEN}"},
        "source": "user",
        "enabled": True,
    }
    assert TOKEN not in config.read_text()
    assert json.loads(config.read_text())["mcpServers"]["notes"] == mine["mcpServers"]["notes"]
    assert not again["changed"]
    backups = sorted(p.name for p in config.parent.iterdir() if ".bak-" in p.name)
    assert len(backups) == 1 and json.loads((config.parent / backups[0]).read_text()) == mine
    instructions = tmp_path / "home" / ".copilot" / "copilot-instructions.md"
    assert "claude-memory" in instructions.read_text()

    removed = cli_json("disconnect", "copilot", env=env)
    listed = await asyncio.to_thread(completed, ["copilot", "mcp", "list"], env)
    assert removed["changed"] and json.loads(config.read_text()) == mine
    assert "claude-memory" not in listed and "notes" in listed
    assert not instructions.exists(), "the block was all it held"


PNPM = "acme-api installs packages with pnpm: run pnpm add, never npm install."


async def test_a_real_copilot_run_searches_our_memory_with_our_instructions(
    guarded_url: str, service: MemoryService, agent_clis: Path, tmp_path: Path
) -> None:
    env = {**copilot_env(agent_clis, tmp_path), "CLAUDE_MEMORY_TOKEN": TOKEN}
    project = tmp_path / "acme-api"
    project.mkdir()
    await service.save(PNPM, project="acme-api", project_path=str(project), kind="preference")
    await asyncio.to_thread(cli_json, "connect", "copilot", "--url", guarded_url, env=env)
    search = ("claude-memory-search_memories", {"query": "which package manager"})

    def copilot_run(model: ScriptedChat, token: str) -> None:
        offline = {
            **env,
            "CLAUDE_MEMORY_TOKEN": token,
            "COPILOT_OFFLINE": "true",
            "COPILOT_PROVIDER_BASE_URL": model.base_url,
            "COPILOT_MODEL": "gpt-4o",
        }
        command = ["copilot", "-p", "Which package manager does acme-api use?"]
        completed([*command, "--allow-all-tools", "--no-auto-update"], offline, cwd=project)

    with ScriptedChat([search], reply="pnpm.") as model:
        await asyncio.to_thread(copilot_run, model, TOKEN)
        with_token = list(model.requests)
    with ScriptedChat([], reply="pnpm.") as model:
        await asyncio.to_thread(copilot_run, model, "")
        without_token = list(model.requests)

    def tools(requests: list[dict[str, Any]]) -> set[str]:
        """The names of the tools offered: functions, and Copilot's own custom tools."""
        offered = [tool for r in requests for tool in r.get("tools") or []]
        return {tool.get("function", tool).get("name", "") for tool in offered}

    # Copilot names an MCP server's tools `<server>-<tool>`.
    ours = {name for name in tools(with_token) if name.startswith("claude-memory-")}
    assert {"claude-memory-search_memories", "claude-memory-save_memory"} <= ours
    assert not {name for name in tools(without_token) if name.startswith("claude-memory-")}
    system = [m for r in with_token for m in r["messages"] if m["role"] == "system"]
    assert "claude-memory" in json.dumps(system), "the instructions block connect wrote"
    results = [m for r in with_token for m in r["messages"] if m["role"] == "tool"]
    assert results and PNPM[:40] in json.dumps(results[-1])
