"""The async connection pool, with pgvector registered and session settings applied once."""

from __future__ import annotations

import asyncio
import logging

import psycopg
from pgvector.psycopg import register_vector_async
from psycopg_pool import AsyncConnectionPool

from server.core.errors import DatabaseSetupError

logger = logging.getLogger(__name__)

# ef_search 200 keeps HNSW recall@10 at or above 0.99 of exact search (docs/BENCHMARKS.md);
# iterative scans keep filtered searches from returning fewer hits than asked for.
_SESSION_SETTINGS = (
    "SET hnsw.ef_search = 200",
    "SET hnsw.iterative_scan = relaxed_order",
)


async def open_pool(
    url: str,
    *,
    min_size: int = 1,
    max_size: int = 5,
    statement_timeout_ms: int = 30_000,
    open_timeout: float = 30.0,
) -> AsyncConnectionPool[psycopg.AsyncConnection[tuple[object, ...]]]:
    """Open a pool and wait for its first connection, so a bad URL fails here, readably.

    Connections are checked before each use, so one the server dropped (a restart, an idle
    timeout) is replaced instead of failing the request that drew it.
    """

    async def configure(conn: psycopg.AsyncConnection[tuple[object, ...]]) -> None:
        await register_vector_async(conn)
        for statement in _SESSION_SETTINGS:
            await conn.execute(statement)
        await conn.execute(
            "SELECT set_config('statement_timeout', %(ms)s, false)",
            {"ms": str(statement_timeout_ms)},
        )
        await conn.commit()

    checks: set[asyncio.Task[None]] = set()

    async def check(conn: psycopg.AsyncConnection[tuple[object, ...]]) -> None:
        try:
            await AsyncConnectionPool.check_connection(conn)
        except Exception:
            # One dropped connection usually means the server dropped them all (a restart,
            # terminated backends). The pool would find the others one request at a time,
            # pausing 1, 2, 4, 8 s after each, past its 10 s wait; check every idle one now.
            if not checks:
                task = asyncio.create_task(pool.check())
                checks.add(task)
                task.add_done_callback(checks.discard)
            raise

    pool: AsyncConnectionPool[psycopg.AsyncConnection[tuple[object, ...]]] = AsyncConnectionPool(
        url,
        min_size=min_size,
        max_size=max_size,
        open=False,
        configure=configure,
        check=check,
        timeout=10.0,
        reconnect_timeout=60.0,
        name="claude-memory",
    )
    try:
        await pool.open(wait=True, timeout=open_timeout)
    except Exception as exc:
        await pool.close()
        raise DatabaseSetupError(f"cannot open database connections: {exc}") from exc
    return pool
