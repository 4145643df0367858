"""The embedding model record, and the vector columns' dimension and indexes that depend on it.

The vector columns' type and their HNSW indexes follow the recorded model. They are set here,
by the code that records a model, rather than by a migration: the dimension is a property of
the configured model, which migrations cannot know.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
from psycopg import sql
from psycopg.rows import class_row

from server.core.models.memories import Memory
from server.core.models.vectors import EmbeddingModelRecord, Window
from server.db.migrate import VECTOR_TABLES
from server.store.memories import COLUMNS
from server.store.tx import Conn, returned_ids

logger = logging.getLogger(__name__)

_ADOPT_LOCK_KEY = 0x636C6D656E
# The HNSW graph's build settings, as (option, value); see create_vector_indexes.
HNSW_GRAPH = (("m", 32), ("ef_construction", 300))
_WANTED = sorted(f"{name}={value}" for name, value in HNSW_GRAPH)
_INVALID = ["invalid"]


async def lock_model_record(conn: Conn) -> None:
    """Serialise model changes across processes until the transaction ends."""
    await conn.execute("SELECT pg_advisory_xact_lock(%(key)s)", {"key": _ADOPT_LOCK_KEY})


async def get_record(conn: Conn) -> EmbeddingModelRecord | None:
    async with conn.cursor(row_factory=class_row(EmbeddingModelRecord)) as cur:
        await cur.execute(
            "SELECT provider, model, dimension, state, recorded_at FROM embedding_model"
        )
        return await cur.fetchone()


async def set_record(conn: Conn, provider: str, model: str, dimension: int, state: str) -> None:
    await conn.execute(
        "INSERT INTO embedding_model (singleton, provider, model, dimension, state, recorded_at)"
        " VALUES (true, %(provider)s, %(model)s, %(dim)s, %(state)s, now())"
        " ON CONFLICT (singleton) DO UPDATE SET provider = EXCLUDED.provider,"
        " model = EXCLUDED.model, dimension = EXCLUDED.dimension, state = EXCLUDED.state,"
        " recorded_at = now()",
        {"provider": provider, "model": model, "dim": dimension, "state": state},
    )


async def vector_column_types(conn: Conn) -> dict[str, str]:
    """The declared type of each table's `embedding` column, e.g. {'memories': 'vector(384)'}."""
    cur = await conn.execute(
        "SELECT c.relname, format_type(a.atttypid, a.atttypmod)"
        " FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid"
        " WHERE a.attname = 'embedding' AND NOT a.attisdropped"
        " AND c.relname = ANY(%(tables)s) AND c.relkind = 'r'",
        {"tables": [table for table, _ in VECTOR_TABLES]},
    )
    return {str(row[0]): str(row[1]) for row in await cur.fetchall()}


async def drop_vector_indexes(conn: Conn) -> None:
    for _, index in VECTOR_TABLES:
        await conn.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(index)))


async def clear_vectors_and_set_dimension(conn: Conn, dimension: int) -> None:
    """Empty every vector and retype the columns; vectors of another size cannot stay."""
    await conn.execute(
        "UPDATE memories SET embedding = NULL, units_indexed = false WHERE embedding IS NOT NULL"
    )
    await conn.execute("DELETE FROM memory_chunks")
    for table, _ in VECTOR_TABLES:
        await set_dimension(conn, table, dimension)


async def set_dimension(conn: Conn, table: str, dimension: int) -> None:
    await conn.execute(
        sql.SQL("ALTER TABLE {} ALTER COLUMN embedding TYPE vector({})").format(
            sql.Identifier(table), sql.Literal(int(dimension))
        )
    )


