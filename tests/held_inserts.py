"""Writers that all reach their insert at once: a race made certain instead of left to timing."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from typing import TypeVar

from server.service.memory import MemoryService

T = TypeVar("T")

# Long enough for every writer to embed its text and look for what is already stored.
HOLD_SECONDS = 3.0


async def with_inserts_held(service: MemoryService, writers: Sequence[Awaitable[T]]) -> list[T]:
    """Run `writers` at once while a reader's SHARE lock on `memories` holds their inserts
    (reads go on), then let them through together; their results, in order."""
    async with service.pool.connection() as conn:
        await conn.execute("LOCK TABLE memories IN SHARE MODE")
        tasks = [asyncio.ensure_future(writer) for writer in writers]
        await asyncio.sleep(HOLD_SECONDS)
    return await asyncio.gather(*tasks)
