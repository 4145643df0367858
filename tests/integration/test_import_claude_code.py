"""Importing the Claude Code fixtures into the real database, turn by turn, and incrementally."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from server.ingest.importer import ImportFilters, ImportSummary, SessionImporter
from server.service.memory import MemoryService
from tests.fixture_sessions import CLAUDE_PROJECTS, S1, S2, S3, S4

S2_AGENT = "a3f9c1e27b6d40581"
S4_AGENT = "1f2e3d4c"

# (line, role, a phrase from the turn) per session file, with the default --min-length 50.
EXPECTED: dict[tuple[str, str | None], list[tuple[int, str, str]]] = {
    (S1, None): [
        (3, "user", "Add cursor-based pagination to GET /orders"),
        (5, "assistant", "look at the current orders route"),
        (15, "user", "this repo uses pnpm"),
        (16, "assistant", "pnpm only in this repo"),
        (26, "assistant", "rows that share the same `created_at`"),
        (32, "assistant", "microsecond precision"),
        (39, "assistant", "All 3 tests pass."),
        (41, "user", "conventional commit message please"),
        (44, "assistant", "The pre-commit hook rejected it"),
        (45, "user", "always run `pnpm lint && pnpm test`"),
        (46, "assistant", "named exports only"),
        (51, "assistant", "Committed as `4c1e9a7"),
    ],
    (S2, None): [
        (4, "user", "intermittent 500s on staging"),
        (6, "assistant", "pool exhaustion"),
        (11, "assistant", "The subagent points at `withTransaction`"),
        (14, "assistant", "That matches the theory"),
        (16, "user", "don't run anything against staging"),
        (17, "assistant", "staging is off-limits for load tests"),
        (23, "assistant", "release in `finally`"),
        (31, "assistant", "**Root cause:**"),
        (34, "user", "write the root cause up in docs/incidents"),
        (37, "assistant", "Written to `docs/incidents/2026-04-16-pool-exhaustion.md`"),
    ],
    (S2, S2_AGENT): [(8, "assistant", "Three call sites of `pool.connect()`")],
    (S3, None): [
        (8, "user", "Zoë from Müller-Łukasiewicz GmbH"),
        (12, "assistant", "Plan: register `@fastify/rate-limit`"),
        (13, "user", "per API key (`x-api-key`), not per IP"),
        (14, "assistant", "30/min per `x-api-key`"),
        (19, "user", "Grafana panel"),
        (20, "assistant", "per-key limit is the right lever"),
        (23, "user", "ioredis is already there via bullmq"),
        (26, "assistant", "Using `ioredis` with the Redis store"),
        (32, "assistant", "Done: POST /invoices is limited"),
        (37, "user", "add the Retry-After test"),
        (38, "assistant", "exhausts the per-key bucket"),
    ],
    (S4, None): [
        (8, "assistant", "create a CLAUDE.md file"),
        (13, "assistant", "Created `CLAUDE.md`"),
        (14, "user", "build the orders page"),
        (23, "user", "integer cents"),
        (25, "assistant", "formatCents()"),
    ],
    (S4, S4_AGENT): [(6, "assistant", "**Commands** (package.json, pnpm 9)")],
}

# Text that must never become a memory: what our own hook injected (S3 lines 5-6), the
# compaction summary (S2 line 21), the /init expansion (S4 line 7), command and bash echoes,
# caveats, interrupt markers and tool results.
MUST_NOT_APPEAR = [
    "Known facts from earlier sessions",
    "This session is being continued from a previous conversation",
    "Please analyze this codebase and create a CLAUDE.md file",
    "<command-name>",
    "<local-command-caveat>",
    "Caveat: The messages below were generated",
    "<bash-stdout>",
    "<bash-input>",
    "[Request interrupted",
    "<system-reminder>",
    "<ide_opened_file>",
    "Exit code 1",
    "User rejected tool use",
    "docker compose logs",
]


@pytest.fixture
def projects(tmp_path: Path) -> Path:
    """A writable copy of the fixtures' projects folder."""
    root = tmp_path / "projects"
    shutil.copytree(CLAUDE_PROJECTS, root)
    return root


