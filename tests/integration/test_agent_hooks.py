"""Our hooks in Codex and Gemini CLI: the installed command, as a real process, against a real
server.

`claude-memory connect` writes the hooks into a temporary `~/.codex/hooks.json` and
`~/.gemini/settings.json`; each test runs the command line it wrote for an event (through the
shell, as both agents do) with the payload that agent sends on stdin
(tests/fixtures/codex/hooks/, tests/fixtures/gemini/hooks/) and checks what the agent would
read on stdout: Codex's answers against the schemas Codex itself carries. The real agents
running these hooks end to end: test_agent_hook_clients.py.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest

from server.agents.registry import connect
from server.core.models.journal import JournalFilter
from server.core.models.memories import MemoryFilter
from server.domain.context import HEADER, INDEX_HEADING
from server.jobs.hook_install import is_ours
from server.service.memory import MemoryService
from tests.db_fixtures import free_port
from tests.integration.acme_facts import FORCE_PUSH, STAGING, remember
from tests.integration.hook_runs import HookRun, run_command, wait_for_turns

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SCHEMAS = FIXTURES / "codex" / "hook_schemas"
NOW = datetime(2026, 8, 22, 12, 0, tzinfo=UTC)
CODEX_SESSION = "019b2f4e-8a31-7c52-9d1e-4f6a8b0c2d13"
GEMINI_SESSION = "7c2e91ab-4f3d-4b8e-9a61-2d5c8e0f1b37"
ROLLOUT = f"sessions/2026/04/20/rollout-2026-04-20T11-12-03-{CODEX_SESSION}.jsonl"
GEMINI_FILE = "tmp/acme-api/chats/session-2026-05-04T09-12-7c2e91ab.jsonl"
CODEX_OUTPUT_SCHEMAS = {
    "SessionStart": "session-start",
    "UserPromptSubmit": "user-prompt-submit",
    "PreToolUse": "pre-tool-use",
}


def commands(agent: str, url: str, home: Path) -> dict[str, str]:
    """The command line `connect` registered for each of the agent's events."""
    connect(
        agent,
        url,
        use_token=False,
        environ={"CLAUDE_MEMORY_HOME": str(home / "claude-memory-data")},
        home=home,
        now=NOW,
    )
    path = home / (".codex/hooks.json" if agent == "codex" else ".gemini/settings.json")
    data = json.loads(path.read_text())
    return {
        event: handler["command"]
        for event, groups in data["hooks"].items()
        for group in groups
        for handler in group["hooks"]
        if is_ours(handler)
    }


def payload(agent: str, event: str, **changes: Any) -> dict[str, Any]:
    data = json.loads((FIXTURES / agent / "hooks" / f"{event}.json").read_text())
    assert isinstance(data, dict)
    return {**data, **changes}


def codex_answer(run: HookRun, event: str) -> dict[str, Any]:
    """Codex's reading of the output: one JSON object its schema for `event` accepts."""
    output = run.output()
    schema = json.loads(
        (SCHEMAS / f"{CODEX_OUTPUT_SCHEMAS[event]}.command.output.schema.json").read_text()
    )
    jsonschema.Draft7Validator(schema).validate(output)
    specific: dict[str, Any] = output["hookSpecificOutput"]
    assert specific["hookEventName"] == event
    return specific


def gemini_context(run: HookRun, event: str) -> str:
    output = run.output()
    assert set(output) == {"hookSpecificOutput"}
    assert output["hookSpecificOutput"]["hookEventName"] == event
    context = output["hookSpecificOutput"]["additionalContext"]
    assert isinstance(context, str) and 0 < len(context) < 10_000
    return context


@pytest.fixture
def codex_hooks(app_url: str, tmp_path: Path) -> dict[str, str]:
    return commands("codex", app_url, tmp_path / "codex-user")


@pytest.fixture
def gemini_hooks(app_url: str, tmp_path: Path) -> dict[str, str]:
    return commands("gemini", app_url, tmp_path / "gemini-user")


# --- context ----------------------------------------------------------------------------------


async def test_codex_prompt_hook_returns_recall_in_the_shape_codex_accepts(
    codex_hooks: dict[str, str], facts: dict[str, int]
) -> None:
    run = await run_command(codex_hooks["UserPromptSubmit"], payload("codex", "UserPromptSubmit"))

    context = codex_answer(run, "UserPromptSubmit")["additionalContext"]
    assert f"#{facts['rate_limit']}" in context and HEADER in context
    assert f"#{facts['pagination']}" not in context
    assert run.stderr == ""


async def test_codex_session_start_returns_the_projects_startup_context(
    codex_hooks: dict[str, str], facts: dict[str, int]
) -> None:
    run = await run_command(codex_hooks["SessionStart"], payload("codex", "SessionStart"))

    context = codex_answer(run, "SessionStart")["additionalContext"]
    assert "acme-api" in context and f"#{facts['pnpm']}" in context


