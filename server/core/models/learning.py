"""What the learning jobs read and report: distillation, link review, signals."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class DistillOutcome:
    """What storing one session's distilled items did; `memory_ids` are the new memories and
    `links` the (newer, older, reason) supersession links the rules made for them."""

    saved: int
    duplicates: int
    archived: int
    memory_ids: tuple[int, ...] = ()
    links: tuple[tuple[int, int, str], ...] = ()


@dataclass(frozen=True, slots=True)
class LinkPair:
    """A supersession pair put to the model: does `newer` replace the fact `older` states?

    `rule_reason` is the link's reason when the rules linked the pair, None for a pair the
    rules left apart that is close enough to ask about. `older_agent` is the agent whose
    session the older memory came from (its imported session's source), None for one no
    agent's session wrote (saved by hand, imported from a file) and for one whose owner is not
    the newer memory's (a teammate's): an agent's model is shown a pair only when both came
    from that agent's sessions, of the same user (server/learning/distill.py).
    """

    newer_id: int
    newer_text: str
    newer_at: datetime
    older_id: int
    older_text: str
    older_at: datetime
    similarity: float
    rule_reason: str | None
    older_agent: str | None = None


@dataclass(frozen=True, slots=True)
class LinkVerdict:
    """The model's answer for one pair: whether its newer memory replaces the older's fact."""

    pair: LinkPair
    replaces: bool


@dataclass(frozen=True, slots=True)
class LinkReviewOutcome:
    """What the model's verdicts changed. `skipped`: verdicts that could not apply (the pair
    changed since it was read, or the newer memory or the older one is linked already)."""

    confirmed: int = 0
    rejected: int = 0
    added: int = 0
    skipped: int = 0


@dataclass(frozen=True, slots=True)
class SignalOutcome:
    """What storing signal memories did: new, rewritten in place, or left as they were."""

    created: int
    updated: int
    unchanged: int


@dataclass(frozen=True, slots=True)
class SessionTurnRow:
    """A raw turn with the session and project it belongs to, for mining signals."""

    id: int
    session_id: str
    project: str
    role: str
    content: str
    created_at: datetime
    record_uuid: str | None


@dataclass(frozen=True, slots=True)
class EventRow:
    """A stored tool call (table `session_events`)."""

    session_id: str
    project: str
    tool: str
    target: str | None
    success: bool | None
    at: datetime | None


@dataclass(frozen=True, slots=True)
class SignalsInput:
    """What `claude-memory signals` reads: sessions to mine, their turns, their projects' calls."""

    session_ids: list[str]
    projects: list[str]
    turns: list[SessionTurnRow]
    events: list[EventRow]
    project_paths: dict[str, str]