async def run_import(
    service: MemoryService, root: Path, filters: ImportFilters | None = None
) -> ImportSummary:
    return await SessionImporter(service, filters or ImportFilters()).run(root)


async def stored_turns(service: MemoryService) -> list[dict[str, Any]]:
    async with service.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT session_id, metadata->>'agent_id', (metadata->>'line')::int, role, content,"
            " project, project_path, kind, source, created_at, embedding IS NOT NULL"
            " FROM memories ORDER BY session_id, metadata->>'agent_id' NULLS FIRST,"
            " (metadata->>'line')::int"
        )
        names = [
            "session_id",
            "agent_id",
            "line",
            "role",
            "content",
            "project",
            "project_path",
            "kind",
            "source",
            "created_at",
            "embedded",
        ]
        return [dict(zip(names, row, strict=True)) for row in await cur.fetchall()]


async def test_fixture_sessions_import_exactly_their_prose_turns(
    service: MemoryService, projects: Path
) -> None:
    summary = await run_import(service, projects)

    turns = await stored_turns(service)
    by_file: dict[tuple[str, str | None], list[tuple[int, str, str]]] = {}
    for turn in turns:
        key = (turn["session_id"], turn["agent_id"])
        by_file.setdefault(key, []).append((turn["line"], turn["role"], turn["content"]))
    assert set(by_file) == set(EXPECTED)
    for key, expected in EXPECTED.items():
        got = by_file[key]
        assert [(line, role) for line, role, _ in got] == [
            (line, role) for line, role, _ in expected
        ], key
        for (line, _, content), (_, _, phrase) in zip(got, expected, strict=True):
            assert phrase in content, (key, line)
    assert summary.turns_imported == sum(len(turns) for turns in EXPECTED.values())
    assert summary.turns_skipped["too_short"] == 3  # S1 line 10, S3 lines 42 and 43
    assert summary.malformed_lines == 1  # S3 line 41, a half-written line glued to the next
    assert all(turn["embedded"] for turn in turns)
    assert {(t["kind"], t["source"]) for t in turns} == {("raw", "claude-code")}


async def test_nothing_learned_from_injected_context_or_noise(
    service: MemoryService, projects: Path
) -> None:
    await run_import(service, projects, ImportFilters(min_length=0))

    contents = [turn["content"] for turn in await stored_turns(service)]
    for phrase in MUST_NOT_APPEAR:
        assert not [c for c in contents if phrase in c], phrase


async def test_projects_come_from_cwd_not_the_folder_name(
    service: MemoryService, projects: Path
) -> None:
    await run_import(service, projects)

    turns = await stored_turns(service)
    assert {(t["project"], t["project_path"]) for t in turns} == {
        ("acme-api", "/home/dev/acme-api"),
        ("acme.web_ui", "/home/dev/work/acme.web_ui"),
    }
    sessions = await service.sessions()
    assert {s.session_id for s in sessions.sessions} == {S1, S2, S3, S4}
    by_id = {s.session_id: s for s in sessions.sessions}
    assert by_id[S4].project == "acme.web_ui"
    assert by_id[S1].title == "Add cursor pagination to orders endpoint"
    assert by_id[S2].message_count == 11  # ten turns of its own and the sub-agent's report
    assert by_id[S3].first_message_at is not None
    assert by_id[S3].first_message_at.isoformat().startswith("2026-04-21T14:02:23")
    assert by_id[S3].last_message_at is not None
    assert by_id[S3].last_message_at.date().isoformat() == "2026-04-22"


