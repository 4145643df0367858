"""The tool-call journal: calls, their outcomes, prompts, and its pages."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class SessionEvent:
    """A tool call: tool, what it acted on (its input summary), and how it went.

    From a transcript or, live, from a hook (which knows no `record_uuid`). `prompt_key` names
    the human prompt it followed (see JournalPrompt); `output_preview` is the start of its
    output and `error` its error message when it failed. Unknown parts are None.
    """

    session_id: str
    agent_id: str | None
    record_uuid: str | None
    tool_use_id: str
    tool: str
    target: str | None
    success: bool | None
    at: datetime | None
    project: str
    prompt_key: str | None = None
    output_preview: str | None = None
    error: str | None = None


# Bounds of what the journal keeps of a call and a prompt, in characters.
OUTPUT_PREVIEW_CHARS = 400


ERROR_CHARS = 500


PROMPT_CHARS = 4_000


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """A tool call's result, read with its call or later (a result can be in a later read)."""

    success: bool
    output_preview: str | None = None
    error: str | None = None
    prompt_key: str | None = None


@dataclass(frozen=True, slots=True)
class JournalPrompt:
    """A human prompt in the journal (table `journal_prompts`).

    `prompt_key` is Claude Code's promptId (2.1 and later; hooks send it as `prompt_id`), or the
    prompt record's uuid in older transcripts. `text` is redacted and cut to a bounded size.
    """

    session_id: str
    prompt_key: str
    text: str
    at: datetime | None
    project: str


@dataclass(frozen=True, slots=True)
class JournalFilter:
    """Which calls and prompts a journal read returns; None means any."""

    project: str | None = None
    session_id: str | None = None  # a session id or its prefix
    tool: str | None = None  # case-insensitive: "bash" matches Bash
    failed_only: bool = False
    since: datetime | None = None
    before: datetime | None = None
    text: str | None = None  # words in the prompt or in the call's input summary


@dataclass(frozen=True, slots=True)
class JournalCall:
    tool_use_id: str
    tool: str
    target: str | None
    success: bool | None
    error: str | None
    output_preview: str | None
    at: datetime | None
    agent_id: str | None


@dataclass(frozen=True, slots=True)
class JournalEntry:
    """A prompt and the calls that followed it (oldest first); prompt is None when unknown."""

    session_id: str
    project: str
    prompt_key: str | None
    prompt: str | None
    at: datetime | None
    calls: list[JournalCall]


@dataclass(frozen=True, slots=True)
class JournalPage:
    """Journal entries, newest first. `truncated`: more calls or prompts matched than shown."""

    entries: list[JournalEntry]
    calls: int
    truncated: bool


# What one action of the agent keeps for judging whether it used injected memory.
ACTION_CHARS = 20_000


@dataclass(frozen=True, slots=True)
class AgentAction:
    """Something the agent did after a prompt: a tool call (its tool and input as text) or its
    own words (`tool` None). Read from a transcript for the judge of injected memory
    (server/domain/use_judge.py), never stored: only the verdict and the terms it found are.
    """

    prompt_key: str | None  # the human prompt it followed, when the transcript says
    at: datetime | None
    tool: str | None
    text: str  # the input's values, one `key: value` per line, or the agent's words
