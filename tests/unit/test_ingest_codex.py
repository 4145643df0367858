"""Codex CLI rollout reader, checked line by line against tests/fixtures/codex.

The fixture README says which Codex source each file follows and what each line exercises:
prose that must become turns, harness text and event copies that must not, and the outcome of
every call.
"""

from __future__ import annotations

import json
import logging
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from server.ingest.codex import (
    default_codex_root,
    discover_codex_rollouts,
    read_codex_rollout,
    rollout_session_id,
)
from server.ingest.folders import list_folder

SESSIONS = Path(__file__).resolve().parents[1] / "fixtures" / "codex" / "sessions"
SID = "019b2f4e-8a31-7c52-9d1e-4f6a8b0c2d13"
OLD_SID = "5d3e7a10-2c4b-4f6e-8a91-b07c3d2e1f48"
CURRENT = SESSIONS / f"2026/04/20/rollout-2026-04-20T11-12-03-{SID}.jsonl"
OLDER = SESSIONS / f"2025/08/02/rollout-2025-08-02T16-05-09-{OLD_SID}.jsonl"


def key(line: int, session: str = SID) -> str:
    return f"codex:{session}:{line}"


def offset_of_line(path: Path, line: int) -> int:
    """Byte offset where 1-based `line` starts."""
    data = path.read_bytes()
    offset = 0
    for _ in range(line - 1):
        offset = data.index(b"\n", offset) + 1
    return offset


def write_rollout(path: Path, payloads: list[tuple[str, dict[str, object]]]) -> Path:
    """A rollout with a session meta line, then one envelope per (type, payload)."""
    meta = {"id": SID, "cwd": "/home/dev/acme-api", "cli_version": "0.63.0"}
    lines = [("session_meta", meta), *payloads]
    path.write_text(
        "".join(
            json.dumps({"timestamp": f"2026-04-20T10:00:{n:02}.000Z", "type": t, "payload": p})
            + "\n"
            for n, (t, p) in enumerate(lines)
        )
    )
    return path


def call(call_id: str, command: str) -> tuple[str, dict[str, object]]:
    arguments = json.dumps({"command": ["bash", "-lc", command]})
    return "response_item", {
        "type": "function_call",
        "name": "shell",
        "arguments": arguments,
        "call_id": call_id,
    }


def output(call_id: str, value: object) -> tuple[str, dict[str, object]]:
    return "response_item", {"type": "function_call_output", "call_id": call_id, "output": value}


def test_default_root_follows_codex_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert default_codex_root({}, home) == home / ".codex" / "sessions"
    assert default_codex_root({"CODEX_HOME": ""}, home) == home / ".codex" / "sessions"
    assert default_codex_root({"CODEX_HOME": "/srv/codex"}, home) == Path("/srv/codex/sessions")


def test_discovery_finds_rollouts_in_dated_folders_oldest_first() -> None:
    assert discover_codex_rollouts(SESSIONS) == [OLDER, CURRENT]
    assert [rollout_session_id(path) for path in (OLDER, CURRENT)] == [OLD_SID, SID]


def test_discovery_tolerates_a_missing_root_and_odd_entries(tmp_path: Path) -> None:
    assert discover_codex_rollouts(tmp_path / "missing") == []
    day = tmp_path / "2026" / "04" / "20"
    day.mkdir(parents=True)
    (day / "rollout-2026-04-20T10-00-00-a.jsonl").write_text("{}\n")
    (day / "notes.jsonl").write_text("{}\n")
    (day / "rollout-2026-04-20T10-00-00-a.json").write_text("{}")  # the TypeScript CLI's
    (tmp_path / "rollout-flat.jsonl").write_text("{}\n")  # not in a dated folder
    (tmp_path / "2026" / "archive").mkdir()
    (tmp_path / "2026" / "05").write_text("a file, not a month")
    (tmp_path / "2026" / "06").symlink_to(tmp_path / "nowhere")
    found = [path.relative_to(tmp_path).as_posix() for path in discover_codex_rollouts(tmp_path)]
    assert found == ["2026/04/20/rollout-2026-04-20T10-00-00-a.jsonl"]


