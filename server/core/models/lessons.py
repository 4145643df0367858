"""Lessons: reminders shown before tool calls that match them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal, get_args

Strictness = Literal["warn", "ask"]


STRICTNESS: tuple[str, ...] = get_args(Strictness)


@dataclass(frozen=True, slots=True)
class Lesson:
    """A reminder before a tool call (table `lessons`).

    It matches a call when `tool` is the call's tool ("" for any), `pattern` (a regular
    expression, case-insensitive) is found in the call's input, and `project` is the call's
    ("" for every project). "warn" adds `message` to the agent's context; "ask" also makes
    Claude Code ask the user before the call runs; Codex and Gemini CLI, whose hooks cannot ask
    (server/hooks.py), refuse the call with the message. `origin` says who wrote it: user, agent,
    or `journal:<session id>` / `correction:<session id>` for a lesson proposed from that
    session's journal. `proposed`: proposed and not yet accepted (enabled) or dismissed
    (disabled) by the user; a proposal is inactive. `owner`: the user who wrote it (None
    before users, from the command line or the proposer).
    """

    id: int
    tool: str
    pattern: str
    project: str
    message: str
    strictness: str
    origin: str
    active: bool
    created_at: datetime
    updated_at: datetime
    proposed: bool
    owner: str | None = None


@dataclass(frozen=True, slots=True)
class LessonDraft:
    pattern: str
    message: str
    tool: str = ""
    project: str = ""
    strictness: str = "warn"
    origin: str = "user"


@dataclass(frozen=True, slots=True)
class LessonChange:
    """What an edit changes; None keeps a field."""

    tool: str | None = None
    pattern: str | None = None
    project: str | None = None
    message: str | None = None
    strictness: str | None = None
    active: bool | None = None
