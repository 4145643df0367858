"""What one read of an agent's session file gives: turns, tool calls, prompts, where to resume.

Every agent's reader (claude_code, codex, gemini) returns these same values, so one importer
stores all agents' sessions alike. They live apart from any one reader so that the Codex and
Gemini readers do not depend on the Claude Code one; `claude_code` re-exports them.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Literal

from server.core.models.journal import PROMPT_CHARS, AgentAction, ToolOutcome
from server.ingest.tool_calls import cut

__all__ = [
    "PromptRecord",
    "Role",
    "ToolEvent",
    "TranscriptChunk",
    "Turn",
    "late_outcomes",
    "with_outcomes",
]

Role = Literal["user", "assistant"]


@dataclass(frozen=True, slots=True)
class Turn:
    """One human prompt or one assistant reply, as prose."""

    uuid: str
    session_id: str | None  # the line's full sessionId (the parent's for a sub-agent)
    role: Role
    text: str
    timestamp: datetime | None
    cwd: str | None
    agent_id: str | None  # set for sub-agent (sidechain) records
    line_number: int  # 1-based line in the file
    is_sidechain: bool
    git_branch: str | None = None  # the branch the session was on, when the agent records it
    git_commit: str | None = None  # and the commit (Codex records it at session start)


@dataclass(frozen=True, slots=True)
class ToolEvent:
    """One tool call, compact enough to mine habits from (which commands fail, which files)."""

    uuid: str  # of the assistant line holding the tool_use
    tool_use_id: str  # pairs the call with its tool_result, possibly in a later chunk
    session_id: str | None
    timestamp: datetime | None
    tool: str
    target: str | None  # Bash command, or the file path / pattern / url it acted on
    success: bool | None  # from its tool_result; None when the result is not in this chunk
    agent_id: str | None
    prompt_key: str | None = None  # the human prompt it followed (see PromptRecord)
    output_preview: str | None = None  # start of its output, from the result in this chunk
    error: str | None = None  # why it failed, when it did

    def with_outcome(self, outcome: ToolOutcome) -> ToolEvent:
        """This call with its result read in; the result's prompt key, when it has one, wins."""
        return replace(
            self,
            success=outcome.success,
            output_preview=outcome.output_preview,
            error=outcome.error,
            prompt_key=outcome.prompt_key or self.prompt_key,
        )


@dataclass(frozen=True, slots=True)
class PromptRecord:
    """A human prompt of the main thread, for the journal."""

    key: str  # the line's promptId (Claude Code 2.1+), else its uuid
    uuid: str
    text: str  # the prompt's prose, cut to PROMPT_CHARS
    timestamp: datetime | None
    agent_id: str | None
    session_id: str | None

    @classmethod
    def of_turn(cls, turn: Turn, key: str) -> PromptRecord:
        """The prompt a user turn states, filed under `key`."""
        return cls(
            key=key,
            uuid=turn.uuid,
            text=cut(turn.text, PROMPT_CHARS),
            timestamp=turn.timestamp,
            agent_id=turn.agent_id,
            session_id=turn.session_id,
        )


@dataclass(frozen=True, slots=True)
class TranscriptChunk:
    """What one read of a transcript found, and where the next read should start."""

    turns: list[Turn]
    events: list[ToolEvent]
    skipped: dict[str, int]  # records that carry text but are not prose, by reason
    malformed: int  # complete lines that are not a JSON object
    lines_read: int  # complete lines consumed
    end_offset: int  # byte offset just after the last consumed newline
    cwd: str | None  # the last cwd seen
    session_id: str | None  # the first sessionId seen
    title: str | None  # custom-title, else ai-title, else summary
    version: str | None  # the last Claude Code version seen
    # tool_use_id -> outcome for results whose tool_use was read in an earlier chunk
    late_results: dict[str, ToolOutcome] = field(default_factory=dict)
    prompts: list[PromptRecord] = field(default_factory=list)  # one per key, first seen
    # what the agent did (calls, its words), in order; read by readers that know the prompts
    actions: list[AgentAction] = field(default_factory=list)


def with_outcomes(events: list[ToolEvent], outcomes: Mapping[str, ToolOutcome]) -> list[ToolEvent]:
    """The calls of a read, each with its result read in when the same read found it."""
    return [
        event.with_outcome(outcome)
        if (outcome := outcomes.get(event.tool_use_id)) is not None
        else event
        for event in events
    ]


def late_outcomes(
    outcomes: Mapping[str, ToolOutcome], called: Collection[str]
) -> dict[str, ToolOutcome]:
    """The results of a read whose call is not in it (`called`): read in an earlier chunk."""
    return {key: outcome for key, outcome in outcomes.items() if key not in called}
