"""Open what a command needs, once, in order: database, migrations, model, pool, service.

`serve` and every batch command go through `open_service`, so they share one way of finding
the database (embedded unless DATABASE_URL is set), one migration step and one model check.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from server.core.config import Settings
from server.db.embedded import start_embedded
from server.db.migrate import apply_migrations
from server.db.pool import open_pool
from server.service.embeddings import Embedder
from server.service.memory import MemoryService
from server.service.reembed import ensure_model_recorded

logger = logging.getLogger(__name__)


@asynccontextmanager
async def open_database(settings: Settings) -> AsyncIterator[str]:
    """Yield a database URL: DATABASE_URL, or the embedded server (released at exit)."""
    if settings.database_url is not None:
        yield settings.database_url.reveal()
        return
    settings.claude_memory_home.mkdir(parents=True, exist_ok=True)
    embedded = await anyio.to_thread.run_sync(start_embedded, settings.embedded_pgdata)
    try:
        yield embedded.url
    finally:
        await anyio.to_thread.run_sync(embedded.release)


async def load_embedder(settings: Settings) -> Embedder:
    return await anyio.to_thread.run_sync(
        Embedder.load, settings.embedding_model, settings.embedding_batch_size
    )


@asynccontextmanager
async def open_service(
    settings: Settings, *, embedder: Embedder | None = None, check_model: bool = True
) -> AsyncIterator[MemoryService]:
    """A ready MemoryService; `check_model=False` is for `reembed`, which fixes a mismatch."""
    async with open_database(settings) as url:
        await apply_migrations(url)
        if embedder is None:
            embedder = await load_embedder(settings)
        pool = await open_pool(
            url,
            min_size=settings.db_pool_min_size,
            max_size=settings.db_pool_max_size,
            statement_timeout_ms=settings.db_statement_timeout_ms,
        )
        try:
            if check_model:
                await ensure_model_recorded(pool, embedder)
            yield MemoryService(pool, embedder, settings)
        finally:
            await pool.close()
