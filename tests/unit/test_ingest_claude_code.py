"""Claude Code transcript reader, checked turn by turn against the shared fixtures.

The fixture README lists what a memory system should learn from each session and what it must
not (hook context, compaction summary, /init expansion, command and bash echoes, tool results).
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from server.ingest.claude_code import (
    discover_transcripts,
    project_display_names,
    read_transcript,
)
from tests.fixture_sessions import (
    API,
    CLAUDE_PROJECTS,
    S1_FILE,
    S2,
    S2_AGENT,
    S2_FILE,
    S3_FILE,
    S4,
    S4_AGENT,
    S4_FILE,
    WEB,
)
from tests.transcripts import SessionWriter

# (line, role, a distinctive part of the text) for every turn each fixture should yield.
EXPECTED_TURNS = {
    S1_FILE: [
        (3, "user", "Add cursor-based pagination to GET /orders"),
        (5, "assistant", "I'll look at the current orders route"),
        (10, "assistant", "There's no validation library yet"),
        (15, "user", "no, don't use npm, this repo uses pnpm"),
        (16, "assistant", "pnpm only in this repo"),
        (26, "assistant", "a test that walks every page"),
        (32, "assistant", "JS `Date`, which truncates to milliseconds"),
        (39, "assistant", "All 3 tests pass"),
        (41, "user", "conventional commit message please"),
        (44, "assistant", "The pre-commit hook rejected it"),
        (45, "user", "always run `pnpm lint && pnpm test` yourself before every commit"),
        (46, "assistant", "named exports only"),
        (51, "assistant", "Committed as `4c1e9a7"),
    ],
    S2_FILE: [
        (4, "user", "intermittent 500s on staging"),
        (6, "assistant", "This looks like pool exhaustion"),
        (11, "assistant", "The subagent points at `withTransaction`"),
        (14, "assistant", "run the k6 load test against staging"),
        (16, "user", "don't run anything against staging"),
        (17, "assistant", "staging is off-limits for load tests"),
        (23, "assistant", "Applying the fix: release in `finally`"),
        (31, "assistant", "**Root cause:** `withTransaction`"),
        (34, "user", "without an Idempotency-Key; we'll deal with that next sprint"),
        (37, "assistant", "Written to `docs/incidents/2026-04-16-pool-exhaustion.md`"),
    ],
    S2_AGENT: [
        (8, "assistant", "`withTransaction` — LEAKS on error"),
    ],
    S3_FILE: [
        (8, "user", "Zoë from Müller-Łukasiewicz GmbH"),
        (12, "assistant", "Plan: register `@fastify/rate-limit`"),
        (13, "user", "no — per API key (`x-api-key`), not per IP"),
        (14, "assistant", "Got it: 30/min per `x-api-key`"),
        (19, "user", "[Image #1] fyi this is the Grafana panel"),
        (20, "assistant", "a per-key limit is the right lever"),
        (23, "user", "use the redis store in prod (REDIS_URL)"),
        (26, "assistant", "Using `ioredis` with the Redis store"),
        (32, "assistant", "Done: POST /invoices is limited to 30/min"),
        (37, "user", "add the Retry-After test, then commit"),
        (38, "assistant", "exhausts the per-key bucket"),
        (42, "user", "terminal froze, sorry"),
        (43, "assistant", "Running lint and the test suite"),
    ],
    S4_FILE: [
        (8, "assistant", "I'll analyze the codebase"),
        (13, "assistant", "Created `CLAUDE.md`"),
        (14, "user", "TanStack Query, no useEffect fetching. and use pnpm"),
        (23, "user", "never do float math on money"),
        (25, "assistant", "`123456` → `1.234,56 €`"),
    ],
    S4_AGENT: [
        (6, "assistant", "**Conventions:** named exports everywhere"),
    ],
}

# Lines that must never become turns (fixture README, "must not become memories").
FORBIDDEN_LINES = {
    S1_FILE: {8, 12, 13, 30, 43},  # tool results, the rejection, its interrupt marker, failed runs
    # S2: queued copy, sub-agent result, logs, interrupt, compaction
    S2_FILE: {1, 10, 13, 15, 19, 21, 22},
    S2_AGENT: {1},  # the task prompt the main agent wrote
    S3_FILE: {2, 3, 4, 5, 6, 21, 22},  # /clear residue, our own hook context, bash mode
    S4_FILE: {3, 4, 5, 6, 7},  # caveat, /model echo and output, /init echo and expansion
    S4_AGENT: {1},
}
FORBIDDEN_TEXT = (
    "acme-memory source",  # S3 line 5-6: context a memory server injected
    "Known facts from earlier sessions",
    "This session is being continued from a previous conversation",  # S2 line 21
    "Please analyze this codebase and create a CLAUDE.md",  # S4 line 7
    "<command-",
    "<local-command",
    "Caveat:",
    "<bash-",
    "<ide_opened_file>",
    "[Request interrupted",
    "The user doesn't want to proceed",
    "Exit code 1",
    "File created successfully",
    "<persisted-output>",
    "In /home/dev/acme-api, find every place",  # the sub-agent's task prompt
)


@pytest.mark.parametrize("path", list(EXPECTED_TURNS), ids=lambda p: p.name[:12])
def test_each_fixture_yields_exactly_the_expected_prose_turns(path: Path) -> None:
    turns = read_transcript(path).turns
    assert [(t.line_number, t.role) for t in turns] == [
        (line, role) for line, role, _ in EXPECTED_TURNS[path]
    ]
    for turn, (_, _, snippet) in zip(turns, EXPECTED_TURNS[path], strict=True):
        assert snippet in turn.text
        assert turn.text == turn.text.strip()


@pytest.mark.parametrize("path", list(FORBIDDEN_LINES), ids=lambda p: p.name[:12])
def test_harness_lines_and_injected_context_never_become_turns(path: Path) -> None:
    turns = read_transcript(path).turns
    assert not {t.line_number for t in turns} & FORBIDDEN_LINES[path]
    for turn in turns:
        for marker in FORBIDDEN_TEXT:
            assert marker not in turn.text


def test_skip_reasons_are_counted_per_fixture() -> None:
    assert read_transcript(S1_FILE).skipped == {
        "interrupt": 1,
        "thinking_only": 2,
        "tool_result": 15,
        "tool_use": 15,
    }
    assert read_transcript(S2_FILE).skipped == {
        "compact_summary": 1,
        "interrupt": 1,
        "queued_copy": 1,
        "thinking_only": 1,
        "tool_result": 8,
        "tool_use": 8,
    }
    assert read_transcript(S3_FILE).skipped == {
        "bash": 2,
        "command": 2,
        "hook_context": 2,
        "meta": 1,
        "thinking_only": 1,
        "tool_result": 6,
        "tool_use": 6,
    }
    assert read_transcript(S4_FILE).skipped["command"] == 3
    assert read_transcript(S4_FILE).skipped["meta"] == 2
    assert read_transcript(S2_AGENT).skipped["sidechain_prompt"] == 1


def test_ide_block_is_stripped_but_the_prompt_with_unicode_is_kept() -> None:
    prompt = read_transcript(S3_FILE).turns[0]
    assert prompt.text.startswith("Zoë from Müller-Łukasiewicz GmbH")
    assert "「レート制限を設けてください」 🚦" in prompt.text
    assert "opened the file" not in prompt.text


def test_streamed_lines_of_one_response_become_one_turn_keyed_by_the_first_text_line() -> None:
    turns = {t.line_number: t for t in read_transcript(S1_FILE).turns}
    # Lines 4-7 share message.id: thinking, text, two Read calls.
    assert turns[5].uuid.startswith("d4bdc162")
    assert turns[5].text == "I'll look at the current orders route and the package manifest first."
    assert 4 not in turns
    assert turns[5].timestamp == datetime(2026, 4, 14, 9, 12, 10, 718000, tzinfo=UTC)


def test_text_blocks_of_one_message_are_joined_in_order(tmp_path: Path) -> None:
    lines = [
        assistant_line("a1", "msg_1", [{"type": "text", "text": "First part."}], "09:00:01"),
        assistant_line(
            "a2", "msg_1", [{"type": "tool_use", "id": "t1", "name": "Read"}], "09:00:02"
        ),
        assistant_line("a3", "msg_1", [{"type": "text", "text": "Second part."}], "09:00:03"),
        assistant_line("a4", "msg_2", [{"type": "text", "text": "Next reply."}], "09:00:04"),
    ]
    path = write_lines(tmp_path / "s.jsonl", lines)
    turns = read_transcript(path).turns
    assert [(t.uuid, t.text) for t in turns] == [
        ("a1", "First part.\n\nSecond part."),
        ("a4", "Next reply."),
    ]
    assert turns[0].timestamp == datetime(2026, 4, 1, 9, 0, 1, tzinfo=UTC)


def test_repeated_lines_are_kept_once(tmp_path: Path) -> None:
    text = [{"type": "text", "text": "Same answer."}]
    lines = [
        user_line("u1", "a prompt", "09:00:00"),
        user_line("u1", "a prompt", "09:00:00"),  # the same line written twice
        assistant_line("a1", "msg_1", text, "09:00:01"),
        assistant_line("a2", "msg_1", text, "09:00:02"),  # a replay under a new uuid
    ]
    chunk = read_transcript(write_lines(tmp_path / "s.jsonl", lines))
    assert [(t.uuid, t.text) for t in chunk.turns] == [("u1", "a prompt"), ("a1", "Same answer.")]
    assert chunk.skipped == {"duplicate": 1}


def test_turns_carry_session_cwd_and_utc_timestamps() -> None:
    for path, cwd in ((S1_FILE, "/home/dev/acme-api"), (S4_FILE, "/home/dev/work/acme.web_ui")):
        chunk = read_transcript(path)
        assert chunk.cwd == cwd
        assert {t.cwd for t in chunk.turns} == {cwd}
        assert {t.session_id for t in chunk.turns} == {path.stem}
        assert chunk.session_id == path.stem
        assert all(t.timestamp is not None and t.timestamp.tzinfo == UTC for t in chunk.turns)
        assert not any(t.is_sidechain or t.agent_id for t in chunk.turns)
    assert read_transcript(S1_FILE).turns[0].timestamp == datetime(
        2026, 4, 14, 9, 12, 3, 118000, tzinfo=UTC
    )


def test_titles_and_versions() -> None:
    assert read_transcript(S1_FILE).title == "Add cursor pagination to orders endpoint"
    assert read_transcript(S1_FILE).version == "2.1.104"
    assert read_transcript(S3_FILE).title == "Per-key rate limiting for invoice creation"
    # S4 has two summaries; the first points into another session file.
    assert read_transcript(S4_FILE).title == "Orders table with TanStack Query and EUR formatting"
    assert read_transcript(S4_FILE).version == "2.0.31"
    assert read_transcript(S2_AGENT).title is None


def test_sub_agent_report_is_kept_with_its_agent_and_the_parent_session() -> None:
    for path, agent, parent in (
        (S2_AGENT, "a3f9c1e27b6d40581", S2),
        (S4_AGENT, "1f2e3d4c", S4),
    ):
        chunk = read_transcript(path)
        (report,) = chunk.turns
        assert (report.role, report.agent_id, report.is_sidechain) == ("assistant", agent, True)
        assert report.session_id == parent
        assert chunk.session_id == parent
        assert {e.agent_id for e in chunk.events} == {agent}


def test_tool_events_record_targets_and_outcomes() -> None:
    events = [(e.tool, e.target, e.success) for e in read_transcript(S1_FILE).events]
    assert events == [
        ("Read", "/home/dev/acme-api/src/routes/orders.ts", True),
        ("Read", "/home/dev/acme-api/package.json", True),
        ("Bash", "npm install zod", False),  # rejected by the user
        ("Bash", "pnpm add zod@^3.24", True),
        ("Write", "/home/dev/acme-api/src/lib/cursor.ts", True),
        ("Edit", "/home/dev/acme-api/src/routes/orders.ts", True),
        ("Edit", "/home/dev/acme-api/src/routes/orders.ts", True),
        ("Write", "/home/dev/acme-api/test/orders.pagination.test.ts", True),
        ("Bash", "pnpm test -- orders", False),  # the failing test run
        ("Edit", "/home/dev/acme-api/src/routes/orders.ts", True),
        ("Edit", "/home/dev/acme-api/src/routes/orders.ts", True),
        ("Bash", "pnpm test -- orders", True),
        (
            "Bash",
            'git add -A && git commit -m "feat(orders): add cursor pagination to GET /orders"',
            False,
        ),
        ("Edit", "/home/dev/acme-api/src/routes/orders.ts", True),
        (
            "Bash",
            "pnpm lint && pnpm test && git add -A && git commit -m "
            '"feat(orders): add cursor pagination to GET /orders"',
            True,
        ),
    ]
    first = read_transcript(S1_FILE).events[0]
    assert first.uuid.startswith("6b43b126")
    assert first.tool_use_id == "toolu_01Jl6HdkfIR56tGvqt4uNhXH"
    assert first.session_id == S1_FILE.stem
    assert first.timestamp == datetime(2026, 4, 14, 9, 12, 11, 318000, tzinfo=UTC)


def test_tool_events_of_sub_agents_and_old_tool_names() -> None:
    assert [(e.tool, e.target) for e in read_transcript(S2_AGENT).events] == [
        ("Grep", "pool\\.connect\\("),
        ("Read", "/home/dev/acme-api/src/db/tx.ts"),
        ("Read", "/home/dev/acme-api/src/jobs/reindex.ts"),
    ]
    tools = [(e.tool, e.success) for e in read_transcript(S4_FILE).events]
    assert tools[:3] == [("Task", True), ("Write", True), ("TodoWrite", True)]
    agent_call = read_transcript(S2_FILE).events[0]
    assert (agent_call.tool, agent_call.target, agent_call.success) == ("Agent", None, True)


def test_targets_are_cut_to_500_characters(tmp_path: Path) -> None:
    command = "echo " + "x" * 2000
    block: dict[str, object] = {
        "type": "tool_use",
        "id": "t1",
        "name": "Bash",
        "input": {"command": command},
    }
    path = write_lines(tmp_path / "s.jsonl", [assistant_line("a1", "m1", [block], "09:00:00")])
    (event,) = read_transcript(path).events
    assert event.target == command[:500]
    assert event.success is None


def test_a_result_in_a_later_chunk_is_reported_as_a_late_result(tmp_path: Path) -> None:
    cut = offset_of_line(S1_FILE, 12)  # line 11 calls `npm install`, line 12 is its rejection
    partial = tmp_path / "partial.jsonl"
    partial.write_bytes(S1_FILE.read_bytes()[:cut])
    before = read_transcript(partial)
    assert (before.events[-1].target, before.events[-1].success) == ("npm install zod", None)
    after = read_transcript(S1_FILE, cut)
    late = {key: outcome.success for key, outcome in after.late_results.items()}
    assert late == {"toolu_01UPPmEQJCxAscq7E4UDwbGN": False}
    assert read_transcript(S1_FILE).late_results == {}


def test_incremental_reads_consume_only_complete_lines(tmp_path: Path) -> None:
    copy = copy_fixture(S1_FILE, tmp_path)
    first = read_transcript(copy)
    assert first.end_offset == copy.stat().st_size
    assert first.lines_read == 54
    new = [user_line(f"u{n}", f"new prompt {n}", f"10:0{n}:00") for n in range(1, 5)]
    half = len(new[3]) // 2
    with copy.open("ab") as handle:
        handle.write(b"".join(new[:3]) + new[3][:half])
    second = read_transcript(copy, first.end_offset)
    assert [t.text for t in second.turns] == ["new prompt 1", "new prompt 2", "new prompt 3"]
    assert [t.line_number for t in second.turns] == [55, 56, 57]
    assert second.lines_read == 3
    assert second.end_offset == copy.stat().st_size - half
    assert read_transcript(copy, second.end_offset).lines_read == 0
    with copy.open("ab") as handle:
        handle.write(new[3][half:])
    third = read_transcript(copy, second.end_offset)
    assert [(t.line_number, t.text) for t in third.turns] == [(58, "new prompt 4")]
    assert third.end_offset == copy.stat().st_size


def test_reading_from_an_offset_numbers_lines_from_the_start_of_the_file() -> None:
    chunk = read_transcript(S1_FILE, offset_of_line(S1_FILE, 41))
    assert [t.line_number for t in chunk.turns] == [41, 44, 45, 46, 51]
    assert chunk.lines_read == 14


def test_crash_artefacts_are_counted_and_the_truncated_last_line_is_left_unread(
    tmp_path: Path,
) -> None:
    chunk = read_transcript(S3_FILE)
    data = S3_FILE.read_bytes()
    assert not data.endswith(b"\n")
    assert chunk.malformed == 1  # line 41: a half line with the next record glued on
    assert chunk.lines_read == 43
    assert chunk.end_offset == data.rindex(b"\n") + 1
    copy = copy_fixture(S3_FILE, tmp_path)
    with copy.open("ab") as handle:
        handle.write(b"\n")
    rest = read_transcript(copy, chunk.end_offset)
    assert (rest.lines_read, rest.malformed, rest.turns) == (1, 1, [])


def test_invalid_utf8_and_non_object_lines_do_not_stop_the_read(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    good = user_line("u1", "caf\u00e9 ok", "09:00:00")
    broken = user_line("u2", "bad BYTE here", "09:00:01").replace(b"BYTE", b"\xff\xfe")
    path.write_bytes(b"\xff\xff not json\n[1, 2]\n" + good + broken + b"\n")
    chunk = read_transcript(path)
    assert chunk.malformed == 2
    assert chunk.lines_read == 5
    assert [t.uuid for t in chunk.turns] == ["u1", "u2"]
    assert chunk.turns[1].text == "bad \ufffd\ufffd here"


def test_lines_over_the_cap_are_skipped_without_losing_the_next_line(tmp_path: Path) -> None:
    huge = user_line("u1", "x" * 5000, "09:00:00")
    path = write_lines(tmp_path / "s.jsonl", [huge, user_line("u2", "after", "09:00:01")])
    chunk = read_transcript(path, max_line_bytes=1000)
    assert chunk.skipped == {"oversize": 1}
    assert [t.text for t in chunk.turns] == ["after"]
    assert chunk.end_offset == path.stat().st_size
    # A huge line still being written is not consumed.
    path.write_bytes(huge[:-1])
    assert read_transcript(path, max_line_bytes=1000).end_offset == 0


def test_a_53_kb_tool_result_line_is_parsed() -> None:
    line13 = S2_FILE.read_bytes().split(b"\n")[12]
    assert len(line13) > 50_000
    logs = read_transcript(S2_FILE).events[2]
    assert logs.target is not None
    assert logs.target.startswith("docker compose logs api postgres")
    assert logs.success is True  # known only from that long line


def test_a_record_without_a_timestamp_takes_the_previous_one(tmp_path: Path) -> None:
    lines = [
        json.dumps({"type": "user", "uuid": "u0", "message": {"content": "first"}}).encode()
        + b"\n",
        user_line("u1", "timed", "09:00:00"),
        json.dumps(
            {"type": "user", "uuid": "u2", "timestamp": "yesterday", "message": {"content": "x"}}
        ).encode()
        + b"\n",
    ]
    turns = read_transcript(write_lines(tmp_path / "s.jsonl", lines)).turns
    assert [t.timestamp for t in turns] == [
        None,
        datetime(2026, 4, 1, 9, 0, tzinfo=UTC),
        datetime(2026, 4, 1, 9, 0, tzinfo=UTC),
    ]


def test_discovery_finds_sessions_and_both_sub_agent_layouts() -> None:
    found = discover_transcripts(CLAUDE_PROJECTS)
    rows = [
        (f.path.relative_to(CLAUDE_PROJECTS).as_posix(), f.kind, f.session_id, f.agent_id)
        for f in found
    ]
    assert rows == [
        (rel(S1_FILE), "session", S1_FILE.stem, None),
        (rel(S2_FILE), "session", S2_FILE.stem, None),
        (rel(S2_AGENT), "subagent", S2_FILE.stem, "a3f9c1e27b6d40581"),
        (rel(S3_FILE), "session", S3_FILE.stem, None),
        (rel(S4_FILE), "session", S4_FILE.stem, None),
        (rel(S4_AGENT), "subagent", None, "1f2e3d4c"),
    ]
    agent = found[2]
    assert (agent.agent_type, agent.parent_tool_use_id) == (
        "Explore",
        "toolu_01UWovV1eRrFkGMrkwp8rZEt",
    )
    assert agent.size == S2_AGENT.stat().st_size
    assert {f.project_dir for f in found} == {API.name, WEB.name}


def test_discovery_tolerates_odd_layouts(tmp_path: Path) -> None:
    assert discover_transcripts(tmp_path / "missing") == []
    project = tmp_path / "-p"
    (project / "memory").mkdir(parents=True)
    (project / "memory" / "agent-x.jsonl").write_text("{}\n")
    (project / "s1" / "tool-results").mkdir(parents=True)
    (project / "s1" / "tool-results" / "r.jsonl").write_text("{}\n")
    (project / "s1.jsonl").write_text("{}\n")
    (project / "s2").mkdir()
    (project / "s2" / "subagents").write_text("not a folder")
    (project / "notes.txt").write_text("x")
    (tmp_path / "stray.jsonl").write_text("{}\n")
    workflow = project / "s1" / "subagents" / "workflows" / "wf1"
    workflow.mkdir(parents=True)
    (workflow / "agent-w1.jsonl").write_text("{}\n")
    (workflow / "journal.jsonl").write_text("{}\n")
    found = [
        (f.path.relative_to(tmp_path).as_posix(), f.kind) for f in discover_transcripts(tmp_path)
    ]
    assert found == [
        ("-p/s1.jsonl", "session"),
        ("-p/s1/subagents/workflows/wf1/agent-w1.jsonl", "subagent"),
    ]


def test_project_names_are_last_segments_disambiguated_when_they_clash() -> None:
    assert project_display_names(["/home/dev/acme-api", "/home/dev/work/acme.web_ui"]) == {
        "/home/dev/acme-api": "acme-api",
        "/home/dev/work/acme.web_ui": "acme.web_ui",
    }
    assert project_display_names(["/home/a/work/api", "/home/b/work/api", "/srv/web"]) == {
        "/home/a/work/api": "a/work/api",
        "/home/b/work/api": "b/work/api",
        "/srv/web": "web",
    }


def test_project_names_already_taken_never_change() -> None:
    taken = {"/home/dev/acme-api": "acme-api"}
    names = project_display_names(["/opt/acme-api", "/home/dev/acme-api/"], taken)
    assert names == {"/opt/acme-api": "opt/acme-api", "/home/dev/acme-api/": "acme-api"}
    # Every segment used and still taken: numbered.
    taken_both = {"/elsewhere/y": "y", "/z/x/y": "x/y"}
    assert project_display_names(["/x/y"], taken_both) == {"/x/y": "x/y (2)"}
    assert project_display_names(["/b/api", "/a/api"]) == project_display_names(
        ["/a/api", "/b/api"]
    )


# --- helpers ---------------------------------------------------------------------------------


def rel(path: Path) -> str:
    return path.relative_to(CLAUDE_PROJECTS).as_posix()


def copy_fixture(path: Path, tmp_path: Path) -> Path:
    copy = tmp_path / path.name
    shutil.copyfile(path, copy)
    return copy


def offset_of_line(path: Path, line: int) -> int:
    lines = path.read_bytes().split(b"\n")
    return sum(len(text) + 1 for text in lines[: line - 1])


def write_lines(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"".join(lines))
    return path


def user_line(uuid: str, text: str, time: str) -> bytes:
    record = {
        "type": "user",
        "uuid": uuid,
        "sessionId": "s-1",
        "cwd": "/tmp/p",
        "timestamp": f"2026-04-01T{time}.000Z",
        "message": {"role": "user", "content": text},
    }
    return json.dumps(record, ensure_ascii=False).encode() + b"\n"


def assistant_line(
    uuid: str, message_id: str, content: list[dict[str, object]], time: str
) -> bytes:
    record = {
        "type": "assistant",
        "uuid": uuid,
        "sessionId": "s-1",
        "timestamp": f"2026-04-01T{time}.000Z",
        "message": {"id": message_id, "role": "assistant", "content": content},
    }
    return json.dumps(record).encode() + b"\n"


def test_records_with_odd_field_shapes_are_counted_not_fatal(tmp_path: Path) -> None:
    odd = [
        {"type": "assistant", "uuid": "a1", "message": {"content": [{"type": ["tool_use"]}]}},
        {"type": "user", "uuid": "u1", "message": {"content": {"nested": True}}, "cwd": 5},
        {"type": "assistant", "uuid": "a2", "message": "not an object"},
    ]
    path = tmp_path / "odd.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in odd) + "\n")

    chunk = read_transcript(path)

    assert chunk.turns == []
    assert chunk.lines_read == 3


def test_turns_carry_the_branch_the_session_was_on_but_not_a_detached_head(
    tmp_path: Path,
) -> None:
    assert {t.git_branch for t in read_transcript(S1_FILE).turns} == {"feat/orders-pagination"}
    assert {t.git_branch for t in read_transcript(S4_FILE).turns} == {"main"}
    lines = [json.loads(line) for line in S1_FILE.read_text().splitlines()]
    for record in lines:
        if "gitBranch" in record:
            record["gitBranch"] = "HEAD"
    detached = tmp_path / S1_FILE.name
    detached.write_text("\n".join(json.dumps(record) for record in lines) + "\n")
    assert {t.git_branch for t in read_transcript(detached).turns} == {None}


def test_the_agent_s_calls_and_replies_are_kept_as_actions_under_their_prompt(
    tmp_path: Path,
) -> None:
    writer = SessionWriter("s-actions")
    writer.prompt("add the index")
    first = writer.prompt_id
    edit = {"file_path": "db/schema.sql", "new_string": "CREATE INDEX"}
    writer.call("t1", "Edit", edit, message_id="m1").result("t1", "ok").say("Added the index.")
    writer.prompt("now run the tests")
    second = writer.prompt_id
    writer.call("t2", "Bash", {"command": "pytest -q"}, message_id="m2")
    writer.result("t2", "3 passed").say("All green.")
    path = writer.write(tmp_path)

    actions = read_transcript(path).actions
    raw = path.read_bytes()
    mid_turn = read_transcript(path, raw.rindex(b"\n", 0, raw.index(b'"id": "t2"')) + 1).actions

    assert [(a.prompt_key, a.tool, a.text) for a in actions] == [
        (first, "Edit", "file_path: db/schema.sql\nnew_string: CREATE INDEX"),
        (first, None, "Added the index."),
        (second, "Bash", "command: pytest -q"),
        (second, None, "All green."),
    ]
    assert [(a.prompt_key, a.tool) for a in mid_turn] == [(None, "Bash"), (second, None)], (
        "a read that starts mid-turn learns the prompt from the next result line"
    )
