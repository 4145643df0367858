"""What agents and the UI are shown: context, the timeline and learned preferences."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from server.core.models.memories import Memory

# Checks memories against a working tree: those to show (orphaned ones left out, drifted ones
# last) and a note per drifted id (server/recall/working_tree.py's WorkingTrees.checked).
MemoryCheck = Callable[[Sequence[Memory]], Awaitable[tuple[list[Memory], dict[int, str]]]]


@dataclass(frozen=True, slots=True)
class RecentContext:
    """Newest memories for a project; `source` says whether they are distilled or any kind."""

    source: Literal["distilled", "recent"]
    project: str | None
    memories: list[Memory]


@dataclass(frozen=True, slots=True)
class StartupContext:
    """Session-start context: Markdown for the agent plus the figures it was built from."""

    project: str | None
    markdown: str
    preferences: int
    patterns: int
    recent: int
    project_memories: int
    total_memories: int


@dataclass(frozen=True, slots=True)
class TimelinePoint:
    """One memory as a dot on the timeline: enough to place and label it, not its text."""

    id: int
    project: str
    created_at: datetime
    kind: str
    length: int
    title: str


@dataclass(frozen=True, slots=True)
class DayCount:
    day: str
    project: str
    count: int


@dataclass(frozen=True, slots=True)
class Timeline:
    """The newest `len(points)` of `total` matching memories, and per-day counts for all."""

    total: int
    truncated: bool
    points: list[TimelinePoint]
    days: list[DayCount]


PreferenceTier = Literal["explicit", "signals", "inferred"]


@dataclass(frozen=True, slots=True)
class Preference:
    """A learned preference with the evidence behind it.

    `confidence` (0-1) grows with the number of sessions that support it and with recent
    support, and is highest when the user stated or confirmed it; `confidence_percent` is the
    same as the whole percent every view shows (server/core/percent.py). `superseded_by` names a
    newer preference on the same subject that replaces this one.
    """

    memory: Memory
    tier: PreferenceTier
    confidence: float
    confidence_percent: int
    evidence_sessions: int
    last_seen: datetime
    confirmed: bool
    superseded_by: int | None


@dataclass(frozen=True, slots=True)
class PreferenceTiers:
    """Preferences by the strength of their source, best first within each tier.

    `explicit`: saved as a preference by the user or an agent, or locked by the user;
    `signals`: counted from corrections and habits, without an LLM;
    `inferred`: an LLM's reading of sessions (distilled preferences, behaviour).
    """

    explicit: list[Preference]
    signals: list[Preference]
    inferred: list[Preference]
