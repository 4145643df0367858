"""GitHub Copilot CLI as the fifth agent, driven through its own CLI (@github/copilot,
tests/agent_clis.py).

`claude-memory connect copilot` registers the server in `$COPILOT_HOME/mcp-config.json`, where
Copilot's own `copilot mcp get` reads it back, and writes our hooks file. A real `copilot -p` run
(offline, its model a custom provider: tests/chat_stream_stub.py) connects to the server with
the token from its environment, offers the model our tools and runs its search; our hooks put
the memory relevant to the prompt into the model's request and have the session imported when
the turn stops. The session file such a run writes is also imported by `claude-memory import
--copilot` into the database, where its prompt is found again.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest

from server.core.models.memories import MemoryFilter
from server.ingest.session_imports import NOT_YET, REFUSED
from server.service.memory import MemoryService
from tests.agent_clis import COPILOT_CACHE
from tests.chat_stream_stub import ScriptedChat
from tests.db_fixtures import TOKEN
from tests.integration.processes import cli_command, cli_json, completed


def copilot_env(agent_clis: Path, root: Path) -> dict[str, str]:
    """Copilot's environment: its home under `root`, offline, never updating itself."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COPILOT_", "XDG_"))}
    env.update(
        PATH=f"{agent_clis}{os.pathsep}{env.get('PATH', '')}",
        HOME=str(root / "home"),
        XDG_CACHE_HOME=str(COPILOT_CACHE),
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
    [backup] = [file["backup"] for file in connected["files"] if file["path"] == str(config)]
    assert json.loads(Path(backup).read_text()) == mine
    assert not [p for p in config.parent.iterdir() if ".bak-" in p.name]
    hooks = tmp_path / "home" / ".copilot" / "hooks" / "claude-memory.json"
    assert connected["hooks"] == ["SessionStart", "UserPromptSubmit", "Stop"]
    assert list(json.loads(hooks.read_text())["hooks"]) == connected["hooks"]
    instructions = tmp_path / "home" / ".copilot" / "copilot-instructions.md"
    assert not instructions.exists(), "the hooks bring the memory: no instructions block"

    removed = cli_json("disconnect", "copilot", env=env)
    listed = await asyncio.to_thread(completed, ["copilot", "mcp", "list"], env)
    assert removed["changed"] and json.loads(config.read_text()) == mine
    assert "claude-memory" not in listed and "notes" in listed
    assert not hooks.exists()


PNPM = "acme-api installs packages with pnpm: run pnpm add, never npm install."
QUESTION = "Which package manager does acme-api use for adding dependencies?"


async def test_a_real_copilot_run_gets_our_memory_from_our_hooks_and_searches_it(
    guarded_url: str,
    service: MemoryService,
    agent_clis: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="server.ingest.session_imports")
    env = {**copilot_env(agent_clis, tmp_path), "CLAUDE_MEMORY_TOKEN": TOKEN}
    # The server imports a session the Stop hook names only under Copilot's folder as its own
    # environment names it (docs/SECURITY.md, "Transcript paths sent by hooks").
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "home" / ".copilot"))
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
        command = [
            "copilot",
            "-p",
            "Which package manager does acme-api use for adding dependencies?",
        ]
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
    # SessionStart's context reaches the model as a user message before the prompt (prompt
    # recall then leaves out what the session was already given).
    said = [m["content"] for m in with_token[0]["messages"] if m["role"] == "user"]
    assert said[0].startswith("# Memory context: acme-api") and PNPM in said[0]
    assert said[-1].endswith(QUESTION)
    assert PNPM not in json.dumps(without_token), "without the token the hooks get nothing"
    results = [m for r in with_token for m in r["messages"] if m["role"] == "tool"]
    assert results and PNPM[:40] in json.dumps(results[-1])
    # The Stop hook names the session's events.jsonl. Copilot may run it before it has first
    # written that file: the server then answers "not_yet" (the next Stop or import run reads
    # it), else it imports what is there; which of the two happens is Copilot's timing, so
    # either is the server answering the hook (each order is asserted on its own in
    # test_a_copilot_stop_is_answered_not_yet_before_its_session_file_then_imported).
    # A "not_yet" is logged before the hook gets its answer, an import when it is done.
    answered = ("hook import of copilot session events.jsonl", "hook import of copilot session:")
    deadline = asyncio.get_running_loop().time() + 120
    while not any(line in r.getMessage() for r in caplog.records for line in answered):
        assert asyncio.get_running_loop().time() < deadline, "the Stop hook reached no import"
        await asyncio.sleep(0.2)