async def create_vector_indexes(conn: Conn, *, sized_memory: bool = False) -> None:
    """Build any missing HNSW index, and rebuild one built with other graph settings; a build
    over many rows may outlast statement_timeout. With `sized_memory` each build gets the
    memory its graph needs (`build_memory_mb`) instead of the server's maintenance_work_mem.

    m 32 and ef_construction 300 (`HNSW_GRAPH`): the denser graph reaches 0.99 recall@10 at
    `hnsw.ef_search` 100 (server/db/pool.py), so each look-up reads fewer rows than the m 24 /
    ef_construction 200 graph needed at 200; the default graph (16, 64) reached only 0.955 at
    30,000 memories (docs/benchmarks-history.md). A store whose index predates the setting gets the
    new graph once, at the next start: about two minutes per 50,000 memories on two cores.
    """
    await conn.execute("SET LOCAL statement_timeout = 0")
    built = await _index_options(conn)
    for table, index in VECTOR_TABLES:
        if index in built and built[index] != _WANTED:
            logger.warning(
                "rebuilding the vector index %s with m %d, ef_construction %d (once)",
                index,
                *(value for _, value in HNSW_GRAPH),
            )
            await conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(index)))
        elif index in built:
            continue
        if sized_memory:
            megabytes = build_memory_mb(*await _vector_rows(conn, table))
            await conn.execute(
                sql.SQL("SET LOCAL maintenance_work_mem = {}").format(sql.Literal(f"{megabytes}MB"))
            )
        await conn.execute(_create_index(table, index, concurrently=False))


async def create_vector_indexes_concurrently(conn: Conn) -> None:
    """`create_vector_indexes(sized_memory=True)` without holding writes off: each missing
    index is built with CREATE INDEX CONCURRENTLY, so saves go on while it builds (at about
    twice the reads of the table). `conn` must be in autocommit mode, in a session of its own
    (not behind a transaction pooler: the memory and timeout are set for the session, and
    put back after). An index a failed concurrent build left invalid is dropped first."""
    cur = await conn.execute(
        "SELECT current_setting('statement_timeout'), current_setting('maintenance_work_mem')"
    )
    row = await cur.fetchone()
    assert row is not None
    await conn.execute("SET statement_timeout = 0")
    try:
        built = await _index_options(conn)
        for table, index in VECTOR_TABLES:
            if built.get(index) == _WANTED:
                continue
            if index in built:
                await conn.execute(
                    sql.SQL("DROP INDEX CONCURRENTLY {}").format(sql.Identifier(index))
                )
            megabytes = build_memory_mb(*await _vector_rows(conn, table))
            await conn.execute(
                sql.SQL("SET maintenance_work_mem = {}").format(sql.Literal(f"{megabytes}MB"))
            )
            await conn.execute(_create_index(table, index, concurrently=True))
    finally:
        await conn.execute(
            "SELECT set_config('statement_timeout', %(timeout)s, false),"
            " set_config('maintenance_work_mem', %(memory)s, false)",
            {"timeout": str(row[0]), "memory": str(row[1])},
        )


def _create_index(table: str, index: str, *, concurrently: bool) -> sql.Composed:
    return sql.SQL(
        "CREATE INDEX {} IF NOT EXISTS {} ON {} USING hnsw (embedding vector_cosine_ops) WITH ({})"
    ).format(
        sql.SQL("CONCURRENTLY" if concurrently else ""),
        sql.Identifier(index),
        sql.Identifier(table),
        sql.SQL(", ").join(
            sql.SQL("{} = {}").format(sql.SQL(name), sql.Literal(value))
            for name, value in HNSW_GRAPH
        ),
    )


