"""The async connection pool, with pgvector registered and the search settings applied.

Behind a pooler in transaction mode (PgBouncer's `pool_mode = transaction`,
`CLAUDE_MEMORY_DB_TRANSACTION_POOLING=true`) a server connection serves other clients between our
transactions, so nothing may rest on session state: the settings are then applied at the
start of every transaction (`SET LOCAL` semantics) instead of once per connection, and
statements are never prepared (a prepared statement lives in one server session).
"""

from __future__ import annotations

import asyncio
import logging

import psycopg
from pgvector.psycopg import register_vector_async
from psycopg.types.json import set_json_loads
from psycopg_pool import AsyncConnectionPool

from server.core.errors import DatabaseSetupError
from server.core.validation import load_stored_metadata

logger = logging.getLogger(__name__)

# ef_search 100 keeps HNSW recall@10 at or above 0.99 of exact search on the m 32 /
# ef_construction 300 graph (server/store/embedding_model.py, docs/benchmarks-history.md); iterative
# scans keep filtered searches from returning fewer hits than asked for.
SEARCH_SETTINGS = (("hnsw.ef_search", "100"), ("hnsw.iterative_scan", "relaxed_order"))


class MemoryPool(AsyncConnectionPool[psycopg.AsyncConnection[tuple[object, ...]]]):
    """The pool, and what `transaction()` must set first in each transaction (only behind a
    transaction pooler; empty when the settings live on the connection)."""

    transaction_settings: tuple[tuple[str, str], ...] = ()


def settings_statement(settings: tuple[tuple[str, str], ...], *, local: bool) -> str:
    """One statement setting all of `settings`, for the session or the transaction."""
    calls = ", ".join(
        f"set_config('{name}', '{value}', {'true' if local else 'false'})"
        for name, value in settings
    )
    return f"SELECT {calls}"


async def open_pool(
    url: str,
    *,
    min_size: int = 1,
    max_size: int = 5,
    statement_timeout_ms: int = 30_000,
    open_timeout: float = 30.0,
    transaction_pooling: bool = False,
) -> MemoryPool:
    """Open a pool and wait for its first connection, so a bad URL fails here, readably.

    Connections are checked before each use, so one the server dropped (a restart, an idle
    timeout) is replaced instead of failing the request that drew it.
    """

    settings = (*SEARCH_SETTINGS, ("statement_timeout", str(int(statement_timeout_ms))))

    async def configure(conn: psycopg.AsyncConnection[tuple[object, ...]]) -> None:
        await register_vector_async(conn)
        set_json_loads(load_stored_metadata, conn)
        if transaction_pooling:
            conn.prepare_threshold = None
        else:
            await conn.execute(settings_statement(settings, local=False))
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

    pool = MemoryPool(
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
    if transaction_pooling:
        pool.transaction_settings = settings
    try:
        await pool.open(wait=True, timeout=open_timeout)
    except Exception as exc:
        await pool.close()
        raise DatabaseSetupError(f"cannot open database connections: {exc}") from exc
    return pool
