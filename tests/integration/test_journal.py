"""The tool-call journal: filled by imports and by the real hook command, read over every way in.

Hook tests run the command `install-hooks` registers, through the shell, with Claude Code's
JSON on stdin (shared/fixtures/hooks/), against a live server; imports read the fixture
transcripts. Where a fixture payload's prompt_id differs from its transcript's promptId (the
fixtures were written by hand), the test sends the transcript's, as Claude Code does.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from fastmcp import Client

from server.core.access import acting_as
from server.core.models.journal import JournalCall, JournalFilter, JournalPage, SessionEvent
from server.ingest.importer import ImportFilters, SessionImporter
from server.ingest.session_imports import import_session
from server.service.memory import MemoryService
from tests.fixture_sessions import CLAUDE_PROJECTS, S3, S3_FILE
from tests.integration.hook_runs import payload, run_hook
from tests.transcripts import SessionWriter

WRITE_CALL = "toolu_01TiR1Yvl3stIlM7HFwpzrna"  # S3's Write of src/lib/rate-limit.ts
WRITE_PROMPT = "fe9979a8-db95-422f-960d-6b3455c77d49"  # its prompt: "no — per API key ..."
REJECTED_CALL = "toolu_01UPPmEQJCxAscq7E4UDwbGN"  # a Bash call the user rejected (3f6c2a1e)


def calls_of(page: JournalPage) -> dict[str, JournalCall]:
    return {call.tool_use_id: call for entry in page.entries for call in entry.calls}


async def call_rows(service: MemoryService, tool_use_id: str) -> int:
    async with service.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT count(*) FROM session_events WHERE tool_use_id = %s", (tool_use_id,)
        )
        row = await cur.fetchone()
        return int(row[0]) if row else 0


async def prompt_rows(service: MemoryService, session_id: str, key: str) -> int:
    async with service.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT count(*) FROM journal_prompts WHERE session_id = %s AND prompt_key = %s",
            (session_id, key),
        )
        row = await cur.fetchone()
        return int(row[0]) if row else 0


async def test_an_import_journals_each_prompt_with_the_calls_that_followed_it(
    service: MemoryService,
) -> None:
    await SessionImporter(service, ImportFilters()).run(CLAUDE_PROJECTS)

    page = await service.journal(JournalFilter(session_id=S3), limit=200)

    entry = next(e for e in page.entries if any(c.tool_use_id == WRITE_CALL for c in e.calls))
    assert entry.prompt_key == WRITE_PROMPT
    assert entry.prompt is not None and "per API key" in entry.prompt
    write = calls_of(page)[WRITE_CALL]
    assert write.tool == "Write" and write.success is True
    assert write.target is not None and write.target.endswith("src/lib/rate-limit.ts")
    assert all(e.session_id == S3 and e.project == "acme-api" for e in page.entries)


async def test_failed_calls_are_found_with_their_error(service: MemoryService) -> None:
    await SessionImporter(service, ImportFilters()).run(CLAUDE_PROJECTS)

    failed = await service.journal(JournalFilter(failed_only=True), limit=100)

    rejected = calls_of(failed)[REJECTED_CALL]
    assert rejected.success is False and rejected.error
    assert all(call.success is False for call in calls_of(failed).values())
    bash = await service.journal(JournalFilter(tool="bash", failed_only=True), limit=100)
    assert REJECTED_CALL in calls_of(bash)
    assert {call.tool for call in calls_of(bash).values()} == {"Bash"}


async def test_hooks_then_an_import_of_the_same_session_journal_each_call_once(
    app_url: str, service: MemoryService, tmp_path: Path
) -> None:
    prompt = payload("UserPromptSubmit", prompt_id=WRITE_PROMPT)
    call = payload("PostToolUse", prompt_id=WRITE_PROMPT)

    prompt_run = await run_hook("user-prompt-submit", prompt, app_url)
    call_run = await run_hook("post-tool-use", call, app_url)
    live = calls_of(await service.journal(JournalFilter(session_id=S3)))
    transcript = tmp_path / "projects" / "-home-dev-acme-api" / f"{S3}.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_bytes(S3_FILE.read_bytes())
    await import_session(service, transcript)
    after = await service.journal(JournalFilter(session_id=S3), limit=200)

    assert (prompt_run.returncode, call_run.returncode, call_run.stdout) == (0, 0, "")
    assert live[WRITE_CALL].success is True and live[WRITE_CALL].target
    assert live[WRITE_CALL].output_preview
    assert await call_rows(service, WRITE_CALL) == 1
    assert await prompt_rows(service, S3, WRITE_PROMPT) == 1
    entry = next(e for e in after.entries if e.prompt_key == WRITE_PROMPT)
    assert [c.tool_use_id for c in entry.calls].count(WRITE_CALL) == 1
    assert len(calls_of(after)) > 1  # the import added the calls the hooks never saw


async def test_an_import_for_nobody_leaves_the_calls_of_the_sessions_owner_alone(
    service: MemoryService, tmp_path: Path
) -> None:
    # Calls, sessions and read positions are keyed per owner (migrations 017 and 025): an
    # import without --user has its own rows and never writes into a user's, whatever session
    # id its file carries (#54); the user's own import completes theirs.
    session = "0a1e5e55-0000-4000-8000-000000000017"
    writer = SessionWriter(session).prompt("build it, then run the tests and the linter")
    writer.call("toolu_build", "Bash", {"command": "make build"}, message_id="m-1")
    writer.result("toolu_build", "built")
    writer.call("toolu_test", "Bash", {"command": "make test"}, message_id="m-2")
    transcript = writer.write(tmp_path / "projects")
    alice, _ = await service.users.add("alice")
    with acting_as(service.users.viewer(alice.user)):
        await import_session(service, transcript)
        lint = SessionEvent(
            session, None, None, "toolu_lint", "Bash", "make lint", True, datetime.now(UTC), ""
        )
        await service.record_calls([lint])  # her PostToolUse hook, before the file has it
    writer.result("toolu_test", "12 passed")
    writer.call("toolu_lint", "Bash", {"command": "make lint"}, message_id="m-3")
    writer.result("toolu_lint", "lint ok")
    writer.write(tmp_path / "projects")

    await import_session(service, transcript)  # acting for nobody, as the hourly import does
    untouched = await call_owners(service, session)
    with acting_as(service.users.viewer(alice.user)):
        await import_session(service, transcript)  # hers: from where her import stopped
    completed = await call_owners(service, session)

    me = alice.user.id
    assert untouched == [
        ("toolu_build", me, True, True),
        ("toolu_build", None, True, True),
        ("toolu_lint", me, True, False),
        ("toolu_lint", None, True, True),
        ("toolu_test", me, None, True),
        ("toolu_test", None, True, True),
    ]
    assert completed == [
        ("toolu_build", me, True, True),
        ("toolu_build", None, True, True),
        ("toolu_lint", me, True, True),
        ("toolu_lint", None, True, True),
        ("toolu_test", me, True, True),
        ("toolu_test", None, True, True),
    ]


async def call_owners(service: MemoryService, session: str) -> list[tuple[Any, ...]]:
    """(tool_use_id, owner, success, from a transcript) of each journaled call of `session`."""
    async with service.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT tool_use_id, owner_id, success, record_uuid IS NOT NULL FROM session_events"
            " WHERE session_id = %s ORDER BY tool_use_id, owner_id NULLS LAST",
            (session,),
        )
        return await cur.fetchall()


async def test_a_failure_hook_journals_the_call_as_failed(
    app_url: str, service: MemoryService
) -> None:
    failure = payload(
        "PostToolUse",
        hook_event_name="PostToolUseFailure",
        tool_name="Bash",
        tool_use_id="toolu_failure_01",
        tool_input={"command": "pnpm test -- --run"},
        error="Exit code 1: 2 tests failed",
        is_interrupt=False,
    )
    failure.pop("tool_response")

    run = await run_hook("post-tool-use-failure", failure, app_url)
    failed = calls_of(await service.journal(JournalFilter(tool="Bash", failed_only=True)))

    assert run.returncode == 0 and run.stdout == ""
    assert failed["toolu_failure_01"].error == "Exit code 1: 2 tests failed"
    assert failed["toolu_failure_01"].target == "pnpm test -- --run"


async def test_hook_calls_are_redacted_and_bounded(app_url: str, service: MemoryService) -> None:
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    call = payload(
        "PostToolUse",
        tool_name="Bash",
        tool_use_id="toolu_secret_01",
        tool_input={"command": f"curl -H 'Authorization: token {secret}' https://api.github.com"},
        tool_response={"stdout": "x" * 500_000 + secret, "stderr": "", "interrupted": False},
    )

    await run_hook("post-tool-use", call, app_url)
    stored = calls_of(await service.journal(JournalFilter(session_id=S3)))["toolu_secret_01"]

    assert stored.target is not None and secret not in stored.target
    assert "[REDACTED" in stored.target
    assert stored.output_preview is not None and len(stored.output_preview) <= 400


async def test_rest_and_mcp_answer_journal_questions(app_url: str, service: MemoryService) -> None:
    await SessionImporter(service, ImportFilters()).run(CLAUDE_PROJECTS)

    async with httpx.AsyncClient(base_url=app_url) as http:
        rest = (await http.get("/api/journal", params={"failed": "true", "limit": 50})).json()
        by_prompt = (await http.get("/api/journal", params={"query": "per API key"})).json()
    async with Client(f"{app_url}/mcp") as mcp:
        result = await mcp.call_tool("journal", {"project": "ACME-API", "failed": True})
    tool: dict[str, Any] = result.structured_content or {}

    rest_ids = {c["tool_use_id"] for e in rest["entries"] for c in e["calls"]}
    assert REJECTED_CALL in rest_ids
    assert all(c["success"] is False for e in rest["entries"] for c in e["calls"])
    assert any(e["prompt_key"] == WRITE_PROMPT for e in by_prompt["entries"])
    assert REJECTED_CALL in {c["tool_use_id"] for e in tool["entries"] for c in e["calls"]}
