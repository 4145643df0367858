"""Receipts of what memory injected into an agent's context (issue #38): a mixin of
MemoryService (server/service/memory.py).

The hooks (server/recall/hook.py) record one receipt per injection before their answer
goes out (one insert), so the session's next hook counts it against the session's token
budget (`injected_tokens`); a failure is logged and costs nothing else. With
CLAUDE_MEMORY_RECEIPTS_RETENTION_DAYS at 0 nothing is recorded; otherwise receipts older than that
are pruned, at most once an hour per process, by the next recording.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime, timedelta

from server.core.config import Settings
from server.core.errors import InvalidInput
from server.core.models.journal import JournalPrompt
from server.core.models.output import preview
from server.core.models.receipts import (
    INJECTION_HOOKS,
    VERDICTS,
    ContextReport,
    InjectedMemory,
    Injection,
    JudgedMemory,
    ReceiptFilter,
    ReceiptPage,
    Verdict,
)
from server.core.validation import MAX_PAGE, blank_to_none, check_limit
from server.service.journal import redacted_prompt
from server.service.projects import ProjectRule
from server.store import journal as journal_store
from server.store import memories as memory_store
from server.store import receipts as receipt_store
from server.store.tx import Conn, Pool, transaction, undone_alone

logger = logging.getLogger(__name__)

PRUNE_EVERY_SECONDS = 3_600.0


class Receipts(ProjectRule):
    """`record_injection`, `record_prompt_turn`, `injected_tokens`, `receipts` and
    `context_report`, for MemoryService."""

    pool: Pool
    settings: Settings
    _receipts_pruned_at: float = 0.0

    async def record_injection(self, injection: Injection) -> bool:
        """Keep a receipt of `injection` (nothing when it injected nothing or receipts are
        off); whether one was stored."""
        if not self._keeps(injection):
            return False
        async with transaction(self.pool) as conn:
            await self._insert_receipt(conn, injection)
        return True

    async def record_prompt_turn(
        self, receipt: Injection | None, prompt: JournalPrompt | None
    ) -> None:
        """What one prompt leaves, in one transaction: the receipt of what its hook injected
        (as `record_injection` keeps it) and the prompt in the journal (as `record_prompts`
        stores it); either may be None. The receipt is a savepoint of its own: one the
        database refuses (or its prune) is logged and undone alone, the prompt still kept."""
        keep = receipt is not None and self._keeps(receipt)
        if not keep and prompt is None:
            return
        async with transaction(self.pool) as conn:
            if keep and receipt is not None:
                async with undone_alone(conn, f"record a receipt of session {receipt.session_id}"):
                    await self._insert_receipt(conn, receipt)
            if prompt is not None:
                await journal_store.insert_prompts(conn, [redacted_prompt(prompt)])

    def _keeps(self, injection: Injection) -> bool:
        """Whether a receipt of `injection` is kept: it injected something, receipts are on."""
        return self.settings.receipts_retention_days > 0 and injection.chars > 0

    async def _insert_receipt(self, conn: Conn, injection: Injection) -> None:
        """Insert the receipt and, at most hourly per process, prune those past retention."""
        days = self.settings.receipts_retention_days
        now = datetime.now(UTC)
        await receipt_store.insert(conn, injection, now)
        if time.monotonic() - self._receipts_pruned_at > PRUNE_EVERY_SECONDS:
            self._receipts_pruned_at = time.monotonic()
            pruned = await receipt_store.prune(conn, now - timedelta(days=days))
            if pruned:
                logger.info("pruned %d receipts older than %d days", pruned, days)

    async def injected_tokens(self, session_id: str) -> int:
        """Estimated tokens injected so far into the caller's session `session_id` (what its
        receipts add up to): what the hooks' session budget has spent. 0 for no session, and
        0, logged, when the read fails: a receipt never costs the user their context."""
        if not session_id:
            return 0
        try:
            async with transaction(self.pool) as conn:
                return await receipt_store.session_tokens(conn, session_id)
        except Exception:
            logger.exception("could not read what session %s was given", session_id)
            return 0

    async def context_report(
        self, project: str | None = None, *, days: int = 30, top: int = 10
    ) -> ContextReport:
        """What the hooks injected for the caller over the last `days` days: per day and
        project, totals, and (`top` of each; those the caller may still read) the memories
        injected most often, never used, used most, and contradicted."""
        if not 1 <= days <= 3_650:
            raise InvalidInput(f"days must be between 1 and 3650, got {days}")
        check_limit(top, MAX_PAGE)
        since = datetime.now(UTC) - timedelta(days=days)
        where = ReceiptFilter(project=await self.resolve_project(project), since=since)
        async with transaction(self.pool) as conn:
            totals = await receipt_store.totals(conn, where)
            by_day = await receipt_store.by_day(conn, where)
            counted = await receipt_store.most_injected(conn, where, top)
            judged = {
                verdict: await receipt_store.memories_by_use(conn, where, verdict, top)
                for verdict in VERDICTS
            }
            ids = [i for i, _ in counted] + [m for rows in judged.values() for m, _, _ in rows]
            found = await memory_store.get_many(conn, ids)
            rows = {m.id: m for m in found if m.deleted_at is None}  # retired: not listed
        most = [
            InjectedMemory(memory_id, count, preview(rows[memory_id].content))
            for memory_id, count in counted
            if memory_id in rows
        ]

        def listed(verdict: Verdict) -> list[JudgedMemory]:
            return [
                JudgedMemory(memory_id, seen, count, preview(rows[memory_id].content))
                for memory_id, seen, count in judged[verdict]
                if memory_id in rows
            ]

        return ContextReport(
            since,
            where.project,
            totals,
            by_day,
            most,
            never_used=listed("unused"),
            most_used=listed("used"),
            contradicted=listed("contradicted"),
        )

    async def receipts(self, where: ReceiptFilter | None = None, *, limit: int = 50) -> ReceiptPage:
        """The newest receipts (at most `limit`) of the caller's injections that match, and
        totals over all that match."""
        where = where or ReceiptFilter()
        check_limit(limit, MAX_PAGE)
        hook = blank_to_none(where.hook)
        if hook is not None and hook not in INJECTION_HOOKS:
            raise InvalidInput(f"hook must be one of {', '.join(INJECTION_HOOKS)}, got {hook!r}")
        where = ReceiptFilter(
            session_id=blank_to_none(where.session_id),
            project=await self.resolve_project(where.project),
            hook=hook,
            since=where.since,
            before=where.before,
        )
        async with transaction(self.pool) as conn:
            found = await receipt_store.page(conn, where, limit)
            totals = await receipt_store.totals(conn, where)
            uses = await receipt_store.uses_of(conn, [r.id for r in found])
        return ReceiptPage(found, totals, uses)
