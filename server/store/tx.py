"""Connections and transactions from the pool, with database outages turned into `Unavailable`.

The service never sees psycopg's exceptions for a database that is down or restarting: it gets
`Unavailable`, which the adapters report as a retryable 503 / tool error, while the pool goes
on replacing the dead connections in the background.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeAlias

import psycopg
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from server.core.access import current_viewer
from server.core.errors import Forbidden, Unavailable
from server.db.pool import settings_statement

logger = logging.getLogger(__name__)

Conn: TypeAlias = psycopg.AsyncConnection[Any]
Pool: TypeAlias = AsyncConnectionPool[Conn]

_UNAVAILABLE = "the database is unavailable right now; try again in a moment"
# Raised by the database's own access rules (migrations/019_*), with a message for the user.
REFUSED_SQLSTATE = "CM403"


@asynccontextmanager
async def transaction(pool: Pool) -> AsyncIterator[Conn]:
    """One connection and one transaction: committed on success, rolled back on any error.

    Behind a transaction pooler the pool's settings open every transaction (server/db/pool.py).
    When a user is asking (server/core/access.py), the transaction acts for them: its inserts
    are theirs and its reads see only what they may.
    """
    settings = getattr(pool, "transaction_settings", ())
    viewer = current_viewer()
    try:
        async with pool.connection() as conn, conn.transaction():
            if settings:
                await conn.execute(settings_statement(settings, local=True))
            if viewer is not None:
                await act_for(conn, viewer.settings())
            yield conn
    except (psycopg.OperationalError, PoolTimeout) as exc:
        logger.warning("database unavailable: %s", type(exc).__name__)
        raise Unavailable(_UNAVAILABLE) from exc
    except psycopg.errors.QueryCanceled as exc:
        logger.error("statement timed out")
        raise Unavailable("the database took too long to answer; try again") from exc
    except psycopg.Error as exc:
        if exc.sqlstate == REFUSED_SQLSTATE:
            raise Forbidden(exc.diag.message_primary or "not allowed") from None
        raise


@asynccontextmanager
async def autocommit(pool: Pool) -> AsyncIterator[Conn]:
    """One pooled connection in autocommit mode, for the statements that cannot run inside a
    transaction (CREATE INDEX CONCURRENTLY); it goes back to the pool in transaction mode.
    Only without a transaction pooler, where a connection is one server session."""
    try:
        async with pool.connection() as conn:
            await conn.set_autocommit(True)
            try:
                yield conn
            finally:
                if not conn.closed:
                    await conn.set_autocommit(False)
    except (psycopg.OperationalError, PoolTimeout) as exc:
        logger.warning("database unavailable: %s", type(exc).__name__)
        raise Unavailable(_UNAVAILABLE) from exc


def behind_transaction_pooler(pool: Pool) -> bool:
    """Whether the pool's connections go through a pooler in transaction mode
    (server/db/pool.py), where session state does not last past a statement."""
    return bool(getattr(pool, "transaction_settings", ()))


async def act_for(conn: Conn, settings: tuple[tuple[str, str], ...]) -> None:
    """Apply a viewer's settings to the open transaction (values are parameters: user data)."""
    calls = ", ".join("set_config(%s, %s, true)" for _ in settings)
    await conn.execute(f"SELECT {calls}", [part for pair in settings for part in pair])


async def ping(pool: Pool, timeout: float = 2.0) -> bool:
    """True when a connection answers `SELECT 1` within `timeout` seconds."""
    try:
        async with pool.connection(timeout=timeout) as conn:
            await conn.execute("SELECT 1")
    except (psycopg.Error, PoolTimeout, OSError):
        return False
    return True


async def committed_state(conn: Conn) -> str:
    """The set of transactions committed so far (`xmin:xmax:in-progress ids`) and the
    database's oid, as text.

    The snapshot changes with every commit in the cluster, whoever made it, and never returns
    to an earlier value; the oid changes when `restore` swaps in another database. Two equal
    answers therefore mean nothing was committed in between (the read cache relies on it).
    """
    cur = await conn.execute(
        "SELECT pg_current_snapshot()::text || '/' || oid::text"
        " FROM pg_database WHERE datname = current_database()"
    )
    row = await cur.fetchone()
    return str(row[0]) if row else ""


async def returned_ids(
    conn: Conn, statement: str, params: Sequence[dict[str, Any]]
) -> list[int | None]:
    """Run `statement` (ending in RETURNING id) once per parameter set, in one pipelined round;
    the id each run returned, None where it returned no row (a conflict, a WHERE that failed)."""
    ids: list[int | None] = []
    if not params:
        return ids
    async with conn.cursor() as cur:
        await cur.executemany(statement, params, returning=True)
        while True:
            row = await cur.fetchone()
            ids.append(int(row[0]) if row else None)
            if not cur.nextset():
                break
    return ids