async def test_turn_times_and_branches_come_from_the_records(
    service: MemoryService, projects: Path
) -> None:
    await run_import(service, projects)

    turns = {(t["session_id"], t["line"]): t for t in await stored_turns(service)}
    assert turns[(S1, 3)]["created_at"].isoformat() == "2026-04-14T09:12:03.118000+00:00"
    assert turns[(S4, 14)]["created_at"].isoformat() == "2025-11-06T16:22:49.542000+00:00"
    async with service.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT DISTINCT session_id, metadata->>'git_branch' FROM memories"
            " WHERE session_id IN (%(s1)s, %(s4)s)",
            {"s1": S1, "s4": S4},
        )
        branches = dict(await cur.fetchall())
    assert branches == {S1: "feat/orders-pagination", S4: "main"}


async def test_tool_calls_are_kept_as_session_events(
    service: MemoryService, projects: Path
) -> None:
    await run_import(service, projects)

    async with service.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT tool, target, success, project FROM session_events WHERE session_id = %s",
            (S1,),
        )
        events = await cur.fetchall()
    bash = [(target, success) for tool, target, success, _ in events if tool == "Bash"]
    assert ("npm install zod", False) in [(t, s) for t, s in bash if t and "npm install" in t]
    assert any(success is False and "pnpm test" in (target or "") for target, success in bash)
    assert {project for *_, project in events} == {"acme-api"}


async def test_rerunning_imports_nothing(service: MemoryService, projects: Path) -> None:
    first = await run_import(service, projects)
    second = await run_import(service, projects)

    assert first.turns_imported == 40
    assert second.turns_imported == 0
    assert second.files_read == 0
    assert second.files_unchanged == second.files_found == 6
    assert len(await stored_turns(service)) == 40


def record(uuid: str, session: str, text: str, *, role: str = "user") -> str:
    line = {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/dev/acme-api",
        "sessionId": session,
        "version": "2.1.115",
        "type": role,
        "uuid": uuid,
        "timestamp": "2026-04-23T10:00:00.000Z",
        "message": {"role": role, "content": text}
        if role == "user"
        else {"role": role, "id": f"msg_{uuid}", "content": [{"type": "text", "text": text}]},
    }
    return json.dumps(line)


async def test_appended_lines_are_imported_and_a_half_line_waits(
    service: MemoryService, projects: Path
) -> None:
    await run_import(service, projects)
    session_file = projects / "-home-dev-acme-api" / f"{S1}.jsonl"
    new = [
        record(
            "a0000000-0000-4000-8000-000000000001",
            S1,
            "Next: add a composite index on (created_at, id) to the orders table.",
        ),
        record(
            "a0000000-0000-4000-8000-000000000002",
            S1,
            "Adding the composite index in a new migration, named orders_created_id_idx.",
            role="assistant",
        ),
        record(
            "a0000000-0000-4000-8000-000000000003",
            S1,
            "Also document the cursor format and its fields in the README, please.",
        ),
    ]
    half = record(
        "a0000000-0000-4000-8000-000000000004",
        S1,
        "And remember: never squash migrations that already ran in production.",
    )
    with session_file.open("a", encoding="utf-8") as handle:
        handle.write("\n".join(new) + "\n" + half[:40])

    appended = await run_import(service, projects)

    assert appended.turns_imported == 3
    contents = [t["content"] for t in await stored_turns(service)]
    assert "Also document the cursor format and its fields in the README, please." in contents
    assert not [c for c in contents if "never squash" in c]

    with session_file.open("a", encoding="utf-8") as handle:
        handle.write(half[40:] + "\n")
    completed = await run_import(service, projects)

    assert completed.turns_imported == 1
    assert "And remember: never squash migrations that already ran in production." in [
        t["content"] for t in await stored_turns(service)
    ]
    assert (await run_import(service, projects)).turns_imported == 0


