"""What promote wrote into instruction files, what a person declined there, and how memories
fared after injection (#58): a mixin of MemoryService (server/service/memory.py).

The proposal itself (server/recall/promote.py) reads files and checks the working tree; this
part only keeps its records in `promoted_lines` and reads the verdicts it is earned by.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from server.core.models.promotion import PromotedLine, UseRecord
from server.store import promotions as promotion_store
from server.store.tx import Pool, transaction


class Promotions:
    """`promoted_lines`, `record_promoted` and `use_records`, for MemoryService."""

    pool: Pool

    async def promoted_lines(self, paths: Sequence[str]) -> list[PromotedLine]:
        """The caller's records of these instruction files: lines written, memories declined."""
        if not paths:
            return []
        async with transaction(self.pool) as conn:
            return await promotion_store.lines_of(conn, list(paths))

    async def record_promoted(
        self,
        path: str,
        *,
        written: dict[int, str] | None = None,
        declined: Sequence[int] = (),
        removed: Sequence[int] = (),
    ) -> None:
        """In one transaction: the lines now written in `path` (memory id -> text), the
        memories declined there, and the lines promote removed from it (forgotten)."""
        now = datetime.now(UTC)
        async with transaction(self.pool) as conn:
            if removed:
                await promotion_store.forget(conn, path, list(removed))
            for memory_id, text in (written or {}).items():
                await promotion_store.mark(conn, path, memory_id, "written", text, now)
            for memory_id in declined:
                await promotion_store.mark(conn, path, memory_id, "declined", "", now)

    async def use_records(self, memory_ids: Sequence[int]) -> dict[int, UseRecord]:
        """The caller's uses of these memories since each one's last correction."""
        if not memory_ids:
            return {}
        async with transaction(self.pool) as conn:
            found = await promotion_store.use_records(conn, list(memory_ids))
        return {r.memory_id: r for r in found}
