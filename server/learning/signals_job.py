"""`claude-memory signals`: corrections and habits, learned without an LLM.

Reads the sessions not yet mined (their turns and tool calls) and every tool call of their
projects, finds corrections (server/learning/corrections.py) and recomputes each touched
project's aggregates (server/learning/aggregates.py). Corrections become preference memories,
one per correcting turn; aggregates become pattern memories keyed per project and aspect and
rewritten in place, so a second run updates them rather than adding copies. Everything of one
run commits together with the sessions marked as mined.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

from server.core.models.learning import EventRow
from server.core.models.memories import MemoryDraft
from server.learning.signals import (
    Correction,
    SignalEvent,
    SignalTurn,
    correction_memory,
    find_corrections,
    pattern_memories,
    project_patterns,
)
from server.service.memory import MemoryService

MAX_EVIDENCE_IDS = 20


@dataclass(slots=True)
class SignalsSummary:
    dry_run: bool
    sessions: int = 0
    corrections: int = 0
    patterns: int = 0
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    found: list[str] = field(default_factory=list)
    seconds: float = 0.0
    skipped: bool = False  # another runner was mining signals: this one did nothing

    def as_json(self) -> dict[str, object]:
        return {
            "dry_run": self.dry_run,
            "sessions": self.sessions,
            "corrections": self.corrections,
            "patterns": self.patterns,
            "created": self.created,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "found": self.found,
            "skipped": self.skipped,
            "seconds": round(self.seconds, 3),
        }


async def mine_signals(
    service: MemoryService, *, project: str | None = None, dry_run: bool = False
) -> SignalsSummary:
    """Mine the sessions not mined yet. One runner at a time, whichever process: signals are
    read across sessions, so a second runner would merge the same evidence twice."""
    if dry_run:
        return await _mine(service, project, dry_run=True)
    async with service.leases.leased("signals", "all") as ours:
        if not ours:
            return SignalsSummary(dry_run=False, skipped=True)
        return await _mine(service, project, dry_run=False)


async def _mine(service: MemoryService, project: str | None, *, dry_run: bool) -> SignalsSummary:
    started = time.monotonic()
    summary = SignalsSummary(dry_run=dry_run)
    data = await service.learning.signals_input(project)
    summary.sessions = len(data.session_ids)
    mined = set(data.session_ids)
    turns = [
        SignalTurn(t.id, t.session_id, t.project, t.role, t.content, t.created_at, t.record_uuid)
        for t in data.turns
    ]
    events = [_event(e) for e in data.events]
    corrections = find_corrections(turns, [e for e in events if e.session_id in mined])
    drafts = [_correction_draft(c) for c in corrections]
    summary.corrections = len(corrections)
    summary.found = [f"{c.project or 'no project'}: {c.quote}" for c in corrections]
    now = datetime.now(tz=UTC)
    for name, patterns in sorted(project_patterns(events, data.project_paths).items()):
        sessions = sorted({e.session_id for e in events if e.project == name})
        for key, text in pattern_memories(name, patterns):
            drafts.append(_pattern_draft(key, text, name, sessions, now))
            summary.patterns += 1
    if not dry_run and (drafts or data.session_ids):
        outcome = await service.learning.upsert_signals(drafts, mined_sessions=data.session_ids)
        summary.created, summary.updated = outcome.created, outcome.updated
        summary.unchanged = outcome.unchanged
    summary.seconds = time.monotonic() - started
    return summary


def _event(row: EventRow) -> SignalEvent:
    return SignalEvent(row.session_id, row.project, row.tool, row.target, row.success, row.at)


def _correction_draft(correction: Correction) -> MemoryDraft:
    anchor = correction.record_uuid or str(correction.memory_id)
    said_at = correction.at or datetime.now(tz=UTC)
    return MemoryDraft(
        content=correction_memory(correction),
        kind="preference",
        source="signals",
        tags=["correction"],
        project=correction.project,
        session_id=correction.session_id,
        created_at=said_at,
        metadata={
            "signal_key": f"signals:correction:{anchor}",
            "quote": correction.quote,
            "corrected": correction.corrected,
            "cue": correction.cue,
            "source_turns": [correction.memory_id] if correction.memory_id else [],
            "evidence_sessions": [correction.session_id],
            "last_seen": said_at.isoformat(),
        },
    )


def _pattern_draft(
    key: str, text: str, project: str, sessions: list[str], now: datetime
) -> MemoryDraft:
    return MemoryDraft(
        content=text,
        kind="pattern",
        source="signals",
        tags=["habit", key.split(":")[1]],
        project=project,
        metadata={
            "signal_key": key,
            "evidence_count": len(sessions),
            "evidence_sessions": sessions[-MAX_EVIDENCE_IDS:],
            "last_seen": now.isoformat(),
        },
    )
