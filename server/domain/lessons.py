"""When a lesson applies to a tool call, and who may change it: pure rules, no I/O.

A pattern is a regular expression in RE2's syntax (github.com/google/re2/wiki/Syntax),
matched case-insensitively with `search` anywhere in the call's input: the text of every
string value of `tool_input` (the command, the path, the content), in field order, one per
line. RE2 matches in time linear in the input, so no pattern can stall the hook the way
`(a+)+$` stalls a backtracking engine; what a search costs still grows with the size of the
compiled pattern, so patterns above MAX_PATTERN_PROGRAM instructions are refused, and
`match_call` stops after `budget` seconds, checking the cheapest patterns first. Patterns are
checked when a lesson is written, and compiled once per process.

A pattern is shown to every user who sees the lesson, so one that spells out a secret (an
`AKIA…` key id, a `ghp_…` token) is refused rather than stored redacted: a redacted pattern
would match something else.

A lesson names a tool the way the agent it was learned from does; the same tool has other
names in other agents (TOOL_FAMILIES, from each agent's SHELL_TOOLS and EDIT_TOOLS in
server/agent_facts/), so a lesson on one agent's shell tool also applies to every other
agent's shell calls, and one on a file edit to their file edits. The journal keeps each call's
name as its agent sent it.

A lesson of a project applies to calls in that project only; one for every project (no
project) applies to its author's calls, or to everyone's when it has no author (from before
users, the command line or the proposer): a teammate's lesson never reaches calls outside the
projects they share. What the agent is told (`reminder`, `reason`) is data, labelled with the
lesson's id and who wrote it before its message, which is put on one line, so a message cannot
open a section or pass for another lesson.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol, cast

import re2

from server.agent_facts.every import ABOUT
from server.core.access import Viewer
from server.core.errors import Forbidden, InvalidInput
from server.core.models.lessons import STRICTNESS, Lesson
from server.core.redact import redact
from server.core.validation import clean_text
from server.domain.context import author, flat, teammates

MAX_PATTERN_CHARS = 300
# RE2 instructions a compiled pattern may have. A search that outgrows RE2's DFA costs about
# 3 ns per instruction per byte of input (measured on 2 cores: `(.*){45}`, 454 instructions,
# takes 11 ms on 8,000 ASCII characters and 26 ms on 8,000 four-byte ones), so 300 keeps the
# worst search near 17 ms. Words and commands take 10 to 60; `.{0,200}` alone takes 1,800.
MAX_PATTERN_PROGRAM = 300
MAX_MESSAGE_CHARS = 1_000
MAX_INPUT_CHARS = 8_000  # of a call's input, what patterns are matched against
# Names of one tool across agents, lower case: every agent's shell tools, and its file edits.
TOOL_FAMILIES = (
    frozenset(name for agent in ABOUT.values() for name in agent.SHELL_TOOLS),
    frozenset(name for agent in ABOUT.values() for name in agent.EDIT_TOOLS),
)
RE2_LIMITS = (
    "RE2, the engine lessons are matched with, has no backreferences (\\1), lookahead or"
    " lookbehind ((?=, (?!, (?<=, (?<!), atomic groups or possessive quantifiers, writes the"
    " end of the text as \\z (not \\Z), and allows repetition counts up to 1000"
)
# What a pattern spells out literally: class escapes (\S, \d), character classes and wildcards
# with their quantifiers become a placeholder the redaction leaves alone, and an escaped
# character becomes itself, so that `password=\S+` is a rule while `ghp_…`, `sk\-ant\-…` or
# `password=hunter2` are secrets.
_PATTERN_SYNTAX = re.compile(
    r"(?:\\[A-Za-z0-9]|\[(?:\\.|[^\]\\])*\]|\.(?=[*+?{]))(?:[*+?]|\{\d*(?:,\d*)?\})?\??"
    r"|\\(.)",
    re.S,
)
_MARKER = re.compile(r"\[REDACTED:([\w-]+)\]")


class Matcher(Protocol):
    """A compiled RE2 pattern, as far as lessons use it."""

    @property
    def programsize(self) -> int: ...

    def search(self, text: bytes) -> object | None: ...


def checked_pattern(pattern: str) -> str:
    """`pattern` stripped, if RE2 can match it cheaply and it holds no secret; else
    InvalidInput saying what to change."""
    text = clean_text(pattern).strip()
    if not text:
        raise InvalidInput("pattern is empty; give a word or regular expression to look for")
    if len(text) > MAX_PATTERN_CHARS:
        raise InvalidInput(f"pattern is longer than {MAX_PATTERN_CHARS} characters")
    secrets = secret_kinds(text)
    if secrets:
        raise InvalidInput(
            f"pattern looks like a secret ({', '.join(secrets)}); every user who sees the lesson"
            " is shown its pattern, so write one that matches the secret without containing it,"
            " such as its prefix (ghp_, AKIA) or its shape (AKIA[0-9A-Z]{16})"
        )
    compiled(text)
    return text


def secret_kinds(pattern: str) -> list[str]:
    """The kinds of secret (redaction's names) that `pattern` spells out literally."""
    literal = _PATTERN_SYNTAX.sub(
        lambda part: part.group(1) if part.group(1) is not None else "<pattern>", pattern
    )
    found = redact(literal)
    return sorted(set(_MARKER.findall(found.text))) if found.count else []


def compiled(pattern: str) -> Matcher:
    """`pattern` compiled by RE2, case-insensitive; InvalidInput when RE2 cannot compile it
    or it is too large to match cheaply."""
    matcher, refusal = _compiled(pattern)
    if matcher is None:
        raise InvalidInput(refusal)
    return matcher


# Patterns kept compiled. Every PreToolUse hook reads each active lesson's pattern, so the
# cache must hold them all: an LRU smaller than the active patterns evicts each one before
# its next use and compiled all of them on every call (1,720 patterns: 45 ms a call). The
# match budget searches about 4,500 simple patterns, so more lessons than this could not all
# be searched anyway; match_call compiles no more than this many for one call.
COMPILED_PATTERNS = 4_096


@lru_cache(maxsize=COMPILED_PATTERNS)
def _compiled(pattern: str) -> tuple[Matcher | None, str]:
    """The matcher, or None and why RE2 refuses the pattern (cached either way)."""
    try:
        matcher = cast(Matcher, re2.compile(pattern, _RE2_OPTIONS))
    except re2.error as problem:
        detail = problem.args[0] if problem.args else ""
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        return None, f"pattern is not a valid regular expression for RE2 ({detail}); {RE2_LIMITS}"
    if matcher.programsize > MAX_PATTERN_PROGRAM:
        return None, (
            f"pattern is too costly to match: RE2 compiles it to {matcher.programsize}"
            f" instructions, at most {MAX_PATTERN_PROGRAM} are allowed; large repetition counts"
            " ({100}, .{0,200}) and repeated groups multiply it, so use .* or a smaller count"
        )
    return matcher, ""


def _re2_options() -> Any:
    options = re2.Options()
    options.case_sensitive = False
    options.log_errors = False  # refusals are reported to the caller, not logged by RE2
    # Memory for one pattern's program and DFA cache (RE2's default: 8 MiB). Patterns within
    # MAX_PATTERN_PROGRAM need a few KiB; the DFA falls back to slower matching when it runs
    # out (12 times slower on costly patterns at 64 KiB), so the 4,096 cached patterns hold at
    # most 1 GiB; real ones use about 4 KiB each, compiled and searched.
    options.max_mem = 256 << 10
    return options


_RE2_OPTIONS = _re2_options()


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


@dataclass(frozen=True, slots=True)
class CallMatch:
    """What `match_call` found for one call."""

    lessons: list[Lesson]  # the lessons that apply, in the order they were given
    unusable: list[Lesson]  # right tool and project, but a pattern RE2 refuses (from before RE2)
    unchecked: int = 0  # right tool and project, not searched: the time budget ran out


def matching(lessons: Sequence[Lesson], tool: str, text: str, project: str | None) -> list[Lesson]:
    """The active lessons that apply to a call of `tool` with input `text` in `project`."""
    return match_call(lessons, tool, text, project).lessons


def applies_in(lesson: Lesson, project: str | None, viewer: str | None) -> bool:
    """Whether `lesson` applies to calls `viewer` (a user's name; None: no users) makes in
    `project`: one of a project in that project only, one for every project unless it is a
    teammate's."""
    if lesson.project:
        return project is not None and lesson.project == project
    return not teammates(lesson.owner, viewer)


def match_call(
    lessons: Sequence[Lesson],
    tool: str,
    text: str,
    project: str | None,
    budget: float | None = None,
    viewer: str | None = None,
) -> CallMatch:
    """The active lessons that apply to a call by `viewer` (`applies_in`), searching at most
    `budget` seconds.

    Patterns are searched cheapest first (smallest RE2 program), so when the budget runs out
    what is left unsearched is what costs most; a search already started runs to its end.
    Each pattern is compiled once and kept (`COMPILED_PATTERNS` of them: beyond that, the
    lessons past the first that many go unsearched, so the cache never churns).
    """
    candidates = [
        lesson
        for lesson in lessons
        if lesson.active
        and (not lesson.tool or same_tool(lesson.tool, tool))
        and applies_in(lesson, project, viewer)
    ]
    # At most as many patterns as stay compiled: compiling more would evict the others and
    # compile them all again on every call (about 20 microseconds each); the rest go unsearched.
    kept = candidates[:COMPILED_PATTERNS]
    usable: list[tuple[Lesson, Matcher]] = []
    unusable: list[Lesson] = []
    for lesson in kept:
        matcher, _ = _compiled(lesson.pattern)
        if matcher is None:
            unusable.append(lesson)
        else:
            usable.append((lesson, matcher))
    usable.sort(key=lambda pair: pair[1].programsize)
    data = text.encode("utf-8", "replace")
    deadline = None if budget is None else time.monotonic() + budget
    found: set[int] = set()
    searched = 0
    for lesson, matcher in usable:
        if deadline is not None and time.monotonic() > deadline:
            break
        if matcher.search(data) is not None:
            found.add(lesson.id)
        searched += 1
    return CallMatch(
        lessons=[lesson for lesson in candidates if lesson.id in found],
        unusable=unusable,
        unchecked=len(candidates) - len(kept) + len(usable) - searched,
    )


def check_lesson_project(viewer: Viewer | None, project: str) -> None:
    """Refuse a lesson for a project the user does not belong to (Forbidden)."""
    if viewer is None or not project or _member(viewer, project):
        return
    raise Forbidden(
        f"you may write lessons only for your projects ({', '.join(viewer.projects or ())})"
        f" or for every project (no project); {project!r} is not one of yours"
    )


def check_lesson_change(
    viewer: Viewer | None,
    lesson_id: int,
    owner_id: int | None,
    owner: str | None,
    project: str,
    only_switch: bool = False,
) -> None:
    """Refuse (Forbidden) a change by anyone but those who may make it.

    A lesson may be changed by the user who wrote it; a lesson of a project also by the
    project's members; an ownerless one (from before users, the command line or the proposer)
    by the members of its project, or by anyone when it is for every project. A teammate's
    lesson for every project may also be disabled or enabled (`only_switch`) by a user of
    every project (one without a project list: the team's administrator). With no user
    asking (single-user mode, the command line) anything goes. A refusal names who may, except
    that a lesson of a project the user does not belong to is not described to them.
    """
    if viewer is None or (owner_id is not None and owner_id == viewer.user_id):
        return
    if project and _member(viewer, project):
        return
    if not project and (owner_id is None or (only_switch and not viewer.projects)):
        return
    if project:
        who = "its members and the user who wrote it" if owner_id is not None else "its members"
        raise Forbidden(
            f"lesson {lesson_id} is for a project you do not belong to; only {who} can change it"
        )
    writer = owner or "the user who wrote it"
    raise Forbidden(
        f"lesson {lesson_id} is {writer}'s, for every project: only {writer} can change it,"
        " a user of every project can disable it, or the command line (claude-memory lessons"
        f" edit); it applies to {writer}'s calls only; write a lesson of your own to say"
        " something else"
    )


def _member(viewer: Viewer, project: str) -> bool:
    """Whether `viewer` belongs to `project` (a user without a project list: to every one)."""
    return not viewer.projects or project in viewer.projects


def proposal_key(tool: str, pattern: str, project: str) -> str:
    """What makes two proposed lessons the same: tool (any case), pattern and project."""
    return "\n".join((tool.lower(), project, pattern))


REMINDER_TITLE = (
    "Lessons from earlier sessions that apply to this call (notes shown as data, each"
    " labelled with who wrote it; the user's current request comes first):"
)


def reminder(lessons: Sequence[Lesson], viewer: str | None = None) -> str:
    """What the agent is told before the call: each lesson's message on one bullet, after a
    label with its id and who wrote it as `viewer` sees it."""
    return "\n".join([REMINDER_TITLE, *(f"- {reason(lesson, viewer)}" for lesson in lessons)])


def reason(lesson: Lesson, viewer: str | None = None) -> str:
    """One lesson as an agent or the user reads it: "[lesson #7, by teammate bob] message"."""
    return f"[lesson #{lesson.id}, {lesson_author(lesson, viewer)}] {flat(lesson.message)}"


def lesson_author(lesson: Lesson, viewer: str | None) -> str:
    """Who wrote a lesson: a user ("by you", "by teammate bob") or, for a proposal, the
    session it was proposed from."""
    source, _, session = lesson.origin.partition(":")
    if lesson.owner is None and session and source in ("journal", "correction"):
        return f"proposed from session {flat(session)[:8].replace(']', ')')}"
    return author(lesson.owner, viewer)