def build_memory_mb(rows: int, dimension: int) -> int:
    """Memory for building one HNSW graph over `rows` vectors of `dimension` floats in memory
    (a graph that does not fit is built far more slowly): each element holds its vector and
    up to 2 m neighbours at the bottom layer, with room to spare; between 64 MB and 1 GB."""
    graph = dict(HNSW_GRAPH)["m"]
    per_row = dimension * 4 + 2 * graph * 8 + 256
    return max(64, min(1024, rows * per_row * 3 // 2 // 2**20))


async def _vector_rows(conn: Conn, table: str) -> tuple[int, int]:
    """How many vectors `table` holds, and their dimension (0 when it holds none)."""
    cur = await conn.execute(
        sql.SQL(
            "SELECT count(*), coalesce(max(vector_dims(embedding)), 0) FROM {}"
            " WHERE embedding IS NOT NULL"
        ).format(sql.Identifier(table))
    )
    row = await cur.fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)


async def _index_options(conn: Conn) -> dict[str, list[str]]:
    """The storage options (sorted `name=value`) of each vector index that exists (in the
    connection's search path, where the tables it indexes are); an index a failed concurrent
    build left invalid has `_INVALID` instead, so it is built again."""
    cur = await conn.execute(
        "SELECT c.relname, coalesce(c.reloptions, '{}'), i.indisvalid"
        " FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid"
        " WHERE c.relkind = 'i' AND c.relname = ANY(%(names)s) AND pg_table_is_visible(c.oid)",
        {"names": [index for _, index in VECTOR_TABLES]},
    )
    return {
        str(name): sorted(options) if valid else _INVALID
        for name, options, valid in await cur.fetchall()
    }


async def count_missing_vectors(conn: Conn) -> int:
    cur = await conn.execute("SELECT count(*) FROM memories WHERE embedding IS NULL")
    row = await cur.fetchone()
    return int(row[0]) if row else 0


async def memories_missing_vectors(conn: Conn, limit: int) -> list[Memory]:
    """A batch of memories still waiting for a vector, lowest ids first."""
    async with conn.cursor(row_factory=class_row(Memory)) as cur:
        await cur.execute(
            f"SELECT {COLUMNS} FROM memories WHERE embedding IS NULL ORDER BY id LIMIT %(limit)s",
            {"limit": limit},
        )
        return await cur.fetchall()


async def memories_without_statement_vectors(conn: Conn, limit: int) -> list[Memory]:
    """A batch of memories stored before statements had vectors (migration 020), lowest ids
    first; memories still waiting for their own vector are left to that backfill."""
    async with conn.cursor(row_factory=class_row(Memory)) as cur:
        await cur.execute(
            f"SELECT {COLUMNS} FROM memories WHERE NOT units_indexed AND embedding IS NOT NULL"
            " ORDER BY id LIMIT %(limit)s",
            {"limit": limit},
        )
        return await cur.fetchall()


async def add_statement_vectors(
    conn: Conn,
    memories: Sequence[Memory],
    statements: Sequence[Sequence[tuple[Window, np.ndarray]]],
) -> set[int]:
    """Store each memory's statement vectors beside its passages; the ids marked indexed.

    A row indexed meanwhile, or with other content (edited since it was read: the edit
    stored its own), is left.
    """
    returned = await returned_ids(
        conn,
        "UPDATE memories SET units_indexed = true WHERE id = %(id)s AND NOT units_indexed"
        " AND embedding IS NOT NULL AND content_hash = %(hash)s RETURNING id",
        [{"id": m.id, "hash": m.content_hash} for m in memories],
    )
    marked = {memory_id for memory_id in returned if memory_id is not None}
    rows = [
        (memory.id, window, vector)
        for memory, found in zip(memories, statements, strict=True)
        if memory.id in marked
        for window, vector in found
    ]
    if not rows:
        return marked
    cur = await conn.execute(
        "SELECT memory_id, coalesce(max(chunk_index) + 1, 0) FROM memory_chunks"
        " WHERE memory_id = ANY(%(ids)s) GROUP BY memory_id",
        {"ids": sorted({memory_id for memory_id, _, _ in rows})},
    )
    next_index = {int(memory_id): int(index) for memory_id, index in await cur.fetchall()}
    params = []
    for memory_id, window, vector in rows:
        index = next_index.get(memory_id, 0)
        next_index[memory_id] = index + 1
        params.append(
            {"id": memory_id, "index": index, "start": window.start, "end": window.end, "v": vector}
        )
    async with conn.cursor() as cur:
        await cur.executemany(
            "INSERT INTO memory_chunks"
            " (memory_id, chunk_index, unit, start_char, end_char, embedding)"
            " VALUES (%(id)s, %(index)s, 'statement', %(start)s, %(end)s, %(v)s)",
            params,
        )
    return marked
