"""Fuzzing the transcript reader: no line of a transcript file can crash an import.

Transcripts are written by another program, can be cut off mid-write, edited by hand or
planted by anyone who can write to ~/.claude. `read_transcript` must take any bytes: arbitrary
lines, and JSON records shaped like Claude Code's with fields of any type. Bounded to a few
hundred examples each, so the group stays fast.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.ingest.claude_code import read_transcript

pytestmark = pytest.mark.security

FUZZ = settings(
    max_examples=200,
    deadline=None,
    database=None,  # no .hypothesis folder; a failure prints its example
    # The autouse isolated_home fixture is function-scoped; each example writes its own file.
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=12,
)
# What the reader looks at (FORMATS.md §1), each given a random value or a plausible one.
RECORD_TYPES = ["user", "assistant", "summary", "attachment", "system", "custom-title", "ai-title"]
BLOCK_TYPES = ["text", "tool_use", "tool_result", "thinking", "image", "redacted_thinking"]
blocks = st.fixed_dictionaries(
    {"type": st.sampled_from(BLOCK_TYPES) | json_values},
    optional={
        "text": st.text(max_size=80) | json_values,
        "id": st.text(max_size=20) | json_values,
        "tool_use_id": st.text(max_size=20) | json_values,
        "name": st.sampled_from(["Bash", "Read", "Edit", "Task"]) | json_values,
        "input": st.fixed_dictionaries({}, optional={"command": json_values}) | json_values,
        "content": st.text(max_size=80) | st.lists(json_values, max_size=3) | json_values,
        "is_error": json_values,
    },
)
messages = st.fixed_dictionaries(
    {},
    optional={
        "role": st.sampled_from(["user", "assistant"]) | json_values,
        "id": st.text(max_size=20) | json_values,
        "content": st.text(max_size=120) | st.lists(blocks, max_size=4) | json_values,
    },
)
records = st.fixed_dictionaries(
    {"type": st.sampled_from(RECORD_TYPES) | json_values},
    optional={
        "uuid": st.uuids().map(str) | json_values,
        "parentUuid": json_values,
        "sessionId": st.uuids().map(str) | json_values,
        "timestamp": st.datetimes().map(lambda d: d.isoformat() + "Z") | json_values,
        "cwd": st.sampled_from(["/home/dev/acme", "", "relative/path"]) | json_values,
        "isSidechain": json_values,
        "isCompactSummary": json_values,
        "isMeta": json_values,
        "agentId": json_values,
        "message": messages | json_values,
        "summary": json_values,
        "leafUuid": json_values,
        "customTitle": json_values,
        "aiTitle": json_values,
        "attachment": json_values,
        "toolUseResult": json_values,
        "version": json_values,
    },
)


def read_lines(lines: list[bytes]) -> Any:
    """Write `lines` to a fresh transcript file and read it from the start, then from the middle."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "session.jsonl"
        data = b"".join(line + b"\n" for line in lines)
        path.write_bytes(data)
        chunk = read_transcript(path)
        middle = read_transcript(path, len(data) // 2)
    assert chunk.end_offset == len(data)
    assert middle.end_offset == len(data)
    return chunk


@FUZZ
@given(st.lists(st.binary(max_size=300), min_size=1, max_size=5))
def test_any_bytes_as_transcript_lines_never_crash_the_reader(lines: list[bytes]) -> None:
    read_lines(lines)


@FUZZ
@given(st.lists(records, min_size=1, max_size=6))
def test_records_with_fields_of_any_type_never_crash_the_reader(
    generated: list[dict[str, Any]],
) -> None:
    chunk = read_lines([json.dumps(record).encode() for record in generated])

    assert chunk.malformed == 0
    assert all(isinstance(turn.text, str) and turn.text for turn in chunk.turns)


@FUZZ
@given(st.lists(records, min_size=1, max_size=4), st.binary(min_size=1, max_size=40))
def test_a_record_cut_or_corrupted_mid_line_is_skipped_and_the_rest_read(
    generated: list[dict[str, Any]], garbage: bytes
) -> None:
    encoded = [json.dumps(record).encode() for record in generated]
    cut = encoded[0][: len(encoded[0]) // 2] + garbage.replace(b"\n", b" ")

    chunk = read_lines([cut, *encoded[1:]])

    assert chunk.lines_read == len(encoded)
