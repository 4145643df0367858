"""What the learning jobs (distill, signals, behavior) ask of the service: `service.learning`.

Composed into MemoryService (server/service/memory.py) as `learning`, apart from what the
adapters call (server/service/face.py), so a job's steps never show on the adapters' surface.
The jobs in server/learning/ decide what to learn; this module stores it with the same
redaction and dedup as every other write, and keeps each session's outcome atomic: its new
memories, the archiving of the turns they came from and its state commit together, or not at
all.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from server.core.config import Settings
from server.core.errors import InvalidInput, NotFound
from server.core.models.learning import (
    DistillOutcome,
    LinkPair,
    LinkReviewOutcome,
    LinkVerdict,
    SessionTurnRow,
    SignalOutcome,
    SignalsInput,
)
from server.core.models.memories import MemoryDraft, NewMemory
from server.core.models.sessions import PendingSession, StoredTurn
from server.core.redact import redact
from server.core.validation import blank_to_none, prepare_draft
from server.domain.supersession_rules import redundant_near_copy
from server.service.embeddings import Embedder
from server.service.supersessions import apply_verdicts, link_new_memories, review_pairs
from server.store import learning as learning_store
from server.store import memories as memory_store
from server.store import search as search_store
from server.store import supersessions as links_store
from server.store.tx import Pool, transaction

logger = logging.getLogger(__name__)

MAX_DISTILL_FAILURES = 3


class LearningSteps:
    """Distill, signal and behaviour storage over the service's pool and embedder."""

    def __init__(self, pool: Pool, embedder: Embedder, settings: Settings) -> None:
        self.pool = pool
        self.embedder = embedder
        self.settings = settings

    async def resolve_session(self, id_or_prefix: str) -> str:
        """The full id of the one imported session starting with `id_or_prefix`."""
        prefix = blank_to_none(id_or_prefix)
        if prefix is None:
            raise InvalidInput("give a session id or the start of one")
        async with transaction(self.pool) as conn:
            matches = await learning_store.sessions_with_prefix(conn, prefix)
        if not matches:
            raise NotFound(f"no imported session starts with {prefix!r}")
        if prefix in matches:
            return prefix
        if len(matches) > 1:
            shown = ", ".join(matches[:5])
            raise InvalidInput(f"{prefix!r} matches {len(matches)} sessions ({shown}); give more")
        return matches[0]

    async def distill_queue(
        self, *, project: str | None = None, session: str | None = None
    ) -> list[PendingSession]:
        """Sessions to distill now: pending, below the failure cap, long enough."""
        session_ids = [await self.resolve_session(session)] if session else None
        async with transaction(self.pool) as conn:
            return await learning_store.pending_sessions(
                conn,
                project=blank_to_none(project),
                session_ids=session_ids,
                min_messages=self.settings.distill_min_messages,
                max_failures=MAX_DISTILL_FAILURES,
            )

    async def undistilled_turns(self, session_id: str) -> list[StoredTurn]:
        async with transaction(self.pool) as conn:
            return await learning_store.undistilled_turns(conn, session_id)

    async def store_distilled(
        self, session: PendingSession, drafts: Sequence[MemoryDraft], turn_ids: Sequence[int]
    ) -> DistillOutcome:
        """Save a session's distilled memories, archive the turns read, mark it done: one commit.

        Each memory is checked against what the project already knows (never against raw
        turns): an exact copy or a near copy (CLAUDE_MEMORY_GUARD_NOOP_THRESHOLD) is counted, not
        stored. Stores are serialised, so two sessions distilled at once are checked against each
        other.
        """
        prepared: list[NewMemory] = []
        seen: set[str] = set()
        for draft in drafts:
            try:
                memory, _ = prepare_draft(draft, self.settings.max_content_chars)
            except InvalidInput as exc:
                logger.warning("dropped a distilled item of %s: %s", session.session_id, exc)
                continue
            if memory.content_hash not in seen:
                seen.add(memory.content_hash)
                prepared.append(memory)
        vectors = await self.embedder.documents_or_waiting([m.content for m in prepared])
        async with transaction(self.pool) as conn:
            await memory_store.lock_near_copy_checks(conn)
            stored = {
                m.content_hash
                for m in await memory_store.get_by_hashes(conn, [m.content_hash for m in prepared])
            }
            nearest = await search_store.nearest_live_many(
                conn, [v.vector for v in vectors], project=session.project
            )
            threshold = self.settings.guard_noop_threshold
            near = await links_store.contents(
                conn, [hit[0] for hit in nearest if hit is not None and hit[1] >= threshold]
            )
            keep = [
                (memory, vector)
                for memory, vector, hit in zip(prepared, vectors, nearest, strict=True)
                if memory.content_hash not in stored
                and not (
                    hit is not None
                    and redundant_near_copy(memory.content, near.get(hit[0], ""), hit[1], threshold)
                )
            ]
            ids = await memory_store.insert_many(conn, [m for m, _ in keep], [v for _, v in keep])
            new_ids = tuple(new_id for new_id in ids if new_id is not None)
            links = await link_new_memories(conn, new_ids)
            saved = len(new_ids)
            archived = await learning_store.archive(conn, turn_ids)
            await learning_store.mark_distilled(conn, session.session_id, len(turn_ids))
        logger.info(
            "distilled session %s: %d memories, %d turns archived",
            session.session_id,
            saved,
            archived,
        )
        return DistillOutcome(
            saved=saved,
            duplicates=len(drafts) - saved,
            archived=archived,
            memory_ids=new_ids,
            links=tuple(links),
        )

    async def link_review_pairs(
        self, memory_ids: Sequence[int], rule_links: Sequence[tuple[int, int, str]]
    ) -> list[LinkPair]:
        """What to ask the model about new memories' supersession links (see review_pairs)."""
        async with transaction(self.pool) as conn:
            return await review_pairs(conn, memory_ids, rule_links)

    async def apply_link_verdicts(self, verdicts: Sequence[LinkVerdict]) -> LinkReviewOutcome:
        """Apply the model's verdicts on supersession pairs, in one short transaction."""
        async with transaction(self.pool) as conn:
            outcome = await apply_verdicts(conn, verdicts)
        logger.info(
            "link review: %d confirmed, %d rejected, %d added, %d skipped",
            outcome.confirmed,
            outcome.rejected,
            outcome.added,
            outcome.skipped,
        )
        return outcome

    async def record_distill_failure(self, session_id: str, reason: str) -> int:
        """Count a failed attempt with its reason; returns the session's failure count."""
        async with transaction(self.pool) as conn:
            failures = await learning_store.mark_distill_failed(
                conn, session_id, redact(reason).text, MAX_DISTILL_FAILURES
            )
        return failures

    async def reset_distill_failures(self, session: str | None = None) -> int:
        """Give failed sessions (one, or all) a fresh start; returns how many changed."""
        session_ids = [await self.resolve_session(session)] if session else None
        async with transaction(self.pool) as conn:
            changed = await learning_store.reset_failures(conn, session_ids)
        return changed

    async def signals_input(self, project: str | None = None) -> SignalsInput:
        """Sessions not yet mined, their turns, and every tool call of their projects."""
        async with transaction(self.pool) as conn:
            sessions = await learning_store.sessions_pending_signals(conn, blank_to_none(project))
            session_ids = [session_id for session_id, _ in sessions]
            projects = sorted({name for _, name in sessions if name})
            turns = await learning_store.turns_of_sessions(conn, session_ids)
            events = await learning_store.events_of(
                conn, session_ids=session_ids, projects=projects
            )
            paths = await learning_store.project_paths(conn, projects)
        return SignalsInput(
            session_ids=session_ids,
            projects=projects,
            turns=turns,
            events=events,
            project_paths=paths,
        )

    async def upsert_signals(
        self, drafts: Sequence[MemoryDraft], *, mined_sessions: Sequence[str] = ()
    ) -> SignalOutcome:
        """Store learned memories keyed by `metadata["signal_key"]`, updating them in place.

        A key seen before keeps its memory: unchanged text is left alone, changed text replaces
        the old (re-embedded), so a recomputed aggregate never adds a second copy. A memory the
        user deleted stays deleted. Everything, with `mined_sessions` marked done, commits in
        one transaction.
        """
        prepared: list[NewMemory] = []
        for draft in drafts:
            if not draft.metadata.get("signal_key"):
                raise InvalidInput("every signal needs metadata.signal_key")
            prepared.append(prepare_draft(draft, self.settings.max_content_chars)[0])
        async with transaction(self.pool) as conn:
            existing = {
                m.metadata["signal_key"]: m
                for m in await learning_store.by_signal_keys(
                    conn, [str(m.metadata["signal_key"]) for m in prepared]
                )
            }
        changed = [
            m
            for m in prepared
            if (old := existing.get(m.metadata["signal_key"])) is None
            or (old.deleted_at is None and old.content_hash != m.content_hash)
        ]
        vectors = await self.embedder.documents_or_waiting([m.content for m in changed])
        created = updated = 0
        async with transaction(self.pool) as conn:
            new_rows = []
            for memory, vector in zip(changed, vectors, strict=True):
                old = existing.get(memory.metadata["signal_key"])
                if old is None:
                    new_rows.append((memory, vector))
                    continue
                clash = await memory_store.get_by_hash(conn, memory.content_hash)
                if clash is not None and clash.id != old.id:
                    continue  # the new text is stored already, under another memory
                await memory_store.update_content(
                    conn, old.id, memory.content, memory.content_hash, vector
                )
                await learning_store.set_metadata(conn, old.id, memory.metadata)
                updated += 1
            ids = await memory_store.insert_many(
                conn, [m for m, _ in new_rows], [v for _, v in new_rows]
            )
            created = sum(1 for new_id in ids if new_id is not None)
            await learning_store.mark_signals_done(conn, mined_sessions)
        return SignalOutcome(
            created=created, updated=updated, unchanged=len(prepared) - created - updated
        )

    # ----- behaviour --------------------------------------------------------------------------

    async def behavior_queue(
        self, *, project: str | None = None, session: str | None = None, force: bool = False
    ) -> list[PendingSession]:
        """Distilled sessions to read for behaviour; with `force`, ones already read too."""
        session_ids = [await self.resolve_session(session)] if session else None
        async with transaction(self.pool) as conn:
            return await learning_store.behavior_pending(
                conn,
                project=blank_to_none(project),
                session_ids=session_ids,
                force=force,
                max_failures=MAX_DISTILL_FAILURES,
            )

    async def session_turns(self, session_id: str) -> list[SessionTurnRow]:
        """All raw turns of a session, archived ones included, in order."""
        async with transaction(self.pool) as conn:
            return await learning_store.turns_of_sessions(conn, [session_id])

    async def store_behavior(
        self, session: PendingSession, drafts: Sequence[MemoryDraft], *, force: bool
    ) -> SignalOutcome:
        """Save a session's behaviour observations and mark it read, in one transaction.

        An observation close to one already stored (CLAUDE_MEMORY_GUARD_NOOP_THRESHOLD) is not
        stored again: the stored one gains this session as evidence, which is what makes its
        confidence grow.
        With `force`, what earlier passes learned from this session is replaced. Stores are
        serialised, so two sessions read at once that saw the same thing make one memory with
        both as evidence.
        """
        prepared = [prepare_draft(d, self.settings.max_content_chars)[0] for d in drafts]
        vectors = await self.embedder.documents_or_waiting([m.content for m in prepared])
        created = supported = 0
        async with transaction(self.pool) as conn:
            await memory_store.lock_near_copy_checks(conn)
            if force:
                await learning_store.forget_behavior_of(conn, session.session_id)
            nearest = await search_store.nearest_live_many(conn, [v.vector for v in vectors])
            close = [h for h in nearest if h and h[1] >= self.settings.guard_noop_threshold]
            kinds = {m.id: m.kind for m in await memory_store.get_many(conn, [h[0] for h in close])}
            fresh = []
            for memory, vector, hit in zip(prepared, vectors, nearest, strict=True):
                if hit is not None and kinds.get(hit[0]) == "behavior":
                    seen = str(memory.metadata.get("last_seen", ""))
                    await learning_store.add_evidence(conn, hit[0], session.session_id, seen)
                    supported += 1
                elif hit is None or hit[1] < self.settings.guard_noop_threshold:
                    fresh.append((memory, vector))
            # A forced re-read that finds what it found before brings that row back.
            replaced = {
                m.content_hash: m.id
                for m in await memory_store.get_by_hashes(conn, [m.content_hash for m, _ in fresh])
                if m.deleted_at is not None and m.session_id == session.session_id
            }
            restored = await memory_store.restore_many(conn, list(replaced.values()))
            fresh = [(m, v) for m, v in fresh if m.content_hash not in replaced]
            ids = await memory_store.insert_many(conn, [m for m, _ in fresh], [v for _, v in fresh])
            created = len(restored) + sum(1 for new_id in ids if new_id is not None)
            await learning_store.mark_behavior(conn, session.session_id)
        return SignalOutcome(
            created=created, updated=supported, unchanged=len(prepared) - created - supported
        )

    async def record_behavior_failure(self, session_id: str, reason: str) -> int:
        async with transaction(self.pool) as conn:
            failures = await learning_store.mark_behavior_failed(
                conn, session_id, redact(reason).text, MAX_DISTILL_FAILURES
            )
        return failures
