"""OpenCode as the fourth agent, driven through its own CLI (opencode-ai, tests/agent_clis.py).

Its sessions are written by the CLI itself (`opencode import` of the fixtures' exports, the
same rows a live session writes; tests/fixtures/opencode/README.md), then imported with the one
importer: with their agent as source, once, and found by search. `claude-memory connect
opencode` registers the server where OpenCode's own `mcp list` connects to it, with the token
from its environment, and installs our plugin: in a real `opencode run` (against
tests/chat_stream_stub.py) the model gets the memory relevant to the prompt, a strict lesson
stops a tool call, and the session is imported when it goes idle.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from server.core.models.lessons import LessonDraft
from server.core.models.memories import MemoryFilter
from server.ingest.importer import ImportFilters, SessionImporter
from server.ingest.opencode import OPENCODE, discover_opencode_sessions, read_opencode_session
from server.service.memory import MemoryService
from tests.chat_stream_stub import MODEL, ScriptedChat
from tests.db_fixtures import TOKEN
from tests.integration.processes import cli_json, completed
from tests.opencode_sessions import EXPORTS, MAIN_SESSION, load_exports


def opencode_env(agent_clis: Path, root: Path) -> dict[str, str]:
    """OpenCode's environment, every folder it uses under `root`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "OPENCODE"))}
    env.update(
        PATH=f"{agent_clis}{os.pathsep}{env.get('PATH', '')}",
        HOME=str(root / "home"),
        XDG_DATA_HOME=str(root / "data"),
        XDG_CONFIG_HOME=str(root / "config"),
        XDG_CACHE_HOME=str(root / "cache"),
        XDG_STATE_HOME=str(root / "state"),
        OPENCODE_DISABLE_AUTOUPDATE="1",
        NO_COLOR="1",
    )
    return env


def opencode(*args: str, env: dict[str, str], cwd: Path | None = None) -> str:
    return _run(["opencode", *args], env, cwd)


def _run(command: list[str], env: dict[str, str], cwd: Path | None) -> str:
    if cwd is not None:
        env = {**env, "PWD": str(cwd)}  # OpenCode takes its folder from PWD, as a shell sets it
    return completed(command, env, cwd, timeout=120)


@pytest.fixture
def opencode_data(agent_clis: Path, tmp_path: Path) -> Path:
    """OpenCode's data folder after its own CLI imported the fixtures' sessions, run in the
    project's folder (`opencode import` files a session under the folder it runs in)."""
    env = opencode_env(agent_clis, tmp_path)
    project = tmp_path / "acme-api"
    project.mkdir()
    for export in EXPORTS:
        assert "Imported session" in opencode("import", str(export), env=env, cwd=project)
    return tmp_path / "data" / "opencode"


def test_the_database_the_cli_writes_reads_as_the_tests_write_it(
    opencode_data: Path, tmp_path: Path
) -> None:
    loaded = load_exports(tmp_path / "loaded" / "opencode.db", directory=str(tmp_path / "acme-api"))

    written = discover_opencode_sessions(opencode_data)
    assert [f.path.parent.name for f in written] == ["opencode.db"] * 2
    for found in written:
        by_cli = read_opencode_session(found.path)
        by_tests = read_opencode_session(loaded / found.path.name)
        assert by_cli.turns == by_tests.turns and by_cli.events == by_tests.events
        assert (by_cli.skipped, by_cli.prompts) == (by_tests.skipped, by_tests.prompts)
        assert found.size == by_cli.end_offset


async def test_opencode_sessions_import_once_with_their_agent_as_source(
    service: MemoryService, opencode_data: Path
) -> None:
    def importer() -> SessionImporter:
        return SessionImporter(service, ImportFilters(), agent=OPENCODE)

    first = (await importer().run(opencode_data)).as_json()
    again = (await importer().run(opencode_data)).as_json()

    assert first["errors"] == [] and first["source"] == "opencode"
    assert (first["turns_imported"], first["events"], first["prompts"]) == (6, 5, 3)
    assert first["sessions"] == 1, "the sub-agent's session belongs to its caller's"
    assert (again["turns_imported"], again["events"], again["prompts"]) == (0, 0, 0)
    turns = await service.list_memories(MemoryFilter(kind="raw"), limit=50)
    assert {(m.source, m.project, m.session_id) for m in turns.memories} == {
        ("opencode", "acme-api", MAIN_SESSION)
    }
    [session] = (await service.sessions()).sessions
    assert (session.source, session.session_id) == ("opencode", MAIN_SESSION)

    found = await service.search_hybrid("how is POST /invoices rate limited?", limit=3)
    assert {hit.source for hit in found.hits} == {"opencode"}
    assert any("per API key, 30 requests a minute" in hit.content for hit in found.hits)


