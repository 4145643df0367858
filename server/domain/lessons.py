"""When a lesson applies to a tool call: pure rules, no I/O.

A pattern is a regular expression, matched case-insensitively with `search` anywhere in the
call's input: the text of every string value of `tool_input` (the command, the path, the
content), in field order, one per line. Patterns are checked when a lesson is written, and
compiled once per process.

A lesson names a tool the way the agent it was learned from does; the same tool has other
names in other agents (TOOL_FAMILIES), so a lesson on `Bash` also applies to Codex's and
Gemini CLI's shell calls, and one on `Edit` to their file edits. The journal keeps each call's
name as its agent sent it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from server.core.errors import InvalidInput
from server.core.models import STRICTNESS, Lesson
from server.core.validation import clean_text

MAX_PATTERN_CHARS = 300
MAX_MESSAGE_CHARS = 1_000
MAX_INPUT_CHARS = 8_000  # of a call's input, what patterns are matched against
# Names of one tool across agents, lower case. Claude Code: Bash, Edit, MultiEdit, Write.
# Codex: hooks say Bash and apply_patch (codex-rs/core/src/tools/hook_names.rs); its rollouts,
# and so the journal's imported calls, say exec_command, shell, shell_command, local_shell.
# Gemini CLI: run_shell_command, replace, write_file (its SHELL_, EDIT_ and WRITE_FILE_TOOL_NAME).
TOOL_FAMILIES = (
    frozenset(
        {"bash", "exec_command", "shell", "shell_command", "local_shell", "run_shell_command"}
    ),
    frozenset({"edit", "multiedit", "write", "apply_patch", "replace", "write_file"}),
)


def checked_pattern(pattern: str) -> str:
    """`pattern` stripped, if it is a regular expression Python can compile; else InvalidInput."""
    text = clean_text(pattern).strip()
    if not text:
        raise InvalidInput("pattern is empty; give a word or regular expression to look for")
    if len(text) > MAX_PATTERN_CHARS:
        raise InvalidInput(f"pattern is longer than {MAX_PATTERN_CHARS} characters")
    try:
        compiled(text)
    except re.error as problem:
        raise InvalidInput(f"pattern is not a valid regular expression: {problem}") from None
    return text


def checked_message(message: str) -> str:
    text = clean_text(message).strip()
    if not text:
        raise InvalidInput("message is empty; say what the agent should know before the call")
    if len(text) > MAX_MESSAGE_CHARS:
        raise InvalidInput(f"message is longer than {MAX_MESSAGE_CHARS:,} characters")
    return text


def checked_strictness(strictness: str) -> str:
    if strictness not in STRICTNESS:
        raise InvalidInput(f"strictness must be one of {', '.join(STRICTNESS)}, got {strictness!r}")
    return strictness


@lru_cache(maxsize=4_096)
def compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def call_text(tool_input: Any) -> str:
    """The text a call's input holds, the way patterns see it; at most MAX_INPUT_CHARS."""
    parts: list[str] = []
    _collect(tool_input, parts, depth=4)
    return "\n".join(parts)[:MAX_INPUT_CHARS]


def _collect(value: Any, parts: list[str], depth: int) -> None:
    if isinstance(value, str):
        parts.append(value)
    elif depth > 0 and isinstance(value, Mapping):
        for item in value.values():
            _collect(item, parts, depth - 1)
    elif depth > 0 and isinstance(value, list):
        for item in value:
            _collect(item, parts, depth - 1)


def same_tool(lesson_tool: str, tool: str) -> bool:
    """Whether a lesson on `lesson_tool` applies to a call of `tool` (any case, any agent)."""
    wanted, called = lesson_tool.lower(), tool.lower()
    return wanted == called or any(
        wanted in family and called in family for family in TOOL_FAMILIES
    )


def matching(lessons: Sequence[Lesson], tool: str, text: str, project: str | None) -> list[Lesson]:
    """The active lessons that apply to a call of `tool` with input `text` in `project`."""
    return [
        lesson
        for lesson in lessons
        if lesson.active
        and (not lesson.tool or same_tool(lesson.tool, tool))
        and (not lesson.project or (project is not None and lesson.project == project))
        and compiled(lesson.pattern).search(text) is not None
    ]


def proposal_key(tool: str, pattern: str, project: str) -> str:
    """What makes two proposed lessons the same: tool (any case), pattern and project."""
    return "\n".join((tool.lower(), project, pattern))


def reminder(lessons: Sequence[Lesson]) -> str:
    """What the agent is told before the call: each lesson's message, labelled as such."""
    lines = ["Lessons from earlier sessions that apply to this call:"]
    lines += [f"- {lesson.message} (lesson #{lesson.id})" for lesson in lessons]
    return "\n".join(lines)
