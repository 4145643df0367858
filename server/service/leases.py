"""Leases on the items of batch jobs, so runners in several processes never do one item twice.

Two `distill` runs at once (a manual one beside the hourly pipeline, or server replicas on one
database) read the same queue. Before a session is handled its runner takes the lease
(`job_leases`, migration 015), renews it while it works and releases it when done; a runner
that finds the lease held by another skips the session, and one that gets it checks that the
session still needs the work (the other runner may have just finished it). A runner that
crashes stops renewing: a run on the same machine sees that its process is gone and takes its
sessions at once; elsewhere they are taken once the lease expires (`LEASE_SECONDS`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable

from server.core.errors import Unavailable
from server.store import leases as lease_store
from server.store.tx import Pool, transaction

logger = logging.getLogger(__name__)

LEASE_SECONDS = 300.0
HOST = socket.gethostname()


def new_holder() -> str:
    """A runner's name in `job_leases.holder`: where it runs, which process, which service."""
    return f"{HOST}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def gone_from_this_host(holder: str) -> bool:
    """Whether `holder` names a process of this machine that no longer runs."""
    host_and_pid = holder.rpartition(":")[0]  # host:pid:run
    host, _, pid_text = host_and_pid.rpartition(":")
    if host != HOST or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        return False
    return False


class JobLeases:
    """The jobs' leases over one pool; each service is one runner (`holder`)."""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool
        self.holder = new_holder()

    @contextlib.asynccontextmanager
    async def leased(
        self,
        job: str,
        item: str,
        *,
        still_needed: Callable[[], Awaitable[bool]] | None = None,
        seconds: float = LEASE_SECONDS,
    ) -> AsyncIterator[bool]:
        """Hold `job`'s lease on `item` for the block; yields False (do nothing) when another
        runner holds it or, once held, `still_needed` says the work is already done."""
        holder = self.holder
        async with transaction(self.pool) as conn:
            held = await lease_store.claim(conn, job, item, holder, seconds)
            if not held:
                current = await lease_store.holder_of(conn, job, item)
                if current is not None and gone_from_this_host(current):
                    logger.info("%s: %s's runner %s is gone; taking it over", job, item, current)
                    held = await lease_store.take_over(conn, job, item, current, holder, seconds)
        if not held:
            logger.info("%s: %s is being handled by another runner; skipped", job, item)
            yield False
            return
        keeper = asyncio.create_task(self._keep(job, item, holder, seconds))
        try:
            yield still_needed is None or await still_needed()
        finally:
            keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await keeper
            try:
                async with transaction(self.pool) as conn:
                    await lease_store.release(conn, job, item, holder)
            except Unavailable:
                logger.warning("%s: could not release %s; its lease expires by itself", job, item)

    async def _keep(self, job: str, item: str, holder: str, seconds: float) -> None:
        """Renew the lease every third of its length while the work goes on."""
        while True:
            await asyncio.sleep(seconds / 3)
            try:
                async with transaction(self.pool) as conn:
                    if not await lease_store.renew(conn, job, item, holder, seconds):
                        logger.warning("%s: the lease on %s was taken over", job, item)
                        return
            except Unavailable:
                logger.warning("%s: could not renew the lease on %s; trying again", job, item)