async def test_gemini_before_agent_returns_recall_as_additional_context(
    gemini_hooks: dict[str, str], facts: dict[str, int]
) -> None:
    run = await run_command(gemini_hooks["BeforeAgent"], payload("gemini", "BeforeAgent"))

    context = gemini_context(run, "BeforeAgent")
    assert f"#{facts['rate_limit']}" in context and HEADER in context


async def test_gemini_session_start_returns_the_projects_startup_context(
    gemini_hooks: dict[str, str], facts: dict[str, int]
) -> None:
    run = await run_command(gemini_hooks["SessionStart"], payload("gemini", "SessionStart"))

    assert f"#{facts['pnpm']}" in gemini_context(run, "SessionStart")


async def test_prompt_hooks_show_no_memory_in_full_when_nothing_is_relevant(
    codex_hooks: dict[str, str], gemini_hooks: dict[str, str], facts: dict[str, int]
) -> None:
    prompt = "write a haiku about autumn leaves"
    codex = await run_command(
        codex_hooks["UserPromptSubmit"], payload("codex", "UserPromptSubmit", prompt=prompt)
    )
    gemini = await run_command(
        gemini_hooks["BeforeAgent"], payload("gemini", "BeforeAgent", prompt=prompt)
    )

    assert (codex.returncode, gemini.returncode) == (0, 0)
    # At most the index of less close candidates, for the agent to judge (#67).
    for run in (codex, gemini):
        if run.stdout:
            context = json.loads(run.stdout)["hookSpecificOutput"]["additionalContext"]
            in_full = context.split(INDEX_HEADING)[0]
            assert not [line for line in in_full.splitlines() if line.startswith("- ")]


# --- lessons ----------------------------------------------------------------------------------


def shell(agent: str, event: str, command: str) -> dict[str, Any]:
    data = payload(agent, event)
    return {**data, "tool_input": {**data["tool_input"], "command": command}}


async def test_codex_lesson_warns_before_a_matching_shell_call_and_is_silent_for_others(
    codex_hooks: dict[str, str], service: MemoryService
) -> None:
    lesson = await service.add_lesson(STAGING)

    warned = await run_command(
        codex_hooks["PreToolUse"], shell("codex", "PreToolUse", "k6 run --env staging")
    )
    quiet = await run_command(codex_hooks["PreToolUse"], shell("codex", "PreToolUse", "pnpm test"))

    said = codex_answer(warned, "PreToolUse")
    assert STAGING.message in said["additionalContext"]
    assert f"lesson #{lesson.id}" in said["additionalContext"]
    assert "permissionDecision" not in said
    assert (quiet.returncode, quiet.stdout) == (0, "")


async def test_codex_strict_lesson_denies_the_call_with_the_lesson_as_reason(
    codex_hooks: dict[str, str], service: MemoryService
) -> None:
    lesson = await service.add_lesson(FORCE_PUSH)

    run = await run_command(
        codex_hooks["PreToolUse"], shell("codex", "PreToolUse", "git push origin main --force")
    )

    said = codex_answer(run, "PreToolUse")
    assert said["permissionDecision"] == "deny"
    reason = f"[lesson #{lesson.id}, by you] {FORCE_PUSH.message}"
    assert said["permissionDecisionReason"].startswith(reason)


async def test_gemini_shell_call_meets_a_bash_lesson_after_the_call(
    gemini_hooks: dict[str, str], service: MemoryService
) -> None:
    await service.add_lesson(STAGING)

    before = await run_command(
        gemini_hooks["BeforeTool"], shell("gemini", "BeforeTool", "k6 run --env staging")
    )
    after = await run_command(
        gemini_hooks["AfterTool"], shell("gemini", "AfterTool", "k6 run --env staging")
    )
    other = await run_command(gemini_hooks["AfterTool"], shell("gemini", "AfterTool", "pnpm test"))

    assert (before.returncode, before.stdout) == (0, "")  # a warning does not stop the call
    assert STAGING.message in gemini_context(after, "AfterTool")
    assert (other.returncode, other.stdout) == (0, "")


async def test_gemini_strict_lesson_stops_the_call_with_the_lesson_as_reason(
    gemini_hooks: dict[str, str], service: MemoryService
) -> None:
    lesson = await service.add_lesson(FORCE_PUSH)

    run = await run_command(
        gemini_hooks["BeforeTool"], shell("gemini", "BeforeTool", "git push -f origin main")
    )

    output = run.output()
    assert output["decision"] == "deny"
    assert output["reason"].startswith(f"[lesson #{lesson.id}, by you] {FORCE_PUSH.message}")


# --- capture ----------------------------------------------------------------------------------


