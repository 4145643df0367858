"""The training-record rules (server/domain/training.py): the validator, cutting, dedup, split."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from server.domain.training import (
    cut_text,
    record_hash,
    record_line,
    session_fraction,
    tool_definitions,
    validate_record,
    validation_sessions,
)

LIMITS = {"max_message_chars": 8_000, "max_record_chars": 32_000}


def call(call_id: str, name: str = "Bash", arguments: str = '{"command": "ls"}') -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def good_record() -> dict[str, Any]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent working in /home/dev/demo."},
        {"role": "user", "content": "list the files, then read the readme"},
        {"role": "assistant", "content": "Looking.", "tool_calls": [call("a"), call("b", "Read")]},
        {"role": "tool", "tool_call_id": "b", "content": "# demo"},
        {"role": "tool", "tool_call_id": "a", "content": "README.md"},
        {"role": "assistant", "content": None, "tool_calls": [call("c")]},
        {"role": "tool", "tool_call_id": "c", "content": ""},
        {"role": "assistant", "content": "One file: README.md, titled demo."},
    ]
    return {"messages": messages, "tools": tool_definitions(messages)}


def codes(record: Any, **limits: int) -> list[str]:
    return [problem.code for problem in validate_record(record, **{**LIMITS, **limits})]


def test_a_complete_record_with_parallel_calls_passes() -> None:
    assert validate_record(good_record(), **LIMITS) == []


def test_a_call_without_its_result_is_reported_by_id() -> None:
    record = good_record()
    del record["messages"][4]  # the result of call "a"

    problems = validate_record(record, **LIMITS)

    assert [(p.code, p.message) for p in problems] == [
        ("missing_result", "call a (Bash) has no result")
    ]


def test_a_record_cut_after_a_call_lacks_its_result_and_its_answer() -> None:
    record = good_record()
    record["messages"] = record["messages"][:6]  # ends with the assistant's call "c"

    assert sorted(codes(record)) == ["missing_result", "no_answer"]


def test_a_result_that_answers_no_call_is_reported() -> None:
    record = good_record()
    record["messages"].insert(7, {"role": "tool", "tool_call_id": "zzz", "content": "?"})

    assert codes(record) == ["orphan_result"]


def test_a_second_result_for_one_call_is_reported() -> None:
    record = good_record()
    record["messages"].insert(7, {"role": "tool", "tool_call_id": "c", "content": "again"})

    assert codes(record) == ["misplaced_result"]


def test_a_result_after_a_later_assistant_message_is_misplaced() -> None:
    record = good_record()
    late = record["messages"].pop(4)
    record["messages"].insert(6, late)

    assert sorted(codes(record)) == ["misplaced_result", "missing_result"]


@pytest.mark.parametrize("arguments", ["{not json", "[1, 2]", '"ls"', ""])
def test_arguments_must_parse_as_a_json_object(arguments: str) -> None:
    record = good_record()
    record["messages"][5]["tool_calls"][0]["function"]["arguments"] = arguments

    assert codes(record) == ["bad_arguments"]


def test_a_call_without_an_id_is_reported() -> None:
    record = good_record()
    record["messages"][5]["tool_calls"][0]["id"] = ""

    assert "bad_call" in codes(record)


def test_call_ids_must_be_unique_in_a_record() -> None:
    record = good_record()
    record["messages"][5]["tool_calls"][0]["id"] = "a"
    record["messages"][6]["tool_call_id"] = "a"

    assert codes(record) == ["duplicate_call", "misplaced_result"]


def test_fields_other_than_messages_and_tools_are_refused() -> None:
    record = good_record() | {"session_id": "abc"}

    problems = validate_record(record, **LIMITS)

    assert [(p.code, p.message) for p in problems] == [
        ("shape", "fields the format does not allow: session_id")
    ]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda m: m.insert(7, {"role": "system", "content": "late"}), ["order"]),
        (lambda m: m.pop(1), ["order"]),
        (lambda m: m.__setitem__(1, {"role": "human", "content": "hi"}), ["order", "order"]),
        (lambda m: m.__setitem__(1, {"role": "user", "content": "  "}), ["empty"]),
        (lambda m: m.append({"role": "assistant", "content": ""}), ["empty", "no_answer"]),
    ],
    ids=["system-later", "no-user", "unknown-role", "blank-prompt", "blank-answer"],
)
def test_roles_must_come_in_a_valid_order(change: Any, expected: list[str]) -> None:
    record = good_record()
    change(record["messages"])

    assert codes(record) == expected


def test_messages_must_be_a_non_empty_list_of_objects() -> None:
    assert codes({"messages": []}) == ["shape"]
    assert codes({"messages": ["hi"]}) == ["shape"]
    assert codes(["not", "an", "object"]) == ["shape"]


def test_a_called_tool_must_be_defined_when_tools_are_listed() -> None:
    record = good_record()
    record["tools"] = [t for t in record["tools"] if t["function"]["name"] != "Read"]

    assert codes(record) == ["undefined_tool"]


def test_a_message_over_the_limit_is_reported_with_its_size() -> None:
    record = good_record()
    record["messages"][1]["content"] = "x" * 120

    problems = validate_record(record, max_message_chars=100, max_record_chars=32_000)

    assert [p.message for p in problems] == ["message 2 (user) has 120 characters, over 100"]


def test_call_arguments_count_toward_the_message_size() -> None:
    record = good_record()
    record["messages"][5]["tool_calls"][0]["function"]["arguments"] = json.dumps({"c": "y" * 200})

    assert codes(record, max_message_chars=200) == ["too_long"]


def test_a_record_over_the_limit_is_reported() -> None:
    record = good_record()
    size = len(record_line(record))

    problems = validate_record(record, max_message_chars=8_000, max_record_chars=size - 1)

    assert [p.message for p in problems] == [
        f"the record has {size:,} characters, over {size - 1:,}"
    ]
    assert validate_record(record, max_message_chars=8_000, max_record_chars=size) == []


def test_cut_text_keeps_short_text_and_marks_what_it_cut() -> None:
    assert cut_text("short", 100) == ("short", False)

    cut, was_cut = cut_text("x" * 10_000, 1_000)

    assert was_cut
    assert len(cut) <= 1_000
    assert cut.startswith("x" * 900)
    assert cut.endswith("[... 9,060 more characters cut]")


def test_records_with_the_same_messages_hash_alike() -> None:
    record = good_record()
    same = copy.deepcopy(record)
    same.pop("tools")
    other = copy.deepcopy(record)
    other["messages"][1]["content"] = "list the files"

    assert record_hash(record) == record_hash(same)
    assert record_hash(record) != record_hash(other)


def test_tool_definitions_name_each_tool_once_with_the_argument_types_seen() -> None:
    messages = [
        {"role": "assistant", "tool_calls": [call("a", "Read", '{"file_path": "a", "limit": 5}')]},
        {
            "role": "assistant",
            "tool_calls": [call("b", "Read", '{"file_path": "b", "limit": "x"}')],
        },
        {"role": "assistant", "tool_calls": [call("c", "Bash", '{"command": "ls"}')]},
    ]

    tools = tool_definitions(messages)

    assert [t["function"]["name"] for t in tools] == ["Read", "Bash"]
    assert tools[0]["function"]["parameters"] == {
        "type": "object",
        "properties": {
            "file_path": {"type": "string"},
            "limit": {"description": "integer or string"},
        },
    }


def test_the_split_is_by_session_deterministic_and_near_the_share() -> None:
    sessions = [f"session-{n}" for n in range(2_000)]

    chosen = validation_sessions(sessions, 0.1)

    assert chosen == validation_sessions(reversed(sessions), 0.1)
    assert chosen == {s for s in sessions if session_fraction(s) < 0.1}
    assert 150 < len(chosen) < 250


def test_a_single_session_always_trains() -> None:
    assert validation_sessions(["only"], 0.9) == set()


def test_no_validation_share_means_no_validation() -> None:
    assert validation_sessions(["a", "b", "c"], 0.0) == set()


def test_two_sessions_or_more_leave_neither_side_empty() -> None:
    sessions = ["a", "b", "c"]
    lowest = min(sessions, key=session_fraction)
    highest = max(sessions, key=session_fraction)

    assert validation_sessions(sessions, 1e-12) == {lowest}
    assert validation_sessions(sessions, 0.999999) == set(sessions) - {highest}
