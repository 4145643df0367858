"""Open what a command needs, once, in order: database, migrations, model, pool, service.

`serve` and every batch command go through `open_service`, so they share one way of finding the
database (embedded unless CLAUDE_MEMORY_DATABASE_URL is set), one migration step and one model
check.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial

import anyio

from server.core.config import Settings
from server.core.errors import EmbeddingUnavailable, StartupError
from server.db.embedded import start_embedded
from server.db.migrate import apply_migrations
from server.db.pool import open_pool
from server.service.adapted_models import active_model
from server.service.embedding_profiles import profile_for
from server.service.embeddings import Embedder, LocalEmbedder, NoModel
from server.service.memory import MemoryService
from server.service.reembed import ensure_model_recorded
from server.service.remote_embedder import RemoteEmbedder
from server.service.rerank import Reranker, load_reranker

logger = logging.getLogger(__name__)


@asynccontextmanager
async def open_database(settings: Settings) -> AsyncIterator[str]:
    """Yield a database URL: the configured one, or the embedded server (released at exit)."""
    if settings.database_url is not None:
        yield settings.database_url.reveal()
        return
    settings.claude_memory_home.mkdir(parents=True, exist_ok=True)
    embedded = await anyio.to_thread.run_sync(start_embedded, settings.embedded_pgdata)
    try:
        yield embedded.url
    finally:
        await anyio.to_thread.run_sync(embedded.release)


async def load_embedder(settings: Settings) -> tuple[Embedder, str]:
    """The configured embedder, and why its endpoint could not be reached ("" when it could).

    An unreachable endpoint is not fatal here: ensure_model_recorded decides, knowing whether
    the store was made with that model.
    """
    profile = profile_for(
        settings.embedding_model,
        query_prefix=settings.embedding_query_prefix,
        document_prefix=settings.embedding_document_prefix,
    )
    if settings.embedding_provider == "local":
        adapted = active_model(settings.claude_memory_home, settings.embedding_model)
        local = await anyio.to_thread.run_sync(
            partial(
                LocalEmbedder.load,
                settings.embedding_model,
                settings.embedding_batch_size,
                profile,
                adapted=None if adapted is None else (adapted.recorded_name, str(adapted.path)),
            )
        )
        return local, ""
    remote = RemoteEmbedder.from_settings(settings)
    try:
        dimension = await anyio.to_thread.run_sync(remote.probe)
    except EmbeddingUnavailable as exc:
        return remote, exc.message
    logger.info("embedding with %s at %s (%d-d)", remote.name, remote.base_url, dimension)
    return remote, ""


@asynccontextmanager
async def open_service(
    settings: Settings,
    *,
    embedder: Embedder | None = None,
    check_model: bool = True,
    needs_model: bool = True,
) -> AsyncIterator[MemoryService]:
    """A ready MemoryService; `check_model=False` is for `reembed`, which fixes a mismatch,
    and `needs_model=False` for commands that never embed (no model is loaded or checked)."""
    async with open_database(settings) as url:
        await apply_migrations(url)
        unreachable = ""
        if not needs_model:
            embedder = NoModel(settings.embedding_provider, settings.embedding_model)
            check_model = False
        elif embedder is None:
            embedder, unreachable = await load_embedder(settings)
        pool = await open_pool(
            url,
            min_size=settings.db_pool_min_size,
            max_size=settings.db_pool_max_size,
            statement_timeout_ms=settings.db_statement_timeout_ms,
            transaction_pooling=settings.db_transaction_pooling,
        )
        reranker: Reranker | None = None
        try:
            if check_model:
                await ensure_model_recorded(pool, embedder, unreachable)
            elif unreachable:  # reembed needs the endpoint now
                raise StartupError(unreachable)
            if needs_model:
                reranker = await load_reranker(settings)
            yield MemoryService(pool, embedder, settings, reranker=reranker)
        finally:
            if reranker is not None:
                await reranker.close()
            await pool.close()
