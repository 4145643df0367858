"""A large import into a small store builds the vector indexes once, after, instead of growing
them row by row.

Every stored turn adds about four vectors (its own, its passages', its statements') to the two
HNSW graphs, and inserting into a graph costs far more than building one over the same rows:
on two cores a 3,000-turn first import spent 76 s of PostgreSQL CPU growing the graphs and
18 s building them afterwards (docs/benchmarks-history.md, session 24). So an import that will more
than double the store (agent sessions, a claude.ai export, notes, an export file) drops the
indexes, writes without them, and builds them when it ends,
with more memory for the build than the server's default (`create_vector_indexes`).

While the indexes are gone, searches read the vectors exactly (slower on a large store, never
wrong), and writers elsewhere go on. The build at the end runs CONCURRENTLY, so they go on
then too; behind a transaction pooler it holds writes to the table it indexes until it is done
(up to about a minute per 10,000 turns), longer than a save waits. If the process dies before the
build, the next start builds the missing indexes (server/service/reembed.py checks them at
every start), and an index a failed concurrent build left invalid is built again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from server.core.errors import Unavailable
from server.store import embedding_model as model_store
from server.store import memories as memory_store
from server.store.tx import Pool, autocommit, behind_transaction_pooler, transaction

logger = logging.getLogger(__name__)

# Below this many new memories the graphs grow in well under a minute: not worth dropping them.
MIN_DEFERRED_TURNS = 2_000


def build_after(expected: int, stored: int) -> bool:
    """Whether an import of about `expected` memories into a store of `stored` should build
    the indexes after.

    A build costs about a quarter of what inserting the same rows one by one costs, but it
    indexes the rows already stored too: at n new rows over N stored it pays once n > N / 3.
    The rule asks for n > N, so an estimate three times too high still does not lose, and an
    export imported again into the store it filled (every draft a duplicate) changes nothing.
    """
    return expected >= MIN_DEFERRED_TURNS and expected > stored


@asynccontextmanager
async def vector_indexes_after(pool: Pool, expected: int) -> AsyncIterator[bool]:
    """Drop the vector indexes for the block when `build_after` says so, and build them when
    it ends, however it ends; yields whether they were dropped."""
    async with transaction(pool) as conn:
        stored = await memory_store.count_all(conn)
    if not build_after(expected, stored):
        yield False
        return
    logger.info(
        "importing about %d memories into a store of %d: the vector indexes are built once the"
        " import ends",
        expected,
        stored,
    )
    async with transaction(pool) as conn:
        await model_store.lock_model_record(conn)
        await model_store.drop_vector_indexes(conn)
    try:
        yield True
    finally:
        await build_vector_indexes(pool)


async def build_vector_indexes(pool: Pool) -> None:
    """Build the missing vector indexes with memory sized to them, concurrently so that saves
    elsewhere go on meanwhile; behind a transaction pooler (no session of our own), or when
    the sized build fails (a container's small shared memory refusing a parallel build's
    memory, for one), in one transaction with the server's default memory, holding writes."""
    started = time.monotonic()
    try:
        if behind_transaction_pooler(pool):
            async with transaction(pool) as conn:
                await model_store.lock_model_record(conn)
                await model_store.create_vector_indexes(conn, sized_memory=True)
        else:
            async with autocommit(pool) as conn:
                await model_store.create_vector_indexes_concurrently(conn)
    except Unavailable:
        raise
    except Exception as exc:  # the database refused the memory; its default still builds
        logger.warning("building the vector indexes with more memory failed (%s); retrying", exc)
        async with transaction(pool) as conn:
            await model_store.lock_model_record(conn)
            await model_store.create_vector_indexes(conn)
    logger.info("built the vector indexes in %.1fs", time.monotonic() - started)
