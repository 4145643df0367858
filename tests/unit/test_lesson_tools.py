"""A lesson names a tool as one agent calls it and applies to the same tool in the others."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from server.core.models.lessons import Lesson
from server.domain.lessons import matching, same_tool

AT = datetime(2026, 8, 22, tzinfo=UTC)


def lesson(tool: str, pattern: str = "staging", lesson_id: int = 1) -> Lesson:
    return Lesson(
        id=lesson_id,
        pattern=pattern,
        message="Use the local stack.",
        tool=tool,
        project="",
        strictness="warn",
        active=True,
        origin="user",
        created_at=AT,
        updated_at=AT,
        proposed=False,
    )


@pytest.mark.parametrize(
    "called", ["Bash", "bash", "exec_command", "shell", "shell_command", "local_shell",
               "run_shell_command"],
)  # fmt: skip
def test_a_bash_lesson_applies_to_every_agents_shell_tool(called: str) -> None:
    assert matching([lesson("Bash")], called, "k6 run --env staging", None)


@pytest.mark.parametrize("called", ["Edit", "Write", "MultiEdit", "apply_patch", "replace",
                                    "write_file"])  # fmt: skip
def test_an_edit_lesson_applies_to_every_agents_file_edits(called: str) -> None:
    assert same_tool("Edit", called)
    assert same_tool("apply_patch", called)


@pytest.mark.parametrize(("lesson_tool", "called"), [
    ("Bash", "Read"),
    ("Bash", "apply_patch"),
    ("Edit", "run_shell_command"),
    ("Read", "read_file"),  # only shell and edits are grouped
    ("mcp__github__create_pr", "Bash"),
])  # fmt: skip
def test_other_tools_stay_apart(lesson_tool: str, called: str) -> None:
    assert not matching([lesson(lesson_tool)], called, "staging", None)


def test_a_lesson_without_a_tool_applies_to_any_tool() -> None:
    assert matching([lesson("")], "run_shell_command", "staging", None)
