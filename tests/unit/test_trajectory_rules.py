"""Trajectories as text, the failed attempts that let distillation propose one, and the reply."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from server.core.errors import InvalidInput
from server.core.models.journal import JournalCall, JournalEntry
from server.domain.trajectories import (
    MAX_TASK_CHARS,
    Trajectory,
    checked,
    trajectory_content,
    trajectory_metadata,
)
from server.learning.attempts import MAX_ATTEMPTS_SHOWN, failed_attempts
from server.learning.distill_reply import parse_items

START = datetime(2026, 4, 14, 9, 0, tzinfo=UTC)


def call(minute: int, success: bool | None, target: str = "pnpm test", **extra: str) -> JournalCall:
    return JournalCall(
        tool_use_id=f"toolu_{minute}",
        tool="Bash",
        target=target,
        success=success,
        error=extra.get("error"),
        output_preview=extra.get("output"),
        at=START + timedelta(minutes=minute),
        agent_id=None,
    )


def entry(*calls: JournalCall) -> JournalEntry:
    return JournalEntry("s1", "acme-api", "p1", "fix the cursor", START, list(calls))


def test_content_is_one_labelled_line_per_part_and_spacing_is_tidied() -> None:
    trajectory = checked(Trajectory(" Fix the\n cursor ", "Cast created_at to text", ""))

    assert trajectory_content(trajectory) == (
        "Task: Fix the cursor\nWhat worked: Cast created_at to text"
    )
    assert trajectory_metadata(trajectory) == {
        "trajectory": {"task": "Fix the cursor", "worked": "Cast created_at to text", "avoid": ""}
    }


@pytest.mark.parametrize(
    ("trajectory", "message"),
    [
        (Trajectory("", "x"), "task is empty"),
        (Trajectory("x", " \n"), "worked is empty"),
        (Trajectory("x" * (MAX_TASK_CHARS + 1), "y"), f"the limit is {MAX_TASK_CHARS}"),
    ],
)
def test_a_trajectory_without_its_task_or_fix_is_refused(
    trajectory: Trajectory, message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        checked(trajectory)


def test_failed_calls_then_a_working_one_are_attempts_oldest_first() -> None:
    journal = [
        entry(call(1, False, error="Exit code 1\nFAIL cursor.test.ts")),
        entry(call(2, True, "git diff"), call(3, False, output="1 failed"), call(4, True)),
    ]

    assert failed_attempts(journal) == [
        "Bash pnpm test: Exit code 1 FAIL cursor.test.ts",
        "Bash pnpm test: 1 failed",
    ]


@pytest.mark.parametrize(
    "calls",
    [
        [call(1, True), call(2, True)],  # nothing failed
        [call(1, True), call(2, False)],  # it ended failing: no fix
        [call(1, False), call(2, None)],  # the last outcome is unknown
        [],
    ],
)
def test_no_attempts_unless_a_failure_was_followed_by_success(
    calls: list[JournalCall],
) -> None:
    assert failed_attempts([entry(*calls)]) == []


def test_only_the_latest_attempts_are_listed_in_call_order_across_prompts() -> None:
    failures = [call(minute, False, f"try {minute}") for minute in range(10)]
    journal = [entry(call(99, True)), entry(*failures)]  # newest prompt first, as a page is

    assert failed_attempts(journal) == [
        f"Bash try {minute}" for minute in range(10 - MAX_ATTEMPTS_SHOWN, 10)
    ]


def test_a_trajectory_item_is_parsed_from_its_fields() -> None:
    reply = json.dumps(
        {
            "memories": [
                {
                    "kind": "Trajectory",
                    "task": "Fix the cursor",
                    "worked": "Cast created_at to text",
                    "avoid": "Rounding to milliseconds",
                    "turns": [2],
                },
                {"kind": "trajectory", "task": "No fix given"},
            ]
        }
    )

    [item] = parse_items(reply, {2: 42})

    assert (item.kind, item.source_turns) == ("trajectory", [42])
    assert item.trajectory == Trajectory(
        "Fix the cursor", "Cast created_at to text", "Rounding to milliseconds"
    )
    assert item.content.splitlines()[-1] == "What to avoid: Rounding to milliseconds"
