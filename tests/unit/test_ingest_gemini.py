"""Gemini CLI session reader, checked against tests/fixtures/gemini (its README says what each
fixture exercises and which Gemini CLI versions it follows)."""

from __future__ import annotations

import hashlib
import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

from server.ingest.gemini import (
    default_gemini_root,
    discover_gemini_sessions,
    gemini_tool_target,
    read_gemini_session,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gemini"
ROOT = FIXTURES / "tmp"
API_HASH = hashlib.sha256(b"/home/dev/acme-api").hexdigest()
WEB_HASH = hashlib.sha256(b"/home/dev/acme-web").hexdigest()
SESSION = "7c2e91ab-4f3d-4b8e-9a61-2d5c8e0f1b37"
SUB_SESSION = "e41b07c9-2a5d-4f6e-8c13-9b70d2a4f5c8"
MAIN = ROOT / "acme-api" / "chats" / "session-2026-05-04T09-12-7c2e91ab.jsonl"
SUB = ROOT / "acme-api" / "chats" / SESSION / f"{SUB_SESSION}.jsonl"
OLD = ROOT / WEB_HASH / "chats" / "session-2025-09-18T14-03-3b44bc68.json"


def message_uuid(n: int, session: str = SESSION) -> str:
    return f"gemini:{session}:b{n:02d}f4c2e-1a3d-4c5b-9e7f-60812a3c{n:04d}"


# (line, role, a distinctive part of the text) of every turn the main session should yield.
MAIN_TURNS = [
    (5, "user", "Decision: invoices are numbered per tenant, INV-<tenant>-<seq>"),
    (7, "assistant", "I'll add a `tenant_counters` table"),
    (10, "user", "no, use pnpm: this repo is a pnpm workspace"),
    (14, "assistant", "`nextInvoiceNumber('acme')` now returns `INV-acme-000042`"),
    (16, "user", "Also reset the sequence every January."),
    (17, "assistant", "I'll reset `tenant_counters.seq`"),
    (19, "user", "Scratch that: sequences never reset"),
    (23, "assistant", "Kept the sequence monotonic per tenant"),
    (27, "user", "Commit it with a conventional commit message."),
    (28, "assistant", "Committing with a conventional commit message."),
]


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def test_discovery_finds_sessions_subagents_and_old_documents() -> None:
    found = discover_gemini_sessions(ROOT)
    assert [(f.path, f.format, f.is_subagent, f.parent_session_id) for f in found] == [
        (SUB, "jsonl", True, SESSION),
        (MAIN, "jsonl", False, None),
        (OLD, "json", False, None),
    ]
    by_path = {f.path: f for f in found}
    assert by_path[MAIN].project_dir == "acme-api"
    assert by_path[MAIN].project_root == "/home/dev/acme-api"  # the folder's .project_root
    assert by_path[MAIN].project_hash == API_HASH
    assert by_path[OLD].project_root is None  # an old hash folder names no path
    assert by_path[OLD].project_hash == WEB_HASH
    assert by_path[MAIN].size == MAIN.stat().st_size


def test_discovery_of_a_missing_root_is_empty(tmp_path: Path) -> None:
    assert discover_gemini_sessions(tmp_path / "no-such-dir") == []


def test_discovery_skips_a_migrated_json_backups_and_temp_files(tmp_path: Path) -> None:
    chats = tmp_path / "tmp" / API_HASH / "chats"
    chats.mkdir(parents=True)
    for name in (
        "session-2026-04-28T16-40-1a2b3c4d.json",  # resumed in 0.39+: copied into the .jsonl
        "session-2026-04-28T16-40-1a2b3c4d.jsonl",
        "session-2026-04-29T10-00-9f8e7d6c.jsonl.unreadable-1777000000000",
        "session-2026-04-29T10-00-9f8e7d6c.jsonl.tmp-4242",
        "notes.txt",
    ):
        (chats / name).write_text("{}\n")
    found = discover_gemini_sessions(tmp_path / "tmp")
    assert [f.path.name for f in found] == ["session-2026-04-28T16-40-1a2b3c4d.jsonl"]


def test_discovery_names_the_root_from_projects_json_without_a_marker(tmp_path: Path) -> None:
    (tmp_path / "tmp" / "acme-api" / "chats").mkdir(parents=True)
    shutil.copy(MAIN, tmp_path / "tmp" / "acme-api" / "chats" / MAIN.name)
    shutil.copy(FIXTURES / "projects.json", tmp_path / "projects.json")
    [found] = discover_gemini_sessions(tmp_path / "tmp")
    assert found.project_root == "/home/dev/acme-api"
    assert found.project_hash == API_HASH
    assert read_gemini_session(found.path).cwd == "/home/dev/acme-api"


def test_default_root_honours_gemini_cli_home(tmp_path: Path) -> None:
    assert default_gemini_root({}, tmp_path) == tmp_path / ".gemini" / "tmp"
    assert default_gemini_root({"GEMINI_CLI_HOME": "/srv/job"}, tmp_path) == Path(
        "/srv/job/.gemini/tmp"
    )


def test_main_session_yields_exactly_the_prompts_and_replies() -> None:
    chunk = read_gemini_session(MAIN)
    assert [(t.line_number, t.role) for t in chunk.turns] == [(n, r) for n, r, _ in MAIN_TURNS]
    for turn, (_, _, snippet) in zip(chunk.turns, MAIN_TURNS, strict=True):
        assert snippet in turn.text
        assert turn.session_id == SESSION
        assert turn.cwd == "/home/dev/acme-api"
        assert turn.agent_id is None
        assert not turn.is_sidechain
    assert chunk.turns[0].uuid == message_uuid(3)
    assert chunk.turns[0].timestamp == datetime(2026, 5, 4, 9, 13, 2, 871000, tzinfo=UTC)
    assert (chunk.session_id, chunk.cwd, chunk.version) == (SESSION, "/home/dev/acme-api", None)
    assert chunk.title == "Per-tenant invoice numbers INV-<tenant>-<seq>, installed with pnpm"


def test_injected_and_expanded_text_is_left_out_of_prompts() -> None:
    texts = {t.line_number: t.text for t in read_gemini_session(MAIN).turns}
    assert "<hook_context>" not in texts[5]  # what a BeforeAgent hook appended to the prompt
    assert "integer cents" not in texts[5]
    # The typed text (displayContent), not the @-file expansion sent to the model.
    assert texts[19] == (
        "Scratch that: sequences never reset, they stay monotonic per tenant. See @docs/billing.md"
    )
    all_text = "\n".join(texts.values())
    for absent in ("/memory show", "Current memory content", "API Error", ".geminiignore"):
        assert absent not in all_text
    assert "<state_snapshot>" not in all_text  # a compression summary inside $set.messages


def test_skip_reasons_are_counted() -> None:
    assert read_gemini_session(MAIN).skipped == {
        "command": 1,  # /memory show
        "error": 1,
        "history_rewrite": 1,  # $set.messages
        "info": 1,
        "rewind": 1,
        "rewritten": 2,  # two messages appended again with their tool calls
        "thoughts": 2,
        "tool_use": 2,  # messages that only call tools
        "warning": 1,
    }


def test_a_prompt_record_per_human_prompt_keyed_by_its_turn() -> None:
    chunk = read_gemini_session(MAIN)
    prompts = [(p.key, p.text) for p in chunk.prompts]
    user_turns = [(t.uuid, t.text) for t in chunk.turns if t.role == "user"]
    assert prompts == user_turns
    assert all(p.uuid == p.key and p.session_id == SESSION for p in chunk.prompts)


def test_tool_calls_carry_their_outcomes_targets_and_prompts() -> None:
    events = {e.tool_use_id: e for e in read_gemini_session(MAIN).events}
    npm = events["run_shell_command-1777885999001-a41f3c"]
    assert (npm.tool, npm.target) == ("run_shell_command", "npm install --save-dev node-pg-migrate")
    assert npm.success is False  # recorded as "success", but the command exited with code 1
    assert npm.error is not None and npm.error.startswith("npm error code EUNSUPPORTEDPROTOCOL")
    assert npm.output_preview is None
    assert npm.prompt_key == message_uuid(3)
    assert npm.uuid == message_uuid(4)
    assert npm.timestamp == datetime(2026, 5, 4, 9, 13, 31, 402000, tzinfo=UTC)

    pnpm = events["run_shell_command-1777886052113-0be7d9"]
    assert (pnpm.success, pnpm.error, pnpm.prompt_key) == (True, None, message_uuid(5))
    assert pnpm.output_preview == "Packages: +12\n++++++++++++\nDone in 2.1s"

    read = events["read_file-1777886055870-77c0aa"]
    assert (read.target, read.success) == ("/home/dev/acme-api/src/billing/invoice.ts", True)
    assert read.output_preview is not None and read.output_preview.startswith("export interface")

    edit = events["replace-1777886061254-c9e214"]
    assert (edit.tool, edit.success, edit.output_preview) == ("replace", False, None)
    assert edit.error is not None and edit.error.startswith("Failed to edit, 0 occurrences")

    commit = events["run_shell_command-1777887270301-e08c41"]
    assert (commit.success, commit.prompt_key) == (True, message_uuid(16))
    assert len(events) == 6


def test_tool_targets_cover_gemini_argument_names() -> None:
    assert gemini_tool_target({"pattern": "INV-", "dir_path": "src"}) == "INV-"
    assert gemini_tool_target({"absolute_path": "/home/dev/a.ts"}) == "/home/dev/a.ts"
    assert gemini_tool_target({"dir_path": "src"}) == "src"
    assert gemini_tool_target({"query": "pnpm workspace protocol"}) == "pnpm workspace protocol"
    assert gemini_tool_target({"include": ["src/**/*.ts", "docs"]}) == "src/**/*.ts, docs"
    assert gemini_tool_target({"objective": "Find the parsers"}) is None


def test_a_rewind_keeps_what_was_said_and_is_counted() -> None:
    chunk = read_gemini_session(MAIN)
    uuids = [t.uuid for t in chunk.turns]
    assert message_uuid(9) in uuids  # the prompt the rewind went back to
    assert message_uuid(10) in uuids  # and the reply it dropped from Gemini's view
    assert message_uuid(11) in uuids  # what was said instead
    assert chunk.skipped["rewind"] == 1


def test_a_malformed_line_is_counted_and_the_rest_is_read() -> None:
    chunk = read_gemini_session(MAIN)
    assert chunk.malformed == 1
    assert {27, 28} <= {t.line_number for t in chunk.turns}  # after the malformed line 26


def test_a_half_written_last_line_is_left_for_the_next_read(tmp_path: Path) -> None:
    lines = lines_of(MAIN)
    complete = b"".join(lines[:-1])
    chunk = read_gemini_session(MAIN)
    assert (chunk.end_offset, chunk.lines_read) == (len(complete), len(lines) - 1)

    path = tmp_path / MAIN.name
    path.write_bytes(b"".join(lines) + b'1"}]}\n')  # the writer finishes the line
    later = read_gemini_session(path, chunk.end_offset)
    assert [(t.line_number, t.role, t.text) for t in later.turns] == [
        (31, "user", "Next, add a credit-note numbering scheme CN-<tenant>-1")
    ]
    assert later.end_offset == path.stat().st_size
    assert [p.key for p in later.prompts] == [later.turns[0].uuid]
    assert read_gemini_session(path, later.end_offset).turns == []


def test_incremental_reads_give_everything_once_wherever_they_split(tmp_path: Path) -> None:
    lines = lines_of(MAIN)[:-1]  # complete lines only
    whole = read_gemini_session(MAIN)
    path = tmp_path / MAIN.name
    for split in range(1, len(lines)):
        path.write_bytes(b"".join(lines[:split]))
        first = read_gemini_session(path)
        path.write_bytes(b"".join(lines))
        second = read_gemini_session(path, first.end_offset)
        turns = first.turns + second.turns
        assert [(t.uuid, t.line_number, t.text) for t in turns] == [
            (t.uuid, t.line_number, t.text) for t in whole.turns
        ], split
        events = first.events + second.events
        assert [e.tool_use_id for e in events] == [e.tool_use_id for e in whole.events], split
        assert events == whole.events, split  # same outcomes and prompt keys
        assert first.prompts + second.prompts == whole.prompts, split
        assert second.session_id == SESSION
        assert second.end_offset == len(b"".join(lines))


def test_subagent_keeps_its_report_and_skips_the_task_prompt() -> None:
    chunk = read_gemini_session(SUB)
    [turn] = chunk.turns
    assert turn.text.startswith("Report: invoice numbers are parsed in `src/billing/parse.ts`")
    assert (turn.role, turn.agent_id, turn.is_sidechain) == ("assistant", SUB_SESSION, True)
    assert turn.session_id == SESSION  # the parent's, as for Claude Code sub-agents
    assert turn.uuid == f"gemini:{SUB_SESSION}:c1d0e2f3-4a5b-4c6d-8e7f-901a2b3c4d03"
    assert chunk.skipped == {"sidechain_prompt": 1, "thoughts": 1, "tool_use": 1}
    assert chunk.prompts == []
    [grep] = chunk.events
    assert (grep.tool, grep.target, grep.success) == ("grep_search", "INV-", True)
    assert (grep.agent_id, grep.prompt_key) == (SUB_SESSION, None)
    assert chunk.cwd == "/home/dev/acme-api"


def test_old_json_session_is_read_whole_with_stable_ids() -> None:
    first = read_gemini_session(OLD)
    assert [(t.line_number, t.role) for t in first.turns] == [
        (1, "user"),
        (3, "assistant"),
        (4, "user"),
        (5, "assistant"),
    ]
    assert "Decision: store and compare all dates in UTC" in first.turns[2].text
    assert first.session_id == "3b44bc68-91d2-4c07-b5e3-6f18a2d9c430"
    assert first.cwd is None  # only the project hash is recorded
    assert first.title == "Fix the UTC-8 date filter; store dates in UTC"
    assert (first.end_offset, first.lines_read, first.malformed) == (OLD.stat().st_size, 6, 0)
    assert first.skipped == {"info": 1, "thoughts": 1, "tool_use": 1}
    [read] = first.events
    assert (read.target, read.success) == ("/home/dev/acme-web/src/filters/dateRange.ts", True)
    again = read_gemini_session(OLD, first.end_offset)  # rewritten whole: read whole again
    assert again.turns == first.turns
    assert again.events == first.events


def test_a_broken_json_document_is_malformed_and_retried(tmp_path: Path) -> None:
    path = tmp_path / OLD.name
    data = OLD.read_bytes()
    path.write_bytes(data[: len(data) // 2])  # caught while Gemini rewrites it
    broken = read_gemini_session(path, 1234)
    assert (broken.malformed, broken.turns, broken.events) == (1, [], [])
    assert broken.end_offset == 1234  # the next read tries again
    path.write_bytes(data)
    assert len(read_gemini_session(path, broken.end_offset).turns) == 4


def test_odd_records_are_malformed_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "session-2026-05-05T08-00-aaaaaaaa.jsonl"
    records = [
        {"sessionId": "aaaaaaaa-0000", "projectHash": API_HASH},
        {"id": "m1", "type": "user", "content": {"text": 3}},
        {"id": "m2", "type": "gemini", "content": "Fine.", "toolCalls": [{"id": 7}, "x"]},
        {"id": "m3", "type": "user", "content": "  ", "timestamp": "not a time"},
        [1, 2],
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + "\n")
    chunk = read_gemini_session(path)
    assert [t.text for t in chunk.turns] == ["Fine."]
    assert chunk.events == []
    assert chunk.malformed == 1
    assert chunk.skipped == {"empty": 2}


def test_calls_and_replies_are_kept_as_actions_under_their_prompt() -> None:
    chunk = read_gemini_session(MAIN)

    calls = [a for a in chunk.actions if a.tool is not None]
    replies = [a.text for a in chunk.actions if a.tool is None]
    assert [a.tool for a in calls] == [e.tool for e in chunk.events]
    assert [a.prompt_key for a in calls] == [e.prompt_key for e in chunk.events]
    assert all(a.text for a in calls), "each call's args as key: value lines"
    assert replies == [t.text for t in chunk.turns if t.role == "assistant"]


def test_a_prompt_is_read_without_the_hook_context_gemini_folds_into_it() -> None:
    from server.ingest.gemini_messages import without_hook_context

    prompt = (
        "<hook_context>Memory context: acme-api\n- [distilled #1] Parquet exports.</hook_context>"
        "\n\nhow is POST /invoices rate limited?"
    )

    assert without_hook_context(prompt).strip() == "how is POST /invoices rate limited?"
    assert without_hook_context("no context here") == "no context here"
