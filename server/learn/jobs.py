"""What the LLM jobs (distill, behavior) share: sessions run a few at a time, with progress,
and a stop signal that keeps the remaining sessions from starting once the LLM is gone."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from server.core.models import PendingSession

Progress = Callable[[int, int], None]


async def run_sessions(
    queue: Sequence[PendingSession],
    handle: Callable[[PendingSession], Awaitable[None]],
    *,
    workers: int,
    stop: asyncio.Event,
    progress: Progress | None,
) -> None:
    """`handle` each session, `workers` at a time; none starts after `stop` is set."""
    slots = asyncio.Semaphore(workers)
    done = 0

    async def one(pending: PendingSession) -> None:
        nonlocal done
        async with slots:
            if not stop.is_set():
                await handle(pending)
            done += 1
            if progress is not None:
                progress(done, len(queue))

    await asyncio.gather(*(one(pending) for pending in queue))