async def test_connect_opencode_is_listed_connected_by_opencode_itself(
    guarded_url: str, agent_clis: Path, tmp_path: Path
) -> None:
    env = {**opencode_env(agent_clis, tmp_path), "CLAUDE_MEMORY_TOKEN": TOKEN}
    config = tmp_path / "config" / "opencode" / "opencode.json"
    config.parent.mkdir(parents=True)
    mine = {"$schema": "https://opencode.ai/config.json", "share": "disabled"}
    config.write_text(json.dumps(mine, indent=2) + "\n")

    connected = await asyncio.to_thread(
        cli_json, "connect", "opencode", "--url", guarded_url, env=env
    )
    listed = await asyncio.to_thread(opencode, "mcp", "list", env=env)
    tokenless = await asyncio.to_thread(
        opencode, "mcp", "list", env={**env, "CLAUDE_MEMORY_TOKEN": ""}
    )
    again = await asyncio.to_thread(cli_json, "connect", "opencode", "--url", guarded_url, env=env)

    assert connected["changed"] and connected["agent_version"] == "1.18.33"
    line = next(line for line in listed.splitlines() if "claude-memory" in line)
    assert "connected" in line.lower() and "failed" not in line.lower(), listed
    bad = next(line for line in tokenless.splitlines() if "claude-memory" in line)
    assert "failed" in bad.lower() and "401" in tokenless, tokenless
    assert TOKEN not in config.read_text()
    assert not again["changed"]
    [backup] = [file["backup"] for file in connected["files"] if file["path"] == str(config)]
    assert json.loads(Path(backup).read_text()) == mine
    assert not [p for p in config.parent.iterdir() if ".bak-" in p.name]

    removed = cli_json("disconnect", "opencode", env=env)
    assert removed["changed"] and json.loads(config.read_text()) == mine
    assert "claude-memory" not in await asyncio.to_thread(opencode, "mcp", "list", env=env)


async def test_connect_opencode_adds_a_recall_subagent_opencode_lists_and_disconnect_removes(
    guarded_url: str, agent_clis: Path, tmp_path: Path
) -> None:
    """Listed by OpenCode's own `agent list`; not run: that needs a model (#67)."""
    env = {**opencode_env(agent_clis, tmp_path), "CLAUDE_MEMORY_TOKEN": TOKEN}
    agent = tmp_path / "config" / "opencode" / "agents" / "claude-memory-recall.md"

    await asyncio.to_thread(cli_json, "connect", "opencode", "--url", guarded_url, env=env)
    listed = await asyncio.to_thread(opencode, "agent", "list", env=env)
    await asyncio.to_thread(cli_json, "disconnect", "opencode", env=env)
    after = await asyncio.to_thread(opencode, "agent", "list", env=env)

    assert "claude-memory-recall (subagent)" in listed
    assert "claude-memory-recall" not in after
    assert not agent.exists()


DECISION = (
    "Decision: POST /invoices is rate limited per API key, 30 requests a minute; calls "
    "without a key fall back to a per-IP bucket."
)
LESSON = "acme-api installs packages with pnpm: run pnpm add, never npm install"


async def test_our_plugin_brings_memory_and_lessons_into_a_real_opencode_run(
    guarded_url: str,
    service: MemoryService,
    agent_clis: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    env = {**opencode_env(agent_clis, tmp_path), "CLAUDE_MEMORY_TOKEN": TOKEN}
    # The server reads a session the idle hook names only under OpenCode's folder as its own
    # environment names it (docs/SECURITY.md, "Transcript paths sent by hooks").
    monkeypatch.setenv("XDG_DATA_HOME", env["XDG_DATA_HOME"])
    project = tmp_path / "acme-api"
    project.mkdir()
    await service.save(DECISION, project="acme-api", project_path=str(project), kind="distilled")
    await service.add_lesson(
        LessonDraft(pattern="npm install", message=LESSON, tool="Bash", strictness="ask")
    )
    prompt = "Add the per API key rate limit to POST /invoices, 30 requests a minute."
    npm = ("bash", {"command": "npm install express-rate-limit", "description": "Install it"})
    with ScriptedChat([npm], reply="Stopped: this repo uses pnpm.") as model:
        config = tmp_path / "config" / "opencode" / "opencode.json"
        config.parent.mkdir(parents=True)
        provider = {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Stub",
            "options": {"baseURL": model.base_url, "apiKey": "unused"},
            "models": {MODEL: {"name": MODEL, "tool_call": True}},
        }
        config.write_text(json.dumps({"provider": {"stub": provider}, "model": f"stub/{MODEL}"}))
        connected = await asyncio.to_thread(
            cli_json, "connect", "opencode", "--url", guarded_url, env=env
        )
        await asyncio.to_thread(opencode, "run", prompt, env=env, cwd=project)
        requests = list(model.requests)

    assert connected["hooks"] == [
        "experimental.chat.messages.transform",
        "tool.execute.before",
        "tool.execute.after",
        "session.idle",
    ]
    with_tools = [r for r in requests if r.get("tools")]
    assert len(with_tools) == 2, "the call, then the answer after its result"
    first_prompt = json.dumps([m for m in with_tools[0]["messages"] if m["role"] == "user"])
    assert prompt in first_prompt and "per API key, 30 requests a minute" in first_prompt
    told = [  # what memory added goes with its prompt on every model call, and only once
        json.dumps([m for m in r["messages"] if m["role"] == "user"]).count(DECISION[-40:])
        for r in with_tools
    ]
    assert told[0] >= 1 and told == [told[0]] * len(told)
    [result] = [m for m in with_tools[1]["messages"] if m["role"] == "tool"]
    assert LESSON in json.dumps(result) and "strict lesson from claude-memory" in json.dumps(result)

    # The session goes idle at the end of the run: the plugin has it imported at once.
    for _ in range(600):  # a deadline for a loaded machine, not a bound the test asserts
        turns = await service.list_memories(MemoryFilter(kind="raw", source="opencode"), limit=50)
        if any(prompt in m.content for m in turns.memories):
            break
        await asyncio.sleep(0.2)
    # (`opencode run` stores a message given on its command line in quotes)
    assert any(prompt in m.content for m in turns.memories)
    assert {m.project for m in turns.memories} == {"acme-api"}