def test_a_folder_that_cannot_be_listed_is_passed_over_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # A name too long for the file system fails to list whoever runs the test (root included),
    # as an unreadable folder does for a user.
    unlistable = tmp_path / ("x" * 300)

    with caplog.at_level(logging.WARNING, logger="server.ingest.folders"):
        assert list_folder(unlistable) == []

    assert "cannot list" in caplog.text


def test_current_rollout_yields_exactly_the_prose_turns() -> None:
    chunk = read_codex_rollout(CURRENT)
    assert [(t.line_number, t.role, t.text[:40]) for t in chunk.turns] == [
        (6, "user", "The invoice tests fail since yesterday, "),
        (15, "assistant", "`nextInvoiceNumber` ignores `tenantId` a"),
        (23, "assistant", "Fixed: invoice numbers now come from a p"),
        (26, "user", "Decision: invoices are numbered per tena"),
        (36, "assistant", "The decision is recorded in `docs/decisi"),
        (38, "user", "leave it uncommitted, I'll commit it mys"),
        (40, "assistant", "Understood: I'll leave `docs/decisions.m"),
    ]
    turn = chunk.turns[0]
    assert turn.uuid == key(6)
    assert (turn.session_id, turn.cwd, turn.agent_id, turn.is_sidechain) == (
        SID,
        "/home/dev/acme-api",
        None,
        False,
    )
    assert turn.timestamp == datetime(2026, 4, 20, 9, 12, 10, 481000, tzinfo=UTC)


def test_harness_text_and_event_copies_are_skipped_and_counted() -> None:
    chunk = read_codex_rollout(CURRENT)
    assert chunk.skipped == {
        "boilerplate": 2,  # AGENTS.md instructions, environment context
        "compacted": 1,
        "developer": 1,
        "duplicate_event": 7,  # user/agent messages and patch/exec ends repeated as events
        "reasoning": 2,  # the reasoning item and its agent_reasoning event
    }
    texts = " ".join(t.text for t in chunk.turns)
    for harness in ("AGENTS.md", "<environment_context>", "permissions", "Summary so far"):
        assert harness not in texts
    assert "Open tabs" not in chunk.turns[5].text  # IDE context before the request is dropped


def test_session_facts_come_from_the_meta_line() -> None:
    chunk = read_codex_rollout(CURRENT)
    assert (chunk.session_id, chunk.cwd, chunk.version, chunk.title) == (
        SID,
        "/home/dev/acme-api",
        "0.63.0",
        None,
    )


def test_human_prompts_are_journaled_under_their_turn_uuid() -> None:
    prompts = read_codex_rollout(CURRENT).prompts
    assert [(p.key, p.uuid, p.text[:30]) for p in prompts] == [
        (key(6), key(6), "The invoice tests fail since y"),
        (key(26), key(26), "Decision: invoices are numbere"),
        (key(38), key(38), "leave it uncommitted, I'll com"),
    ]
    assert all(p.session_id == SID and p.agent_id is None for p in prompts)