async def test_codex_tool_hook_journals_the_call_under_codexs_own_name(
    codex_hooks: dict[str, str], service: MemoryService
) -> None:
    await remember(service, "acme-api uses pnpm.")  # makes acme-api a known project

    run = await run_command(codex_hooks["PostToolUse"], payload("codex", "PostToolUse"))

    page = await service.journal(JournalFilter(session_id=CODEX_SESSION), limit=10)
    [call] = [call for entry in page.entries for call in entry.calls]
    assert (run.returncode, run.stdout) == (0, "")
    assert (call.tool_use_id, call.tool, call.success) == (
        "call_Q2mN8vR4xT1pL6sK0dF3hJ9a",
        "Bash",
        True,
    )
    assert "pnpm add @fastify/rate-limit" in (call.target or "")
    assert "@fastify/rate-limit 10.2.1" in (call.output_preview or "")
    assert page.entries[0].project == "acme-api"


async def test_codex_stop_imports_the_rollout_in_the_background(
    codex_hooks: dict[str, str],
    service: MemoryService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / ".codex"))  # hooks name files under it only
    rollout = tmp_path / ".codex" / ROLLOUT
    rollout.parent.mkdir(parents=True)
    shutil.copy(FIXTURES / "codex" / ROLLOUT, rollout)

    stop = await run_command(
        codex_hooks["Stop"], payload("codex", "Stop", transcript_path=str(rollout))
    )
    turns = await wait_for_turns(service, CODEX_SESSION)

    assert (stop.returncode, stop.stdout) == (0, "")
    page = await service.list_memories(MemoryFilter(session_id=CODEX_SESSION), limit=1)
    assert page.memories[0].source == "codex" and turns >= 2
    state = await service.import_state()
    assert state.offsets[str(rollout)][0] > 0  # the hourly import resumes from there


async def test_gemini_turn_end_imports_the_session_with_its_sub_agents(
    gemini_hooks: dict[str, str],
    service: MemoryService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path))  # hooks name files under it only
    gemini = Path(shutil.copytree(FIXTURES / "gemini", tmp_path / ".gemini"))
    session = gemini / GEMINI_FILE

    end = await run_command(
        gemini_hooks["AfterAgent"], payload("gemini", "AfterAgent", transcript_path=str(session))
    )
    await wait_for_turns(service, GEMINI_SESSION)

    assert (end.returncode, end.stdout) == (0, "")
    state = await service.import_state()
    sub_agent = next((session.parent / GEMINI_SESSION).iterdir())
    deadline = time.monotonic() + 60
    while str(sub_agent) not in state.offsets:  # imported after the main file, same task
        assert time.monotonic() < deadline
        await asyncio.sleep(0.1)
        state = await service.import_state()
    page = await service.list_memories(MemoryFilter(session_id=GEMINI_SESSION), limit=1)
    assert page.memories[0].source == "gemini"


@pytest.mark.parametrize(
    ("agent", "path"),
    [
        ("codex", "/etc/passwd"),
        ("codex", "/tmp/sessions/2026/04/20/notes.jsonl"),
        ("codex", "/tmp/not-sessions/2026/04/20/rollout-x.jsonl"),
        ("gemini", "/tmp/x/chats/notes.jsonl"),
        ("gemini", "/home/dev/.claude/projects/p/s.jsonl"),
        ("gemini", "relative/chats/session-x.jsonl"),
    ],
)
async def test_session_end_refuses_files_that_are_not_the_agents_sessions(
    app_url: str, agent: str, path: str
) -> None:
    async with httpx.AsyncClient(base_url=app_url, timeout=10) as http:
        response = await http.post(
            "/api/hooks/session-end", json={"transcript_path": path, "agent": agent}
        )

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_input"


# --- the server is down -----------------------------------------------------------------------


@pytest.mark.parametrize(("agent", "events"), [
    ("codex", ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop",
               "SessionEnd"]),
    ("gemini", ["SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent",
                "SessionEnd"]),
])  # fmt: skip
async def test_every_hook_exits_0_silently_when_the_server_is_down(
    agent: str, events: list[str], tmp_path: Path
) -> None:
    """How fast the client gives up on a port nobody listens on is bench/hook_latency.py's
    `client alone` figure: a test asserting seconds fails on a busy machine."""
    installed = commands(agent, f"http://127.0.0.1:{free_port()}", tmp_path)

    runs = [await run_command(installed[event], payload(agent, event)) for event in events]

    assert sorted(installed) == sorted(events)
    assert [(r.returncode, r.stdout, r.stderr) for r in runs] == [(0, "", "")] * len(events)


async def test_a_background_agent_import_forgets_its_file_when_done(
    service: MemoryService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server keeps a session file's agent and id only while it is queued or imported; it
    used to keep one entry per session file for the life of the server."""
    from server.ingest.codex import CODEX
    from server.ingest.session_imports import SessionImports

    rollout = tmp_path / ".codex" / ROLLOUT
    rollout.parent.mkdir(parents=True)
    shutil.copy(FIXTURES / "codex" / ROLLOUT, rollout)
    imports = SessionImports(service)
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / ".codex"))

    started = imports.request(CODEX, str(rollout), CODEX_SESSION)
    turns = await wait_for_turns(service, CODEX_SESSION)
    await imports.close()

    assert started == "importing" and turns >= 2
    assert imports._sessions == {}
