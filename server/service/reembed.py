"""Which model made the stored vectors: the start-up check, and `claude-memory reembed`.

Vectors from two models are not comparable, so the server refuses to start when the configured
model differs from the recorded one. `reembed` re-encodes every memory in batches; it records
state 'reembedding' first, so an interrupted run resumes where it stopped and the server will
not trust a half-done table.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from server.core.errors import EmbeddingModelMismatch
from server.service.bulk_indexes import build_vector_indexes
from server.service.embeddings import Embedder
from server.service.turn_context import embed_in_context, place_of_stored
from server.store import embedding_model as model_store
from server.store import memories as memory_store
from server.store.tx import Conn, Pool, transaction

logger = logging.getLogger(__name__)

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class ReembedResult:
    memories: int
    model: str
    dimension: int
    resumed: bool
    seconds: float


def describe(provider: str, model: str, dimension: int) -> str:
    where = "" if provider == "local" else f" via {provider}"
    return f"{model}{where} ({dimension}-d)"


async def ensure_model_recorded(pool: Pool, embedder: Embedder, unreachable: str = "") -> None:
    """Record the model on a new database; refuse to go on if another one made the vectors.

    An endpoint that cannot be reached at start (`unreachable` says why; the dimension is
    then 0) is no reason to refuse when the store was made with that very model: its recorded
    dimension is taken, saves wait for their vectors and get them when it answers.
    """
    async with transaction(pool) as conn:
        await model_store.lock_model_record(conn)
        record = await model_store.get_record(conn)
        if not embedder.dimension:
            same = record is not None and (record.provider, record.model) == (
                embedder.provider,
                embedder.name,
            )
            if record is None or not same:
                raise EmbeddingModelMismatch(
                    f"{unreachable}; its vector dimension is needed to "
                    + ("set up the store" if record is None else "check the stored vectors")
                )
            embedder.dimension = record.dimension
            logger.warning("%s; memories are saved and embedded once it answers", unreachable)
        if record is None:
            await model_store.clear_vectors_and_set_dimension(conn, embedder.dimension)
            await model_store.create_vector_indexes(conn)
            await model_store.set_record(
                conn, embedder.provider, embedder.name, embedder.dimension, "ready"
            )
            logger.info("recorded embedding model %s (%d-d)", embedder.name, embedder.dimension)
            return
        if record.state == "ready" and record.dimension == embedder.dimension:
            await _type_new_vector_columns(conn, record.dimension)
    if record.state != "ready":
        raise EmbeddingModelMismatch(
            f"an earlier `claude-memory reembed` to {record.model} did not finish; "
            "run `claude-memory reembed` again to complete it"
        )
    stored = (record.provider, record.model, record.dimension)
    if (
        stored != (embedder.provider, embedder.name, embedder.dimension)
        and "+adapted-" in record.model
    ):
        # An adapted model is not a name the provider can load: it is a folder the data
        # directory's `models/active` points at, so name that instead of a setting.
        raise EmbeddingModelMismatch(
            f"the stored vectors were made with {describe(*stored)}, a model adapted by "
            "`claude-memory adapt`, but it is not the one in use (is "
            "$CLAUDE_MEMORY_HOME/models/active missing or changed?); run `claude-memory adapt "
            "--rollback` to go back to the model before it, or `claude-memory reembed` to "
            "re-embed every memory with the configured one"
        )
    if stored != (embedder.provider, embedder.name, embedder.dimension):
        raise EmbeddingModelMismatch(
            f"the stored vectors were made with {describe(*stored)} but the configured model "
            f"is {describe(embedder.provider, embedder.name, embedder.dimension)}; run "
            "`claude-memory reembed` to re-embed every memory with the new model, or set "
            f"CLAUDE_MEMORY_EMBEDDING_PROVIDER={record.provider} "
            f"CLAUDE_MEMORY_EMBEDDING_MODEL={record.model}"
        )


async def _type_new_vector_columns(conn: Conn, dimension: int) -> None:
    """Give vector columns added by a later migration the recorded dimension and an index."""
    for table, declared in (await model_store.vector_column_types(conn)).items():
        if declared == "vector":
            await model_store.set_dimension(conn, table, dimension)
    await model_store.create_vector_indexes(conn)


async def reembed(
    pool: Pool, embedder: Embedder, *, batch_size: int = 256, progress: Progress | None = None
) -> ReembedResult:
    """Re-encode every memory (deleted ones too: they may be restored) with `embedder`.

    Conversation turns are blended with the turns before them again
    (server/service/turn_context.py).
    """
    started = time.monotonic()
    async with transaction(pool) as conn:
        await model_store.lock_model_record(conn)
        record = await model_store.get_record(conn)
        resumed = (
            record is not None
            and record.state == "reembedding"
            and (record.provider, record.model, record.dimension)
            == (embedder.provider, embedder.name, embedder.dimension)
        )
        if not resumed:
            await model_store.drop_vector_indexes(conn)
            await model_store.clear_vectors_and_set_dimension(conn, embedder.dimension)
            await model_store.set_record(
                conn, embedder.provider, embedder.name, embedder.dimension, "reembedding"
            )
        total = await model_store.count_missing_vectors(conn)
    done = 0
    if progress:
        progress(done, total)
    while True:
        async with transaction(pool) as conn:
            batch = await model_store.memories_missing_vectors(conn, batch_size)
        if not batch:
            break
        documents = await embed_in_context(
            pool,
            embedder,
            [memory.content for memory in batch],
            [place_of_stored(memory) for memory in batch],
        )
        async with transaction(pool) as conn:
            await memory_store.set_embeddings(conn, [memory.id for memory in batch], documents)
        done += len(batch)
        if progress:
            progress(done, total)
    # With memory sized to the graph: 100,000 memories took 218 s instead of 557 s at the
    # default 64 MB (docs/benchmarks-history.md, session 24).
    await build_vector_indexes(pool)
    async with transaction(pool) as conn:
        await model_store.lock_model_record(conn)
        await model_store.create_vector_indexes(conn)
        await model_store.set_record(
            conn, embedder.provider, embedder.name, embedder.dimension, "ready"
        )
    seconds = time.monotonic() - started
    logger.info("re-embedded %d memories with %s in %.1fs", done, embedder.name, seconds)
    return ReembedResult(
        memories=done,
        model=embedder.name,
        dimension=embedder.dimension,
        resumed=resumed,
        seconds=round(seconds, 2),
    )
