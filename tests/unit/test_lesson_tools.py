"""A lesson names a tool as one agent calls it and applies to the same tool in the others."""

from __future__ import annotations

import pytest

from server.domain.lessons import matching, same_tool
from tests.unit.lesson_rows import lesson


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