async def test_short_corrections_are_kept_below_the_minimum_length(
    service: MemoryService, projects: Path
) -> None:
    await run_import(service, projects)
    session_file = projects / "-home-dev-acme-api" / f"{S1}.jsonl"
    lines = [
        record(
            "c0000000-0000-4000-8000-000000000001",
            S1,
            "Installing with npm install now.",
            role="assistant",
        ),
        record("c0000000-0000-4000-8000-000000000002", S1, "no, use pnpm"),
        record("c0000000-0000-4000-8000-000000000003", S1, "Switching to pnpm.", role="assistant"),
        record("c0000000-0000-4000-8000-000000000004", S1, "thanks!"),
    ]
    with session_file.open("a", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")

    summary = await run_import(service, projects)

    contents = [t["content"] for t in await stored_turns(service)]
    assert "no, use pnpm" in contents
    assert summary.turns_imported == 1
    assert summary.turns_skipped["too_short"] == 3


async def test_a_forked_session_repeating_records_adds_only_its_new_turns(
    service: MemoryService, projects: Path
) -> None:
    await run_import(service, projects)
    source = projects / "-home-dev-acme-api" / f"{S1}.jsonl"
    fork_id = "f0000000-0000-4000-8000-00000000f0f0"
    lines = source.read_text(encoding="utf-8").splitlines()
    fork = [line.replace(S1, fork_id) for line in lines]
    fork.append(
        record(
            "b0000000-0000-4000-8000-000000000001",
            fork_id,
            "In the fork: try offset pagination instead, so we can compare the two.",
        )
    )
    (projects / "-home-dev-acme-api" / f"{fork_id}.jsonl").write_text("\n".join(fork) + "\n")

    summary = await run_import(service, projects)

    assert summary.turns_imported == 1
    assert summary.turns_duplicate == 12


async def test_project_and_since_filters_leave_the_rest_for_later(
    service: MemoryService, projects: Path
) -> None:
    from datetime import UTC, datetime

    only_web = await run_import(service, projects, ImportFilters(project="acme.web_ui"))
    assert {t["project"] for t in await stored_turns(service)} == {"acme.web_ui"}
    assert only_web.turns_imported == 6

    recent = await run_import(
        service, projects, ImportFilters(since=datetime(2026, 4, 20, tzinfo=UTC))
    )
    assert recent.turns_imported == 11  # S3 only
    everything = await run_import(service, projects)

    assert everything.turns_imported == 40 - 6 - 11
    assert len(await stored_turns(service)) == 40


async def test_a_file_that_cannot_be_read_is_reported_and_the_rest_imported(
    service: MemoryService, projects: Path
) -> None:
    broken = projects / "-home-dev-acme-api" / "0badf11e-0000-4000-8000-000000000000.jsonl"
    broken.write_bytes(b'\xff\xfe not json at all\n{"type": "user"\n')

    summary = await run_import(service, projects)

    assert summary.turns_imported == 40
    assert summary.malformed_lines >= 3


async def test_a_missing_folder_is_a_clear_error(service: MemoryService, tmp_path: Path) -> None:
    summary = await run_import(service, tmp_path / "nowhere")

    assert summary.errors == [f"{tmp_path / 'nowhere'} is not a folder of Claude Code projects"]
    assert summary.nothing_imported_and_failed


async def test_secrets_in_turns_are_redacted_and_counted(
    service: MemoryService, projects: Path
) -> None:
    session_file = projects / "-home-dev-acme-api" / f"{S3}.jsonl"
    session_file.write_bytes(
        session_file.read_bytes().rsplit(b"\n", 1)[0]
        + b"\n"
        + record(
            "c0000000-0000-4000-8000-000000000001",
            S3,
            "The staging key is sk_live_51H8xYzAbCdEfGhIjKlMnOpQrStUvWxYz0123456789 — rotate it.",
        ).encode()
        + b"\n"
    )

    summary = await run_import(service, projects)

    assert summary.redactions >= 1
    contents = [t["content"] for t in await stored_turns(service)]
    assert not [c for c in contents if "sk_live_51H8xYz" in c]
