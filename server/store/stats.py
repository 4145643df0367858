"""Counts and on-disk sizes for the stats view."""

from __future__ import annotations

from server.core.models.stats import SessionCounts, StorageSizes
from server.store.sessions import SESSION_VISIBLE_SQL
from server.store.tx import Conn
from server.store.visibility import VISIBLE_SQL


async def totals(conn: Conn) -> tuple[int, int]:
    """(live, deleted) memory counts."""
    cur = await conn.execute(
        "SELECT count(*) FILTER (WHERE deleted_at IS NULL),"
        f" count(*) FILTER (WHERE deleted_at IS NOT NULL) FROM memories WHERE {VISIBLE_SQL}"
    )
    row = await cur.fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)


async def live_counts_by(conn: Conn) -> dict[str, dict[str, int]]:
    """Live memory counts grouped by project, source and kind, in one scan."""
    cur = await conn.execute(
        "SELECT project, source, kind, count(*) FROM memories"
        f" WHERE deleted_at IS NULL AND {VISIBLE_SQL}"
        " GROUP BY GROUPING SETS ((project), (source), (kind))"
    )
    grouped: dict[str, dict[str, int]] = {"project": {}, "source": {}, "kind": {}}
    for project, source, kind, n in await cur.fetchall():
        if project is not None:
            grouped["project"][project] = int(n)
        elif source is not None:
            grouped["source"][source] = int(n)
        elif kind is not None:
            grouped["kind"][kind] = int(n)
    return grouped


async def storage_sizes(conn: Conn) -> StorageSizes:
    """The memories table's sizes on disk: the whole server's, for single-user mode and the
    command line."""
    cur = await conn.execute(
        "SELECT pg_table_size('memories'), pg_indexes_size('memories'),"
        " coalesce((SELECT sum(pg_column_size(embedding)) FROM memories), 0),"
        " pg_total_relation_size('memories')"
    )
    row = await cur.fetchone()
    if row is None:
        return StorageSizes(0, 0, 0, 0)
    return StorageSizes(
        table_bytes=int(row[0]),
        index_bytes=int(row[1]),
        vector_bytes=int(row[2]),
        total_bytes=int(row[3]),
    )


async def visible_storage_sizes(conn: Conn) -> StorageSizes:
    """The size of the rows this transaction's user can see (their own and their projects'
    shared ones): a teammate's private saves must not show as growing totals. Indexes are
    not split by row, so they count 0."""
    cur = await conn.execute(
        "SELECT coalesce(sum(pg_column_size(memories.*)), 0),"
        " coalesce(sum(pg_column_size(embedding)), 0)"
        f" FROM memories WHERE {VISIBLE_SQL}"
    )
    row = await cur.fetchone()
    rows, vectors = (int(row[0]), int(row[1])) if row else (0, 0)
    return StorageSizes(table_bytes=rows, index_bytes=0, vector_bytes=vectors, total_bytes=rows)


async def session_counts(conn: Conn) -> SessionCounts:
    cur = await conn.execute(
        "SELECT count(*), count(*) FILTER (WHERE distill_state = 'done'),"
        " count(*) FILTER (WHERE distill_state = 'failed'),"
        " count(*) FILTER (WHERE distill_state = 'pending') FROM imported_sessions"
        f" WHERE {SESSION_VISIBLE_SQL}"
    )
    row = await cur.fetchone()
    if row is None:
        return SessionCounts(0, 0, 0, 0)
    return SessionCounts(
        imported=int(row[0]), distilled=int(row[1]), failed=int(row[2]), pending=int(row[3])
    )
