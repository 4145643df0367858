"""`claude-memory lessons propose`: lessons proposed from the journal, for the user to accept.

Reads the journal of the sessions that changed since the last run (every session with
`rescan`), `SESSIONS_PER_BATCH` at a time, proposes lessons with the rules of
lesson_proposals.py and stores the new ones inactive and marked proposed, together with how
much of each session was read, one transaction per batch (an interrupted first run over a long
journal keeps what it did). A proposal stored before, even if the user edited or dismissed it
since, or one a lesson already says, is counted as known and not stored again. A dry run reads
the same sessions and stores nothing.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from server.core.models.lessons import LessonDraft
from server.core.models.output import to_json
from server.learning.lesson_proposals import propose

if TYPE_CHECKING:
    from server.service.memory import MemoryService

logger = logging.getLogger(__name__)

SESSIONS_PER_BATCH = 200


@dataclass(slots=True)
class ProposalSummary:
    dry_run: bool
    sessions: int = 0  # sessions read
    proposed: int = 0  # new proposals stored (in a dry run: that would be stored)
    known: int = 0  # proposals already stored or already said by a lesson
    lessons: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0

    def as_json(self) -> dict[str, object]:
        return {
            "dry_run": self.dry_run,
            "sessions": self.sessions,
            "proposed": self.proposed,
            "known": self.known,
            "lessons": self.lessons,
            "seconds": round(self.seconds, 3),
        }


async def propose_lessons(
    service: MemoryService,
    *,
    project: str | None = None,
    dry_run: bool = False,
    rescan: bool = False,
) -> ProposalSummary:
    started = time.monotonic()
    summary = ProposalSummary(dry_run=dry_run)
    queue = await service.lesson_proposals.queue(project, rescan=rescan)
    keys: set[str] = set()
    for start in range(0, len(queue), SESSIONS_PER_BATCH):
        batch = queue[start : start + SESSIONS_PER_BATCH]
        journals = await service.lesson_proposals.journals([counts.session_id for counts in batch])
        drafts: list[LessonDraft] = []
        for counts in batch:
            for proposal in propose(journals.get(counts.session_id, [])):
                if proposal.key not in keys:
                    keys.add(proposal.key)
                    drafts.append(proposal.draft)
        if dry_run:
            known = await service.lesson_proposals.known(drafts)
            new = [to_json(d) for d, old in zip(drafts, known, strict=True) if not old]
        else:
            new = [
                to_json(lesson) for lesson in await service.lesson_proposals.store(drafts, batch)
            ]
        summary.sessions += len(batch)
        summary.lessons += new
        summary.proposed += len(new)
        summary.known += len(drafts) - len(new)
    summary.seconds = time.monotonic() - started
    logger.info(
        "lesson proposals: %d sessions read, %d proposed, %d known",
        summary.sessions,
        summary.proposed,
        summary.known,
    )
    return summary
