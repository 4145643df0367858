"""Memories saved while the embeddings endpoint was down get their vectors when it is back.

A write never fails because the embedder is unreachable: the memory is stored without a vector
(`embedding IS NULL`), so keyword search finds it at once, and semantic search once it has
one. `WaitingVectors.embed_waiting` fills one batch, the way `reembed` fills every row, and
then gives the new vectors the supersession check a save would have given them.
`VectorBackfill` runs it in the server's background: every few seconds while nothing waits,
back-to-back while something does, backing off while the endpoint stays down.

The same task gives memories stored before statements had vectors of their own (migration
020, server/domain/statements.py) those vectors, a batch at a time with a pause between
batches, once no memory waits for its own vector: until then such a memory is found by its
passages alone, as before.

Memories written before their anchors were stored (migration 021, server/store/anchors.py)
get them from the same task, ANCHOR_BATCH at a time, whether or not the embedder answers.

Only rows still without a vector and with the content that was embedded are filled, so a
memory edited meanwhile is not given its old text's vector; a row whose model record is not
the embedder's (a `reembed` under way in another process) is left to that process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from server.core.errors import EmbeddingUnavailable
from server.service.embeddings import Embedder
from server.service.supersessions import link_new_memories
from server.service.turn_context import embed_in_context, place_of_stored
from server.store import anchors as anchor_store
from server.store import embedding_model as model_store
from server.store import memories as memory_store
from server.store.tx import Conn, Pool, transaction

logger = logging.getLogger(__name__)

IDLE_SECONDS = 10.0
LONGEST_BACKOFF_SECONDS = 60.0
# Between two batches of statement vectors for memories stored before migration 020: a batch
# of 64 turns takes a few seconds of both cores, so this keeps the catch-up to about two
# thirds of the machine while the user works.
STATEMENT_PAUSE_SECONDS = 2.0
# Memories whose anchors are found in one transaction by the catch-up after migration 021
# (about 0.1 ms of CPU each for a conversation turn, in a worker thread).
ANCHOR_BATCH = 500


class WaitingVectors:
    """Memories saved while the embedder was down, waiting for their vectors."""

    def __init__(self, pool: Pool, embedder: Embedder) -> None:
        self.pool = pool
        self.embedder = embedder

    async def count(self) -> int:
        """How many memories have no vector yet (saved while the embedder was down)."""
        async with transaction(self.pool) as conn:
            return await model_store.count_missing_vectors(conn)

    async def _embedder_is_recorded(self, conn: Conn) -> bool:
        """Whether the stored vectors are this embedder's (not a `reembed` under way in
        another process, which fills every row itself)."""
        record = await model_store.get_record(conn)
        mine = (self.embedder.provider, self.embedder.name, self.embedder.dimension)
        return (
            record is not None
            and record.state == "ready"
            and (record.provider, record.model, record.dimension) == mine
        )

    async def embed_waiting(self, batch_size: int = 64) -> int:
        """Embed up to `batch_size` waiting memories; how many got a vector.

        Raises EmbeddingUnavailable while the endpoint is still down.
        """
        async with transaction(self.pool) as conn:
            if not await self._embedder_is_recorded(conn):
                return 0
            batch = await model_store.memories_missing_vectors(conn, batch_size)
        if not batch:
            return 0
        documents = await embed_in_context(
            self.pool,
            self.embedder,
            [memory.content for memory in batch],
            [place_of_stored(memory) for memory in batch],
        )
        async with transaction(self.pool) as conn:
            filled = await memory_store.fill_missing_vectors(conn, batch, documents)
            live = [m.id for m in batch if m.id in filled and m.deleted_at is None]
            await link_new_memories(conn, live)
        logger.info("embedded %d memories that waited for their vectors", len(filled))
        return len(filled)

    async def index_anchors(self, batch_size: int = ANCHOR_BATCH) -> int:
        """Store the anchors of up to `batch_size` memories written before anchors were stored
        (migration 021); how many were indexed. Needs no embedder."""
        async with transaction(self.pool) as conn:
            indexed = await anchor_store.index_waiting(conn, batch_size)
        if indexed:
            logger.info("stored the anchors of %d memories written before they were", indexed)
        return indexed

    async def index_statements(self, batch_size: int = 64) -> int:
        """Give up to `batch_size` memories stored before statements had vectors (migration
        020) their statement vectors; how many were indexed.

        Raises EmbeddingUnavailable while the endpoint is down.
        """
        async with transaction(self.pool) as conn:
            if not await self._embedder_is_recorded(conn):
                return 0
            batch = await model_store.memories_without_statement_vectors(conn, batch_size)
        if not batch:
            return 0
        statements = await self.embedder.embed_statements_async([m.content for m in batch])
        async with transaction(self.pool) as conn:
            marked = await model_store.add_statement_vectors(conn, batch, statements)
        logger.info(
            "indexed the statements of %d memories stored before they had vectors", len(marked)
        )
        return len(marked)


class VectorBackfill:
    """The server's background task over `embed_waiting`; started and stopped with the app."""

    def __init__(
        self,
        waiting: WaitingVectors,
        *,
        idle_seconds: float = IDLE_SECONDS,
        statement_pause_seconds: float = STATEMENT_PAUSE_SECONDS,
    ) -> None:
        self.waiting = waiting
        self.idle_seconds = idle_seconds
        self.statement_pause_seconds = statement_pause_seconds
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="vector-backfill")

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        wait = self.idle_seconds
        while True:
            try:
                anchored = await self.waiting.index_anchors()
                filled = await self.waiting.embed_waiting()
                if not filled and await self.waiting.index_statements():
                    # Catching up after an upgrade is not urgent: leave the machine room.
                    await asyncio.sleep(self.statement_pause_seconds)
                    continue
            except EmbeddingUnavailable as exc:
                logger.warning("memories still wait for vectors: %s", exc.message)
                wait = min(wait * 2, LONGEST_BACKOFF_SECONDS)
            except Exception:  # the database restarting, say: try again later
                logger.exception("embedding waiting memories failed; trying again later")
                wait = min(wait * 2, LONGEST_BACKOFF_SECONDS)
            else:
                wait = self.idle_seconds
                if filled or anchored:
                    continue
            await asyncio.sleep(wait)
