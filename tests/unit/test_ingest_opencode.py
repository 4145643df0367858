"""OpenCode session reader, checked against tests/fixtures/opencode (its README says what each
message exercises), on a database laid out as OpenCode 1.18.33 keeps it."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from server.agents.registry import AGENTS
from server.core.errors import InvalidInput
from server.ingest.opencode import (
    OPENCODE,
    checked_opencode_session,
    default_opencode_root,
    discover_opencode_sessions,
    opencode_session_files,
    read_opencode_session,
    session_path,
)
from tests.opencode_sessions import MAIN_SESSION, SUBAGENT_SESSION, load_exports, set_part

IN_PROGRESS_MESSAGE = "msg_c51a07f0e001St3Uv4Wx5Yz6Ab"
IN_PROGRESS_PART = "prt_c51a07f0f001Cd7Ef8Gh9Ij0Kl"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return load_exports(tmp_path / "opencode" / "opencode.db")


def test_the_data_folder_follows_xdg_data_home(tmp_path: Path) -> None:
    assert default_opencode_root({}, tmp_path) == tmp_path / ".local/share/opencode"
    assert default_opencode_root({"XDG_DATA_HOME": "/data"}, tmp_path) == Path("/data/opencode")
    assert AGENTS["opencode"].format is OPENCODE and OPENCODE.source == "opencode"


def test_discovery_lists_each_session_with_its_sub_agents_session_under_the_parent(
    db: Path,
) -> None:
    found = {f.path.name: f for f in discover_opencode_sessions(db.parent)}

    assert set(found) == {MAIN_SESSION, SUBAGENT_SESSION}
    main, child = found[MAIN_SESSION], found[SUBAGENT_SESSION]
    assert (main.kind, main.session_id, main.agent_id) == ("session", None, None)
    assert (child.kind, child.session_id, child.agent_id) == (
        "subagent",
        MAIN_SESSION,
        SUBAGENT_SESSION,
    )
    assert main.path == session_path(db, MAIN_SESSION) and main.project_dir == "/home/dev/acme-api"
    assert main.size == read_opencode_session(main.path).end_offset > 0


def test_a_session_gives_what_was_said_and_leaves_out_what_nobody_said(db: Path) -> None:
    chunk = read_opencode_session(session_path(db, MAIN_SESSION))

    said = [(t.role, t.text.split(":")[0]) for t in chunk.turns]
    assert said == [
        ("user", "Add rate limiting to POST /invoices"),
        ("assistant", "I'll add express-rate-limit as middleware on POST /invoices, keyed by the"
         " client IP, 30 requests per minute."),
        ("user", "No, this repo uses pnpm, never npm. And limit per API key, not per IP"),
        ("assistant", "Switched to pnpm. Decision"),
        ("user", "Summarize what we did so far; the context is getting long."),
    ]  # fmt: skip
    assert chunk.skipped == {
        "synthetic": 1,  # the file an @ mention pulled in
        "reasoning": 1,
        "compaction_summary": 1,
        "in_progress": 1,  # the last reply, still streaming
    }
    assert chunk.malformed == 0
    assert chunk.cwd == "/home/dev/acme-api" and chunk.session_id == MAIN_SESSION
    assert chunk.title == "Rate limiting for POST /invoices" and chunk.version == "1.18.33"
    first = chunk.turns[0]
    assert first.uuid == "msg_c51a03e1a001Mk2Qp9Rt5Wx7Yz" and first.line_number == 1
    assert first.timestamp == datetime(2026, 3, 9, 10, 2, 11, tzinfo=UTC)
    assert "Called the Read tool" not in first.text
    assert [p.key for p in chunk.prompts] == [t.uuid for t in chunk.turns if t.role == "user"]


def test_tool_parts_become_events_with_their_outcome(db: Path) -> None:
    chunk = read_opencode_session(session_path(db, MAIN_SESSION))

    calls = [(e.tool, e.target, e.success) for e in chunk.events]
    assert calls == [
        ("bash", "npm install express-rate-limit", False),
        ("task", "Find createInvoice callers", True),
        ("bash", "pnpm add express-rate-limit", True),
        ("edit", "/home/dev/acme-api/src/middleware/rateLimit.ts", True),
    ]
    failed, _, installed, _ = chunk.events
    assert failed.error is not None and "configured to use pnpm" in failed.error
    assert failed.output_preview is None and failed.tool_use_id == "call_8RkQ2mW4"
    assert installed.output_preview is not None and "express-rate-limit 7.4.1" in (
        installed.output_preview
    )
    assert installed.prompt_key == "msg_c51a05d7e001Mn9Op0Qr1St2Uv", "after the correction"


def test_a_sub_agents_session_keeps_its_replies_under_the_parent_session(db: Path) -> None:
    chunk = read_opencode_session(session_path(db, SUBAGENT_SESSION))

    [reply] = chunk.turns
    assert reply.role == "assistant" and reply.text.startswith("Two routes call createInvoice")
    assert (reply.session_id, reply.agent_id, reply.is_sidechain) == (
        MAIN_SESSION,
        SUBAGENT_SESSION,
        True,
    )
    assert chunk.skipped == {"sidechain_prompt": 1} and chunk.prompts == []
    [grep] = chunk.events
    assert (grep.tool, grep.target, grep.agent_id) == ("grep", "createInvoice\\(", SUBAGENT_SESSION)


def test_a_reply_finished_after_a_read_is_read_the_next_time(db: Path) -> None:
    path = session_path(db, MAIN_SESSION)
    before = read_opencode_session(path)

    with sqlite3.connect(db) as connection:
        [(data,)] = connection.execute(
            "SELECT data FROM part WHERE id = ?", (IN_PROGRESS_PART,)
        ).fetchall()
        part = json.loads(data)
        part["text"] += " checks that the thirty-first is refused with 429."
        part["time"]["end"] = part["time"]["start"] + 4000
        set_part(connection, IN_PROGRESS_PART, IN_PROGRESS_MESSAGE, MAIN_SESSION, part)
        [(info,)] = connection.execute(
            "SELECT data FROM message WHERE id = ?", (IN_PROGRESS_MESSAGE,)
        ).fetchall()
        finished = json.loads(info)
        finished["time"]["completed"] = finished["time"]["created"] + 5000
        connection.execute(
            "UPDATE message SET data = ? WHERE id = ?", (json.dumps(finished), IN_PROGRESS_MESSAGE)
        )
    after = read_opencode_session(path)
    [found] = [f for f in discover_opencode_sessions(db.parent) if f.path == path]

    assert after.end_offset == found.size != before.end_offset
    assert after.turns[-1].uuid == IN_PROGRESS_MESSAGE
    assert after.turns[-1].text.endswith("refused with 429.")
    assert "in_progress" not in after.skipped
    assert [t.uuid for t in after.turns[:-1]] == [t.uuid for t in before.turns]


def test_unreadable_rows_are_counted_and_the_rest_is_read(db: Path) -> None:
    with sqlite3.connect(db) as connection:
        connection.execute(
            "UPDATE message SET data = '{not json' WHERE id = 'msg_c51a0790a001Ef7Gh8Ij9Kl0Mn'"
        )
        set_part(connection, "prt_zz", "msg_c51a05d7e001Mn9Op0Qr1St2Uv", MAIN_SESSION, "[1, 2]")

    chunk = read_opencode_session(session_path(db, MAIN_SESSION))

    assert chunk.malformed == 2
    assert [t.role for t in chunk.turns] == ["user", "assistant", "user", "assistant"]


def test_a_file_that_is_no_database_is_passed_over_and_a_gone_session_is_an_error(
    tmp_path: Path, db: Path
) -> None:
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "opencode.db").write_text("not a database")
    assert discover_opencode_sessions(tmp_path / "other") == []
    assert discover_opencode_sessions(tmp_path / "nowhere") == []
    with pytest.raises(OSError, match="no longer in OpenCode's database"):
        read_opencode_session(session_path(db, "ses_gone"))
    with pytest.raises(OSError, match="cannot read OpenCode's database"):
        read_opencode_session(session_path(tmp_path / "other" / "opencode.db", MAIN_SESSION))


def test_a_hook_may_name_only_a_session_in_an_opencode_database(db: Path, tmp_path: Path) -> None:
    named = str(session_path(db, MAIN_SESSION))
    assert checked_opencode_session(named) == Path(named)
    for wrong in (
        f"{MAIN_SESSION}",  # relative
        str(db.parent / "notes.db" / MAIN_SESSION),  # not OpenCode's file
        str(db / "msg_c51a03e1a001Mk2Qp9Rt5Wx7Yz"),  # not a session
        str(tmp_path / "gone" / "opencode.db" / MAIN_SESSION),  # no such database
    ):
        with pytest.raises(InvalidInput):
            checked_opencode_session(wrong)

    files = opencode_session_files(Path(named), MAIN_SESSION)
    assert [(f.path.name, f.kind, f.session_id) for f in files] == [
        (MAIN_SESSION, "session", None),
        (SUBAGENT_SESSION, "subagent", MAIN_SESSION),
    ]


def test_finished_calls_and_replies_are_kept_as_actions_under_their_prompt(db: Path) -> None:
    chunk = read_opencode_session(session_path(db, MAIN_SESSION))

    calls = [a for a in chunk.actions if a.tool is not None]
    replies = [a.text for a in chunk.actions if a.tool is None]
    assert [(a.tool, a.prompt_key) for a in calls] == [(e.tool, e.prompt_key) for e in chunk.events]
    assert all(a.text for a in calls), "each call's input as key: value lines"
    assert replies == [t.text for t in chunk.turns if t.role == "assistant"]