FIXTURE_SESSION = "a8678f2e-87b4-4a8e-8bc7-6d5454120560"
FIXTURES = Path(__file__).parents[1] / "fixtures" / "copilot" / "session-state"


async def test_a_copilot_stop_is_answered_not_yet_before_its_session_file_then_imported(
    app_url: str, service: MemoryService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "copilot"))
    events = tmp_path / "copilot" / "session-state" / FIXTURE_SESSION / "events.jsonl"
    elsewhere = tmp_path / "elsewhere" / "session-state" / FIXTURE_SESSION / "events.jsonl"
    shutil.copytree(FIXTURES / FIXTURE_SESSION, elsewhere.parent)
    stop = {"agent": "copilot", "session_id": FIXTURE_SESSION, "cwd": str(tmp_path)}

    async def copilot_memories() -> int:
        return (await service.list_memories(MemoryFilter(source="copilot"), limit=50)).total

    async with httpx.AsyncClient(base_url=app_url, timeout=30) as http:
        url = "/api/hooks/session-end"
        before = await http.post(url, json={**stop, "transcript_path": str(events)})
        outside = await http.post(url, json={**stop, "transcript_path": str(elsewhere)})
        held_before = await copilot_memories()
        shutil.copytree(FIXTURES / FIXTURE_SESSION, events.parent)
        after = await http.post(url, json={**stop, "transcript_path": str(events)})
        deadline = asyncio.get_running_loop().time() + 60
        while await copilot_memories() == 0:  # imported in the background
            assert asyncio.get_running_loop().time() < deadline, "the session was not imported"
            await asyncio.sleep(0.1)

    assert (before.status_code, before.json()) == (202, {"status": "not_yet", "message": NOT_YET})
    assert held_before == 0, "nothing is imported, or kept waiting, for a file not written yet"
    assert outside.status_code == 400 and outside.json()["error"]["message"] == REFUSED
    assert (after.status_code, after.json()["status"]) == (202, "importing")
    read = await service.list_memories(MemoryFilter(source="copilot"), limit=50)
    assert {m.session_id for m in read.memories} == {FIXTURE_SESSION}


DECISION = "Decision for acme-api: invoices are numbered per tenant, INV-<tenant>-<seq>."


async def test_a_real_copilot_session_is_imported_and_its_prompt_found(
    service: MemoryService, pg_url: str, agent_clis: Path, tmp_path: Path
) -> None:
    env = copilot_env(agent_clis, tmp_path)
    project = tmp_path / "acme-api"
    project.mkdir()
    (project / "invoices.ts").write_text("export const prefix = 'INV-';\n")

    def copilot_run(model: ScriptedChat) -> None:
        offline = {
            **env,
            "COPILOT_OFFLINE": "true",
            "COPILOT_PROVIDER_BASE_URL": model.base_url,
            "COPILOT_MODEL": "gpt-4o",
        }
        command = ["copilot", "-p", DECISION, "--allow-all-tools", "--no-auto-update"]
        completed(command, offline, cwd=project)

    with ScriptedChat([("bash", {"command": "ls"})], reply="Noted: INV-<tenant>-<seq>.") as model:
        await asyncio.to_thread(copilot_run, model)
    # Beside the session's folder Copilot keeps `.session-operation-locks/`.
    [events] = (tmp_path / "home" / ".copilot" / "session-state").glob("*/events.jsonl")
    ours = {
        **env,
        "CLAUDE_MEMORY_DATABASE_URL": pg_url,
        "CLAUDE_MEMORY_HOME": str(tmp_path / "claude-memory"),
        "CLAUDE_MEMORY_PORT": "1",  # no server to tell
    }
    imports = ["import", "--copilot", "--json", "--min-length", "0"]

    [first] = json.loads(await asyncio.to_thread(completed, cli_command(*imports), ours))
    [again] = json.loads(await asyncio.to_thread(completed, cli_command(*imports), ours))
    found = await service.search_hybrid(DECISION, limit=3)
    sessions = await service.list_memories(MemoryFilter(source="copilot"), limit=10)

    assert (first["source"], first["files_read"], first["malformed_lines"]) == ("copilot", 1, 0)
    assert (first["turns_imported"], first["prompts"], first["events"]) == (2, 1, 1)
    assert (again["turns_imported"], again["files_unchanged"]) == (0, 1)
    top = found.hits[0]
    assert (top.content, top.source, top.project) == (DECISION, "copilot", "acme-api")
    assert top.session_id == events.parent.name
    assert {m.content for m in sessions.memories} == {DECISION, "Noted: INV-<tenant>-<seq>."}