def test_tool_calls_are_paired_with_their_outputs() -> None:
    events = read_codex_rollout(CURRENT).events
    assert [(e.tool, e.tool_use_id, e.target, e.success, e.prompt_key) for e in events] == [
        ("shell", "call_T1", "pnpm test -- invoices", False, key(6)),
        ("exec_command", "call_R1", 'rg -n "INV-" src/invoices', True, key(6)),
        (
            "apply_patch",
            "call_P1",
            "src/invoices/number.ts, src/invoices/sequence.ts",
            True,
            key(6),
        ),
        ("shell_command", "call_T2", "pnpm test -- invoices", True, key(6)),
        ("shell", "call_A1", "docs/decisions.md", True, key(26)),
        (
            "shell",
            "call_G1",
            "git add docs/decisions.md && git commit -m"
            ' "docs: record per-tenant invoice numbering"',
            False,
            key(26),
        ),
        ("shell", "call_S1", "git status --short", None, key(38)),  # its output is half-written
    ]
    failed, grep, patch, passed, _, rejected, pending = events
    assert failed.error is not None and failed.output_preview is None
    assert failed.error.startswith("Exit code 1\nFAIL src/invoices/number.test.ts")
    assert 'Received: "INV-0002"' in failed.error
    assert (
        grep.output_preview
        == 'src/invoices/number.ts:7: return `INV-${String(seq).padStart(4, "0")}`;'
    )
    assert patch.output_preview == (
        "Success. Updated the following files:\n"
        "M src/invoices/number.ts\nM src/invoices/sequence.ts"
    )
    assert passed.output_preview == "PASS src/invoices/number.test.ts\nTests: 4 passed, 4 total"
    assert (rejected.error, rejected.output_preview) == ("exec command rejected by user", None)
    assert (pending.output_preview, pending.error) == (None, None)
    assert events[0].uuid == key(10)
    assert events[0].timestamp == datetime(2026, 4, 20, 9, 12, 15, 210000, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "success", "preview", "error"),
    [
        ('{"output":"ok\\n","metadata":{"exit_code":0,"duration_seconds":0.1}}', True, "ok", None),
        ("Exit code: 3\nWall time: 1 seconds\nOutput:\nboom", False, None, "Exit code 3\nboom"),
        ("Process exited with code 0\nOutput:\n", True, None, None),
        ("Process running with session ID 7\nOutput:\nwaiting", True, "waiting", None),
        ([{"type": "input_text", "text": "patched"}], True, "patched", None),
        (
            {"content": "patch rejected by user", "success": False},
            False,
            None,
            "patch rejected by user",
        ),
        ({"content": "fine", "success": True}, True, "fine", None),
        ("aborted", False, None, "aborted"),
        ("execution error: Io(NotFound)", False, None, "execution error: Io(NotFound)"),
        (
            "Output: a line that merely starts like a header",
            True,
            "Output: a line that merely starts like a header",
            None,
        ),
    ],
)
def test_outcome_forms(
    tmp_path: Path, value: object, success: bool, preview: str | None, error: str | None
) -> None:
    path = write_rollout(tmp_path / "r.jsonl", [call("c1", "make"), output("c1", value)])
    (event,) = read_codex_rollout(path).events
    assert (event.success, event.output_preview, event.error) == (success, preview, error)


def test_local_shell_custom_tool_and_web_search_calls(tmp_path: Path) -> None:
    patch = "*** Begin Patch\n*** Delete File: old.ts\n*** Update File: a.ts\n*** Move to: b.ts\n"
    path = write_rollout(
        tmp_path / "r.jsonl",
        [
            (
                "response_item",
                {
                    "type": "local_shell_call",
                    "status": "completed",
                    "action": {"type": "exec", "command": ["ls", "-la", "my dir"]},
                },
            ),
            (
                "response_item",
                {
                    "type": "custom_tool_call",
                    "call_id": "p1",
                    "name": "apply_patch",
                    "input": patch,
                },
            ),
            (
                "response_item",
                {
                    "type": "web_search_call",
                    "status": "completed",
                    "action": {"type": "search", "query": "pnpm workspaces"},
                },
            ),
            ("response_item", {"type": "function_call", "name": "read_file", "arguments": "{oops"}),
        ],
    )
    events = read_codex_rollout(path).events
    assert [(e.tool, e.tool_use_id, e.target, e.success) for e in events] == [
        ("local_shell", key(2), "ls -la 'my dir'", None),  # no call_id: keyed by its line
        ("apply_patch", "p1", "old.ts, a.ts, b.ts", None),
        ("web_search", key(4), "pnpm workspaces", True),
        ("read_file", key(5), None, None),
    ]


def test_incremental_reads_pair_late_results_and_read_nothing_twice(tmp_path: Path) -> None:
    data = CURRENT.read_bytes()
    copy = tmp_path / CURRENT.name
    cut = offset_of_line(CURRENT, 11) + 40  # inside the output of the failing test run
    copy.write_bytes(data[:cut])
    first = read_codex_rollout(copy)
    assert first.end_offset == offset_of_line(CURRENT, 11)
    assert [(e.tool_use_id, e.success) for e in first.events] == [("call_T1", None)]

    copy.write_bytes(data)
    second = read_codex_rollout(copy, first.end_offset)
    assert [(k, o.success) for k, o in second.late_results.items()] == [("call_T1", False)]
    assert second.late_results["call_T1"].error is not None
    # The second read knows the session, cwd and prompt its calls belong to.
    assert (second.session_id, second.cwd, second.version) == (SID, "/home/dev/acme-api", "0.63.0")
    assert second.events[0].prompt_key == key(6)

    whole = read_codex_rollout(CURRENT)
    assert [t.uuid for t in first.turns + second.turns] == [t.uuid for t in whole.turns]
    assert [p.key for p in first.prompts + second.prompts] == [p.key for p in whole.prompts]
    assert first.lines_read + second.lines_read == whole.lines_read == 41
    assert second.events == whole.events[1:]
    assert second.end_offset == whole.end_offset == data.rindex(b"\n") + 1


