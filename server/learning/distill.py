"""`claude-memory distill`: imported sessions into durable memories, through a local LLM.

For each pending session (server/service/learning.py decides which), the turns not yet distilled are
rendered into windows that fit the model's context (distill_core.transcript_windows), each
window is distilled (one request, one repair request), the results are merged, and the
service stores them with the session's turns archived and its state set, in one transaction.

Failures are per session and counted: an unusable reply after the repair is a failure with
its reason; at three the session waits for `--reset-failures`. An LLM that does not answer
(down, timing out, unknown model) is not the session's fault: the run stops with one clear
message and no session is charged a failure.

A session whose tool-call journal shows failed attempts before calls that worked
(learning/attempts.py) has them listed for the model, which may then propose one trajectory:
the task, what worked, what to avoid. From any other session a trajectory is kept as a fix.

Once a session is stored, one more request asks the model to confirm or reject the
supersession links of its new memories and to judge close pairs the rules left apart
(learning/link_review.py). That review only refines links: when it fails, the session's memories
and rule links stand as committed, and the failure is logged and counted, never charged.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace

from server.core.access import acting_as
from server.core.models.journal import JournalFilter
from server.core.models.learning import DistillOutcome
from server.core.models.memories import MemoryDraft
from server.core.models.sessions import PendingSession, StoredTurn
from server.core.validation import MAX_PAGE
from server.domain.trajectories import trajectory_metadata
from server.learning.attempts import failed_attempts
from server.learning.distill_core import (
    distill_messages,
    distill_window,
    prompt_tokens,
)
from server.learning.distill_reply import DistilledItem, merge_items
from server.learning.jobs import JobSummary, SessionJob
from server.learning.link_review import InvalidVerdicts, parse_verdicts, review_request
from server.learning.llm import LlmError, LlmRateLimited

logger = logging.getLogger(__name__)


# Distilled kinds that are memory kinds of their own; the rest are `distilled`, tagged.
OWN_KINDS = ("preference", "pattern", "behavior", "trajectory")


@dataclass(slots=True)
class DistillSummary(JobSummary):
    distilled: int = 0
    windows: int = 0
    memories_saved: int = 0
    duplicates: int = 0
    turns_archived: int = 0
    links_reviewed: int = 0
    links_confirmed: int = 0
    links_rejected: int = 0
    links_added: int = 0
    link_reviews_failed: int = 0
    # With an agent's model (#67): what a dry run would send.
    would_send: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, object]:
        agent_model: dict[str, object] = {}
        if self.llm is not None:
            agent_model = {
                "llm": self.llm,
                "would_send": self.would_send,
                "left_pending": self.left_pending,
            }
        return {
            "dry_run": self.dry_run,
            "model": self.model,
            **agent_model,
            "sessions": self.sessions,
            "distilled": self.distilled,
            "failed": self.failed,
            "windows": self.windows,
            "memories_saved": self.memories_saved,
            "duplicates": self.duplicates,
            "turns_archived": self.turns_archived,
            "links_reviewed": self.links_reviewed,
            "links_confirmed": self.links_confirmed,
            "links_rejected": self.links_rejected,
            "links_added": self.links_added,
            "link_reviews_failed": self.link_reviews_failed,
            "failures": self.failures,
            "stopped": self.stopped,
            "seconds": round(self.seconds, 3),
        }


class Distiller(SessionJob[DistillSummary]):
    """One run: the pending sessions, `workers` at a time.

    With a `budget` (an agent's model, server/learning/agent_models.py), only sessions of that
    agent are sent, each counted against the run's caps before it is sent, and windows are as
    large as `context_tokens` (one request per session, as a rule). Its link review shows the
    model only pairs whose older memory came from that agent's sessions too, and counts
    against the run's token cap.
    """

    job = "distill"

    def new_summary(self) -> DistillSummary:
        return DistillSummary(dry_run=self.dry_run, model=self.model)

    async def pending(
        self, *, project: str | None = None, session: str | None = None
    ) -> list[PendingSession]:
        return await self.service.learning.distill_queue(project=project, session=session)

    async def record_failure(self, session_id: str, reason: str) -> int:
        return await self.service.learning.record_distill_failure(session_id, reason)

    async def handle(self, pending: PendingSession) -> None:
        """Distill one session as its owner: their memories are compared with, theirs made."""
        with acting_as(await self.service.users.viewer_by_id(pending.owner_id)):
            await self._distill_session(pending)

    async def _distill_session(self, pending: PendingSession) -> None:
        if self.budget is not None and not self.budget.allows_source(pending.source):
            return
        turns = await self.service.learning.undistilled_turns(pending.session_id)
        if not turns:
            return
        journal = await self.service.journal(
            JournalFilter(session_id=pending.session_id), limit=MAX_PAGE
        )
        attempts = failed_attempts(journal.entries)
        try:
            windows = self.windows(pending, turns, attempts)
        except ValueError as exc:  # a context too small for any transcript
            self.halt(str(exc))
            return
        if self.budget is not None:
            tokens = sum(prompt_tokens(distill_messages(w, pending.project)) for w in windows)
            admitted = self.budget.admit(tokens)
            if self.dry_run:
                verdict = "would send" if admitted else "would leave pending (cap)"
                chars = sum(len(w.text) for w in windows)
                model = self.model or "its default model"
                self.summary.would_send.append(
                    f"{pending.session_id} ({pending.source}, {pending.project}): {verdict}"
                    f" {len(windows)} request(s), {chars} characters, ~{tokens} tokens, to"
                    f" {self.budget.provider.label} ({model})"
                )
            if not admitted:
                return
        self.summary.windows += len(windows)
        if self.dry_run:
            return
        results = await self.ask_each(
            pending,
            windows,
            lambda window: distill_window(
                self.client, window, project=pending.project, model=self.model
            ),
        )
        if results is None:
            return
        items = [_grounded(item, bool(attempts)) for item in merge_items(results)]
        drafts = [_draft(item, pending, turns, self.model) for item in items]
        outcome = await self.service.learning.store_distilled(
            pending, drafts, [t.id for t in turns]
        )
        self.summary.distilled += 1
        self.summary.memories_saved += outcome.saved
        self.summary.duplicates += outcome.duplicates
        self.summary.turns_archived += outcome.archived
        await self._review_links(pending, outcome)

    async def _review_links(self, pending: PendingSession, stored: DistillOutcome) -> None:
        """One request asking the model about the session's supersession pairs, made with no
        transaction open; a failure leaves the committed memories and rule links as they are."""
        if not stored.memory_ids:
            return
        pairs = await self.service.learning.link_review_pairs(stored.memory_ids, stored.links)
        if self.budget is not None:
            pairs = [pair for pair in pairs if self.budget.shown(pair.older_agent)]
        request = review_request(pairs, self.context_tokens)
        if not request.pairs:
            return
        if self.budget is not None and not self.budget.admit_review(
            prompt_tokens(request.messages)
        ):
            return
        try:
            reply = await self.client.complete_json(
                request.messages, model=self.model, max_tokens=request.max_reply_tokens
            )
            verdicts = parse_verdicts(reply, request.pairs)
        except (LlmError, InvalidVerdicts) as exc:
            if isinstance(exc, LlmRateLimited):
                self.halt(str(exc))  # the next session's request would be refused too
            self.summary.link_reviews_failed += 1
            logger.warning(
                "link review of session %s failed; its rule links stand: %s",
                pending.session_id,
                exc,
            )
            return
        applied = await self.service.learning.apply_link_verdicts(verdicts)
        self.summary.links_reviewed += len(verdicts)
        self.summary.links_confirmed += applied.confirmed
        self.summary.links_rejected += applied.rejected
        self.summary.links_added += applied.added


def _grounded(item: DistilledItem, failed_attempts: bool) -> DistilledItem:
    """A trajectory only from a session whose journal shows failed attempts; otherwise the
    model's item is kept as a fix, its text unchanged."""
    if item.kind != "trajectory" or failed_attempts:
        return item
    return replace(item, kind="fix", trajectory=None)


def _draft(
    item: DistilledItem, session: PendingSession, turns: list[StoredTurn], model: str
) -> MemoryDraft:
    """A distilled item as a memory, dated by the last turn it cites (else the session's last)."""
    times = {t.id: t.created_at for t in turns}
    cited = [times[i] for i in item.source_turns if i in times]
    said_at = max(cited) if cited else turns[-1].created_at
    kind = item.kind if item.kind in OWN_KINDS else "distilled"
    tags = list(dict.fromkeys([*item.tags, item.kind]))
    parts = trajectory_metadata(item.trajectory) if item.trajectory is not None else {}
    return MemoryDraft(
        content=item.content,
        kind=kind,
        tags=tags,
        source="distill",
        project=session.project,
        session_id=session.session_id,
        created_at=said_at,
        server_metadata={"distill_kind": item.kind},
        metadata={
            "source_turns": item.source_turns,
            "evidence_sessions": [session.session_id],
            "last_seen": said_at.isoformat(),
            "model": model,
            "agent": session.source,
            **parts,
        },
    )
