"""GitHub Copilot CLI session reader, checked against tests/fixtures/copilot (its README says
which lines are the real CLI's and what each line exercises)."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from server.agents.registry import AGENTS, SESSION_FORMATS
from server.core.errors import InvalidInput
from server.ingest.copilot import (
    COPILOT,
    checked_copilot_session,
    copilot_session_files,
    default_copilot_root,
    discover_copilot_sessions,
    read_copilot_events,
)

ROOT = Path(__file__).resolve().parents[1] / "fixtures" / "copilot" / "session-state"
SID = "a8678f2e-87b4-4a8e-8bc7-6d5454120560"
EVENTS = ROOT / SID / "events.jsonl"
FIRST_PROMPT = "26ce7741-3b4d-48db-a815-3a6ac7763e4d"  # the event id of line 2
SECOND_PROMPT = "0b1c2d3e-0000-4000-8000-000000000001"  # line 12


def offset_of_line(path: Path, line: int) -> int:
    """Byte offset where 1-based `line` starts."""
    data = path.read_bytes()
    offset = 0
    for _ in range(line - 1):
        offset = data.index(b"\n", offset) + 1
    return offset


def test_the_sessions_folder_follows_copilot_home(tmp_path: Path) -> None:
    assert default_copilot_root({}, tmp_path) == tmp_path / ".copilot" / "session-state"
    assert default_copilot_root({"COPILOT_HOME": "/srv/cp"}, tmp_path) == Path(
        "/srv/cp/session-state"
    )
    assert AGENTS["copilot"].format is COPILOT and SESSION_FORMATS["copilot"] is COPILOT


def test_discovery_lists_each_session_folders_events(tmp_path: Path) -> None:
    root = Path(shutil.copytree(ROOT, tmp_path / "session-state"))
    (root / "not-a-session").mkdir()  # a folder without events.jsonl
    (root / "stray.jsonl").write_text("{}\n")

    found = discover_copilot_sessions(root)

    assert [(f.path, f.session_id, f.kind) for f in found] == [
        (root / SID / "events.jsonl", SID, "session")
    ]
    assert found[0].size == EVENTS.stat().st_size
    assert discover_copilot_sessions(tmp_path / "missing") == []


def test_a_session_gives_the_prompts_as_typed_and_the_replies() -> None:
    chunk = read_copilot_events(EVENTS)

    said = [(t.line_number, t.role, t.agent_id) for t in chunk.turns]
    assert said == [
        (2, "user", None),
        (10, "assistant", None),
        (12, "user", None),
        (20, "assistant", None),
        (23, "assistant", "general-1"),
        (28, "assistant", None),
    ]
    first = chunk.turns[0]
    assert first.text == "We use pnpm in acme-api, never npm. What is in this folder?"
    assert "current_datetime" not in " ".join(t.text for t in chunk.turns)
    assert (first.uuid, first.session_id, first.cwd) == (FIRST_PROMPT, SID, "/home/dev/acme-api")
    assert first.timestamp == datetime(2026, 11, 28, 13, 9, 28, 824000, tzinfo=UTC)
    assert (first.git_branch, first.git_commit[:7]) == ("main", "4f2a9c1")  # type: ignore[index]
    assert chunk.turns[4].is_sidechain and not first.is_sidechain
    assert [p.key for p in chunk.prompts] == [FIRST_PROMPT, SECOND_PROMPT]
    assert (chunk.session_id, chunk.cwd, chunk.version) == (SID, "/home/dev/acme-api", "1.0.102")
    assert chunk.title == "Invoice numbering"


def test_what_nobody_typed_is_skipped_by_reason_and_a_cut_line_is_malformed() -> None:
    chunk = read_copilot_events(EVENTS)

    assert chunk.skipped == {"injected": 1, "sidechain_prompt": 1, "system": 1}
    assert chunk.malformed == 1  # line 18; every line after it is read
    assert chunk.lines_read == 30  # line 31 has no newline yet
    assert chunk.end_offset == offset_of_line(EVENTS, 31)


def test_tool_calls_carry_their_outcome_from_the_execution_complete_event() -> None:
    chunk = read_copilot_events(EVENTS)

    calls = {e.tool_use_id: e for e in chunk.events}
    assert [(e.tool, e.target, e.success) for e in chunk.events] == [
        ("bash", "ls", True),
        ("bash", "pnpm test invoices", False),
        ("view", "/home/dev/acme-api/src/invoices.ts", False),
        ("task", "Fix invoice numbering", True),
        ("edit", "/home/dev/acme-api/src/invoices.ts", True),
    ]
    assert calls["call_1"].output_preview is not None
    assert "pnpm-lock.yaml" in calls["call_1"].output_preview
    assert "expected INV-acme-7" in (calls["call_2"].error or "")  # exit code 1
    assert calls["call_3"].error == "Path does not exist"
    assert calls["call_5"].agent_id == "general-1"
    assert (
        calls["call_1"].prompt_key == FIRST_PROMPT and calls["call_2"].prompt_key == SECOND_PROMPT
    )
    assert [a.tool for a in chunk.actions if a.tool] == ["bash", "bash", "view", "task", "edit"]


def test_a_read_from_the_middle_knows_the_session_and_the_prompt_and_finishes_the_file(
    tmp_path: Path,
) -> None:
    events = tmp_path / "session-state" / SID / "events.jsonl"
    events.parent.mkdir(parents=True)
    shutil.copy(EVENTS, events)
    start = offset_of_line(events, 15)

    middle = read_copilot_events(events, start)
    with events.open("a") as handle:
        handle.write("\n")  # line 31 is complete now
    end = read_copilot_events(events, middle.end_offset)

    assert (middle.session_id, middle.cwd, middle.version) == (SID, "/home/dev/acme-api", "1.0.102")
    assert [t.line_number for t in middle.turns] == [20, 23, 28]
    assert {e.prompt_key for e in middle.events} == {SECOND_PROMPT}
    assert middle.prompts == []
    assert [(t.line_number, t.text) for t in end.turns] == [(31, "And the CHANGELOG?")]
    assert end.turns[0].cwd == "/home/dev/acme-api" and end.lines_read == 1


def test_a_result_read_after_its_call_is_a_late_result(tmp_path: Path) -> None:
    events = tmp_path / SID / "events.jsonl"
    events.parent.mkdir()
    lines = EVENTS.read_bytes().splitlines(keepends=True)
    events.write_bytes(b"".join(lines[:5]))  # the `ls` call, not its result

    first = read_copilot_events(events)
    events.write_bytes(b"".join(lines[:7]))
    later = read_copilot_events(events, first.end_offset)

    assert [(e.tool_use_id, e.success) for e in first.events] == [("call_1", None)]
    assert later.events == [] and later.late_results["call_1"].success is True


def test_events_of_shapes_no_copilot_writes_are_malformed_and_the_rest_read(
    tmp_path: Path,
) -> None:
    events = tmp_path / SID / "events.jsonl"
    events.parent.mkdir()
    start = EVENTS.read_bytes().splitlines(keepends=True)[0]
    odd = [
        {"type": "assistant.message", "data": {"content": "ok", "toolRequests": [{"name": []}]}},
        "a plain string",
        {"type": "user.message", "data": "not an object"},
        {"type": "user.message", "data": {"content": "Keep going with pnpm."}, "id": "u9"},
    ]
    events.write_bytes(start + b"".join(json.dumps(o).encode() + b"\n" for o in odd))

    chunk = read_copilot_events(events)

    assert chunk.malformed == 2  # a line that is no object; an event whose data is none
    assert [t.text for t in chunk.turns] == ["ok", "Keep going with pnpm."]
    assert [e.tool for e in chunk.events] == ["unknown"]  # a call whose name is a list


def test_a_hook_may_name_only_a_copilot_events_file(tmp_path: Path) -> None:
    events = tmp_path / "session-state" / SID / "events.jsonl"
    events.parent.mkdir(parents=True)
    shutil.copy(EVENTS, events)

    assert checked_copilot_session(str(events)) == events
    [file] = copilot_session_files(events, SID)
    assert (file.path, file.session_id, file.size) == (events, SID, events.stat().st_size)
    for wrong in (events.parent / "workspace.yaml", tmp_path / SID / "events.jsonl"):
        with pytest.raises(InvalidInput):
            checked_copilot_session(str(wrong))
    with pytest.raises(InvalidInput):
        checked_copilot_session("session-state/x/events.jsonl")
