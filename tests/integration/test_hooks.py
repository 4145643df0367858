"""Claude Code hooks end to end: the registered command, as a real process, against a real server.

Each test feeds a payload from shared/fixtures/hooks/ on stdin to the exact command
`install-hooks` writes into settings.json (run through the shell, as Claude Code does) and
checks what Claude Code would get: the nested `hookSpecificOutput` shape, within budget,
relevant, or nothing at all. The server runs in the test's event loop, so the hook processes
are started with asyncio and never waited on with blocking calls.
"""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from server.app import create_app
from server.core.config import Settings
from server.core.errors import InvalidInput
from server.core.models.memories import MemoryFilter
from server.domain.context import HEADER, INDEX_HEADING
from server.ingest.claude_code import CLAUDE_CODE
from server.ingest.session_imports import SessionImports, import_session
from server.jobs.hook_install import hook_command
from server.service.memory import MemoryService
from tests.db_fixtures import TOKEN, free_port, serving
from tests.fixture_sessions import S3, S3_FILE
from tests.integration.acme_facts import PROJECT_PATH, RATE_LIMIT, remember
from tests.integration.hook_runs import (
    HOOK_FIXTURES,
    HookRun,
    context_of,
    payload,
    run_hook,
    wait_for_turns,
)

UNRELATED_PROMPTS = [
    "write a haiku about autumn leaves",
    "what is the capital of France?",
    "let's refactor the CSS grid layout of the landing page",
]


async def test_session_start_prints_the_project_context_in_the_nested_shape(
    app_url: str, facts: dict[str, int]
) -> None:
    run = await run_hook("session-start", payload("SessionStart"), app_url)

    context = context_of(run, "SessionStart")
    assert "acme-api" in context
    assert f"#{facts['pnpm']}" in context
    assert HEADER in context
    # The fixture's wrong shape puts additionalContext at the top level: not what we print.
    wrong = json.loads(
        (HOOK_FIXTURES / "outputs" / "WRONG.top-level-additionalContext.json").read_text()
    )
    assert set(run.output()) != set(wrong)
    assert run.stderr == ""


async def test_prompt_hook_injects_the_relevant_memories_labelled_as_recalled_data(
    app_url: str, facts: dict[str, int]
) -> None:
    run = await run_hook("user-prompt-submit", payload("UserPromptSubmit"), app_url)

    context = context_of(run, "UserPromptSubmit")
    in_full = context.split(INDEX_HEADING)[0]  # the index beneath lists less close ones
    assert f"#{facts['rate_limit']}" in in_full
    assert HEADER in context
    assert f"#{facts['pagination']}" not in in_full
    valid = json.loads(
        (HOOK_FIXTURES / "outputs" / "UserPromptSubmit.additionalContext.json").read_text()
    )
    assert run.output()["hookSpecificOutput"].keys() == valid["hookSpecificOutput"].keys()


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("npm install fails here, which package manager should I use?", "pnpm"),
        ("how should I paginate GET /invoices, like the orders endpoint?", "pagination"),
    ],
)
async def test_prompt_hook_recalls_the_fixture_facts_for_related_prompts(
    app_url: str, facts: dict[str, int], prompt: str, expected: str
) -> None:
    run = await run_hook("user-prompt-submit", payload("UserPromptSubmit", prompt=prompt), app_url)

    context = context_of(run, "UserPromptSubmit")
    assert expected in context.lower()
    assert len(context) <= Settings().recall_max_chars


@pytest.mark.parametrize("prompt", UNRELATED_PROMPTS)
async def test_prompt_hook_shows_no_memory_in_full_when_nothing_is_relevant(
    app_url: str, facts: dict[str, int], prompt: str
) -> None:
    run = await run_hook("user-prompt-submit", payload("UserPromptSubmit", prompt=prompt), app_url)

    assert (run.returncode, run.stderr) == (0, "")
    # At most the index of less close candidates, for the agent to judge (#67).
    if run.stdout:
        in_full = context_of(run, "UserPromptSubmit").split(INDEX_HEADING)[0]
        assert not [line for line in in_full.splitlines() if line.startswith("- ")]


async def test_prompt_hook_never_injects_a_memory_twice_in_one_session(
    app_url: str, facts: dict[str, int]
) -> None:
    first = await run_hook("user-prompt-submit", payload("UserPromptSubmit"), app_url)
    again = await run_hook("user-prompt-submit", payload("UserPromptSubmit"), app_url)
    other_session = await run_hook(
        "user-prompt-submit", payload("UserPromptSubmit", session_id="another-session"), app_url
    )

    marker = f"#{facts['rate_limit']}"
    assert marker in context_of(first, "UserPromptSubmit")
    assert marker not in again.stdout
    assert marker in context_of(other_session, "UserPromptSubmit")


async def test_prompt_hook_skips_raw_turns_of_its_own_session(
    app_url: str, service: MemoryService
) -> None:
    own = await service.save(
        "Rate limiting on POST /invoices: per API key at 30/min, anonymous callers per IP.",
        project="acme-api",
        project_path=PROJECT_PATH,
        kind="raw",
        session_id=S3,
        role="assistant",
    )

    same = await run_hook("user-prompt-submit", payload("UserPromptSubmit"), app_url)
    other = await run_hook(
        "user-prompt-submit", payload("UserPromptSubmit", session_id="another-session"), app_url
    )

    assert same.stdout == ""
    assert f"#{own.id}" in context_of(other, "UserPromptSubmit")