def test_the_half_written_last_line_is_read_once_finished(tmp_path: Path) -> None:
    whole = read_codex_rollout(CURRENT)
    copy = tmp_path / CURRENT.name
    shutil.copyfile(CURRENT, copy)
    assert read_codex_rollout(copy, whole.end_offset).lines_read == 0
    last = {
        "timestamp": "2026-04-20T09:15:43.260Z",
        "type": "response_item",
        "payload": {
            "type": "function_call_output",
            "call_id": "call_S1",
            "output": '{"output":"?? docs/decisions.md\\n","metadata":{"exit_code":0}}',
        },
    }
    copy.write_bytes(
        copy.read_bytes()[: whole.end_offset]
        + json.dumps(last, separators=(",", ":")).encode()
        + b"\n"
    )
    rest = read_codex_rollout(copy, whole.end_offset)
    assert (rest.lines_read, rest.turns, rest.events) == (1, [], [])
    assert {k: (o.success, o.output_preview) for k, o in rest.late_results.items()} == {
        "call_S1": (True, "?? docs/decisions.md")
    }


def test_turn_uuids_and_line_numbers_are_the_same_whichever_read_finds_them() -> None:
    whole = read_codex_rollout(CURRENT)
    for line in (5, 20, 30, 37):
        later = read_codex_rollout(CURRENT, offset_of_line(CURRENT, line))
        expected = [t for t in whole.turns if t.line_number >= line]
        assert later.turns == expected
        assert later.lines_read == 42 - line


def test_malformed_records_are_counted_and_the_rest_is_read() -> None:
    chunk = read_codex_rollout(CURRENT)
    assert chunk.malformed == 2  # line 30: a cut line glued to the next; 31: a string payload
    assert [t.line_number for t in chunk.turns if t.line_number > 31] == [36, 38, 40]


def test_odd_lines_never_stop_a_read(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    good = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "ok"}]}
    path.write_bytes(
        b"\xff not json\n[1, 2]\n{}\n\n"
        + json.dumps({"type": "turn_context", "payload": {"cwd": 42}}).encode()
        + b"\n"
        + json.dumps(
            {"type": "response_item", "payload": {"type": "message", "content": 7}}
        ).encode()
        + b"\n"
        + json.dumps(good).encode()
        + b"\n"
    )
    chunk = read_codex_rollout(path)
    assert (chunk.malformed, chunk.lines_read) == (3, 7)
    assert [(t.line_number, t.text) for t in chunk.turns] == [(7, "ok")]
    assert chunk.cwd is None


def test_lines_over_the_cap_are_skipped(tmp_path: Path) -> None:
    path = write_rollout(
        tmp_path / "r.jsonl",
        [
            output("c1", "x" * 5000),
            ("response_item", {"type": "message", "role": "user", "content": "after"}),
        ],
    )
    chunk = read_codex_rollout(path, max_line_bytes=1000)
    assert chunk.skipped == {"oversize": 1}
    assert [t.text for t in chunk.turns] == ["after"]
    assert chunk.end_offset == path.stat().st_size


