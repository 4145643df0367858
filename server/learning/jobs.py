"""What the LLM jobs (distill, behavior) share: sessions run a few at a time, with progress,
a stop signal that keeps the remaining sessions from starting once the LLM is gone, and a lease
per session so runners in other processes never handle the same one (server/service/leases.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager

from server.core.models.sessions import PendingSession

Progress = Callable[[int, int], None]
# Held around one session's work: yields whether this runner should do it.
Claim = Callable[[PendingSession], AbstractAsyncContextManager[bool]]


async def run_sessions(
    queue: Sequence[PendingSession],
    handle: Callable[[PendingSession], Awaitable[None]],
    *,
    workers: int,
    stop: asyncio.Event,
    progress: Progress | None,
    claim: Claim | None = None,
) -> None:
    """`handle` each session, `workers` at a time; none starts after `stop` is set. With
    `claim`, a session is handled only inside its claim, and only when the claim says so."""
    slots = asyncio.Semaphore(workers)
    done = 0

    async def one(pending: PendingSession) -> None:
        nonlocal done
        async with slots:
            if stop.is_set():
                pass
            elif claim is None:
                await handle(pending)
            else:
                async with claim(pending) as ours:
                    if ours:
                        await handle(pending)
            done += 1
            if progress is not None:
                progress(done, len(queue))

    await asyncio.gather(*(one(pending) for pending in queue))