async def test_prompt_hook_keeps_to_the_character_budget(
    service: MemoryService, settings: Settings
) -> None:
    detail = "The limiter keys each request by its x-api-key header, else by client IP. "
    # Six notes that differ by a word, not by a number: notes differing only by a number would
    # read as versions of one fact, and recall shows each fact once
    # (server/service/supersessions.py).
    for name in ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot"):
        await remember(service, f"{RATE_LIMIT} (note {name}) {detail * 20}")
    tight = replace(settings, recall_max_chars=1_000, recall_max_hits=3)

    async with serving(create_app(tight, service)) as url:
        run = await run_hook("user-prompt-submit", payload("UserPromptSubmit"), url)

    context = context_of(run, "UserPromptSubmit")
    assert len(context) <= 1_000
    # The three hits that share the budget, then those the room their statements saved holds.
    assert 3 <= context.count("\n- ") <= tight.recall_room_hits


async def test_session_end_imports_the_transcript_incrementally(
    app_url: str, service: MemoryService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))  # hooks name files under it only
    source = S3_FILE
    transcript = tmp_path / "projects" / "-home-dev-acme-api" / f"{S3}.jsonl"
    transcript.parent.mkdir(parents=True)
    lines = source.read_bytes().splitlines(keepends=True)
    transcript.write_bytes(b"".join(lines[: len(lines) // 2]))

    stop = await run_hook("stop", payload("Stop", transcript_path=str(transcript)), app_url)
    first = await wait_for_turns(service, S3)
    with transcript.open("ab") as out:
        out.write(b"".join(lines[len(lines) // 2 :]))
    end = await run_hook(
        "session-end", payload("SessionEnd", transcript_path=str(transcript)), app_url
    )
    second = await wait_for_turns(service, S3, first + 1)

    assert (stop.returncode, stop.stdout, end.returncode, end.stdout) == (0, "", 0, "")
    assert second > first
    state = await service.import_state()
    assert state.offsets[str(transcript)][0] > len(b"".join(lines[: len(lines) // 2]))


async def test_stopping_the_app_cancels_or_finishes_session_imports_without_loss(
    service: MemoryService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
    source = S3_FILE
    transcript = tmp_path / "projects" / "-home-dev-acme-api" / f"{S3}.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_bytes(source.read_bytes())

    cancelled = SessionImports(service)
    assert cancelled.request(CLAUDE_CODE, str(transcript)) == "importing"
    await cancelled.close(grace_seconds=0)
    with pytest.raises(InvalidInput, match="shutting down"):
        cancelled.request(CLAUDE_CODE, str(transcript))
    finished = SessionImports(service)
    assert finished.request(CLAUDE_CODE, str(transcript)) == "importing"
    await finished.close(grace_seconds=60)

    page = await service.list_memories(MemoryFilter(session_id=S3), limit=1)
    state = await service.import_state()
    assert page.total > 0
    # Read up to the end of the last complete line (the fixture ends in a half-written one).
    assert state.offsets[str(transcript)][0] == transcript.read_bytes().rindex(b"\n") + 1
    fresh = await import_session(service, transcript)
    assert fresh.turns_imported == 0


@pytest.mark.parametrize(
    "path",
    [
        "/etc/passwd",
        "relative/projects/x/s.jsonl",
        "/tmp/not-projects/x/s.jsonl",
        "/tmp/projects/x/" + "s" * 5_000 + ".jsonl",  # longer than any file name may be
    ],
)
async def test_session_end_route_refuses_files_that_are_not_transcripts(
    app_url: str, path: str
) -> None:
    async with httpx.AsyncClient(base_url=app_url, timeout=10) as http:
        response = await http.post("/api/hooks/session-end", json={"transcript_path": path})

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_input"


@pytest.mark.parametrize(
    ("event", "fixture"),
    [
        ("session-start", "SessionStart"),
        ("user-prompt-submit", "UserPromptSubmit"),
        ("pre-tool-use", "PreToolUse"),
        ("post-tool-use", "PostToolUse"),
        ("stop", "Stop"),
        ("session-end", "SessionEnd"),
    ],
)
async def test_hooks_exit_0_silently_when_the_server_is_down(event: str, fixture: str) -> None:
    """How fast the client gives up on a port nobody listens on is bench/hook_latency.py's
    `client alone` figure: a test asserting seconds fails on a busy machine."""
    run = await run_hook(event, payload(fixture), f"http://127.0.0.1:{free_port()}")

    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")


async def test_hooks_exit_0_silently_on_input_that_is_not_json(app_url: str) -> None:
    process = await asyncio.create_subprocess_shell(
        hook_command("user-prompt-submit", app_url),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate(b"{not json")

    assert (process.returncode, out, err) == (0, b"", b"")


async def test_hooks_send_the_token_from_the_environment(
    guarded_url: str, facts: dict[str, int]
) -> None:
    without = await run_hook("user-prompt-submit", payload("UserPromptSubmit"), guarded_url)
    with_token = await run_hook(
        "user-prompt-submit",
        payload("UserPromptSubmit"),
        guarded_url,
        env={"CLAUDE_MEMORY_TOKEN": TOKEN},
    )

    assert (without.returncode, without.stdout) == (0, "")
    assert f"#{facts['rate_limit']}" in context_of(with_token, "UserPromptSubmit")


async def test_cli_hook_command_runs_the_same_client(
    app_url: str, facts: dict[str, int], tmp_path: Path
) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "server.cli",
        "hook",
        "user-prompt-submit",
        "--url",
        app_url,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=tmp_path,
    )
    out, _ = await asyncio.wait_for(
        process.communicate(json.dumps(payload("UserPromptSubmit")).encode()), 60
    )

    run = HookRun(process.returncode or 0, out.decode(), "")
    assert f"#{facts['rate_limit']}" in context_of(run, "UserPromptSubmit")