def test_older_rollouts_without_envelopes_are_read() -> None:
    chunk = read_codex_rollout(OLDER)
    assert [(t.line_number, t.role, t.text[:30]) for t in chunk.turns] == [
        (5, "user", "Why does `pnpm build` fail on "),
        (12, "assistant", "CI reads `.nvmrc` and builds w"),
        (14, "user", "yes, pin node 20"),
        (17, "assistant", "Pinned Node 20 in `.nvmrc`; CI"),
    ]
    # No cwd or version in the bare meta line: the cwd comes from the environment context.
    assert (chunk.session_id, chunk.cwd, chunk.version) == (OLD_SID, "/home/dev/acme-api", None)
    assert chunk.skipped == {"boilerplate": 2, "reasoning": 1}
    assert chunk.malformed == 0
    # Bare items carry no time: every turn takes the session's start.
    assert {t.timestamp for t in chunk.turns} == {
        datetime(2025, 8, 2, 14, 5, 9, 412000, tzinfo=UTC)
    }
    assert [(e.tool, e.target, e.success, e.prompt_key) for e in chunk.events] == [
        ("local_shell", "cat .nvmrc && node --version", True, key(5, OLD_SID)),
        ("shell", "nvm exec 18 pnpm build", False, key(5, OLD_SID)),
        ("shell", ".nvmrc", True, key(14, OLD_SID)),
    ]
    assert chunk.events[1].error is not None
    assert chunk.events[1].error.startswith(
        "Exit code 2\nsrc/reports/aging.ts(14,27): error TS2550"
    )


def test_older_rollout_read_from_the_middle_keeps_its_session_facts() -> None:
    chunk = read_codex_rollout(OLDER, offset_of_line(OLDER, 9))
    assert (chunk.session_id, chunk.cwd) == (OLD_SID, "/home/dev/acme-api")
    assert chunk.late_results.keys() == {"call_L1"}
    assert chunk.events[0].prompt_key == key(5, OLD_SID)
    assert chunk.turns[0].timestamp == datetime(2025, 8, 2, 14, 5, 9, 412000, tzinfo=UTC)


def test_a_forked_rollout_keeps_its_own_session_id(tmp_path: Path) -> None:
    parent_meta = ("session_meta", {"id": "parent-id", "cwd": "/elsewhere"})
    prompt = ("response_item", {"type": "message", "role": "user", "content": "copied prompt"})
    chunk = read_codex_rollout(write_rollout(tmp_path / "r.jsonl", [parent_meta, prompt]))
    assert (chunk.session_id, chunk.cwd) == (SID, "/home/dev/acme-api")
    assert chunk.turns[0].uuid == key(3)


def test_a_file_without_meta_is_keyed_by_its_file_name(tmp_path: Path) -> None:
    path = tmp_path / f"rollout-2026-04-20T10-00-00-{SID.upper()}.jsonl"
    path.write_text(json.dumps({"type": "message", "role": "user", "content": "hello"}) + "\n")
    chunk = read_codex_rollout(path)
    assert chunk.session_id == SID
    assert chunk.turns[0].uuid == key(1)
    anonymous = tmp_path / "notes.jsonl"
    shutil.copyfile(path, anonymous)
    assert read_codex_rollout(anonymous).turns[0].uuid == "codex:notes:1"


def test_a_file_shorter_than_the_offset_gives_nothing(tmp_path: Path) -> None:
    chunk = read_codex_rollout(CURRENT, CURRENT.stat().st_size + 100)
    assert (chunk.lines_read, chunk.turns, chunk.end_offset) == (
        0,
        [],
        CURRENT.stat().st_size + 100,
    )


def test_turns_carry_the_branch_and_commit_of_the_session_meta() -> None:
    turns = read_codex_rollout(CURRENT).turns

    assert {(t.git_branch, t.git_commit) for t in turns} == {("main", "4c1e9a7d0b2f")}


def test_the_agent_s_calls_and_replies_are_kept_as_actions_under_their_prompt() -> None:
    chunk = read_codex_rollout(CURRENT)

    first = [a for a in chunk.actions if a.prompt_key == key(6)]
    assert [a.tool for a in first] == [
        "shell",
        "exec_command",
        None,
        "apply_patch",
        "shell_command",
        None,
    ]
    assert first[1].text.startswith('cmd: rg -n "INV-" src/invoices\n'), "arguments parsed"
    assert "*** Update File: src/invoices/number.ts" in first[3].text
    assert first[2].text == chunk.turns[1].text, "a reply is the agent's words"
    assert {a.prompt_key for a in chunk.actions} == {p.key for p in chunk.prompts}
