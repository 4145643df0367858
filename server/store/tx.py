"""Connections and transactions from the pool, with database outages turned into `Unavailable`.

The service never sees psycopg's exceptions for a database that is down or restarting: it gets
`Unavailable`, which the adapters report as a retryable 503 / tool error, while the pool goes
on replacing the dead connections in the background.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
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


@dataclass(frozen=True, slots=True)
class _OneRead:
    """The transaction `one_read` opened, and the lock its parts take it by, one at a time."""

    pool: Pool
    conn: Conn
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


# The read the current task (and the tasks it started) runs its transactions in, if any.
_READ: ContextVar[_OneRead | None] = ContextVar("claude_memory_read", default=None)
# Whether the current task is inside one of that read's parts already (a part within a part).
_IN_PART: ContextVar[bool] = ContextVar("claude_memory_read_part", default=False)


@asynccontextmanager
async def transaction(pool: Pool) -> AsyncIterator[Conn]:
    """One connection and one transaction: committed on success, rolled back on any error.

    Behind a transaction pooler the pool's settings open every transaction (server/db/pool.py).
    When a user is asking (server/core/access.py), the transaction acts for them: its inserts
    are theirs and its reads see only what they may. Inside `one_read` of the same pool, it is
    a part of that read instead.
    """
    shared = _READ.get()
    if shared is not None and shared.pool is pool:
        async with _part_of(shared) as conn:
            yield conn
        return
    with _database_errors():
        async with _opened(pool) as conn:
            yield conn


@asynccontextmanager
async def one_read(pool: Pool) -> AsyncIterator[None]:
    """One read-only transaction for everything read inside the block: each `transaction(pool)`
    opened in it, by this task or the tasks it starts (a search's legs), is a part of it.

    The parts take the connection one at a time, so legs that would have run on connections of
    their own run one after another, and each part is a savepoint rolled back at its end: a
    part leaves nothing behind, not even its `SET LOCAL` planner settings (server/store/
    search.py), and a part that fails leaves the read usable (its caller decides). Nothing is
    written inside: the transaction is read-only, so a write fails loudly. The prompt hook reads
    this way (server/service/memory.py `prompt_recall`): one transaction a prompt, not one per
    question it asks.
    """
    with _database_errors():
        async with _opened(pool) as conn:
            await conn.execute("SET TRANSACTION READ ONLY")
            token = _READ.set(_OneRead(pool, conn))
            try:
                yield
            finally:
                _READ.reset(token)


@asynccontextmanager
async def _part_of(shared: _OneRead) -> AsyncIterator[Conn]:
    """A part of `shared`'s read: the connection alone, in a savepoint rolled back after."""
    if _IN_PART.get():  # already this task's: the part it is inside goes on
        yield shared.conn
        return
    async with shared.lock:
        token = _IN_PART.set(True)
        try:
            with _database_errors():
                async with shared.conn.transaction(force_rollback=True):
                    yield shared.conn
        finally:
            _IN_PART.reset(token)


@asynccontextmanager
async def _opened(pool: Pool) -> AsyncIterator[Conn]:
    """A pooled connection in a transaction, with the pool's settings and the viewer's."""
    settings = getattr(pool, "transaction_settings", ())
    viewer = current_viewer()
    async with pool.connection() as conn, conn.transaction():
        if settings:
            await conn.execute(settings_statement(settings, local=True))
        if viewer is not None:
            await act_for(conn, viewer.settings())
        yield conn


@contextmanager
def _database_errors() -> Iterator[None]:
    """psycopg's errors as the service's: an outage is `Unavailable`, a refusal `Forbidden`."""
    try:
        yield
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


@asynccontextmanager
async def undone_alone(conn: Conn, what: str) -> AsyncIterator[None]:
    """A savepoint whose failure is logged and undone alone: the enclosing transaction goes on
    and commits the rest (a receipt the database refuses must not take the prompt with it)."""
    try:
        async with conn.transaction():
            yield
    except psycopg.Error:
        logger.exception("could not %s", what)


def behind_transaction_pooler(pool: Pool) -> bool:
    """Whether the pool's connections go through a pooler in transaction mode
    (server/db/pool.py), where session state does not last past a statement."""
    return bool(getattr(pool, "transaction_settings", ()))


async def act_for(conn: Conn, settings: tuple[tuple[str, str], ...]) -> None:
    """Apply a viewer's settings to the open transaction (values are parameters: user data)."""
    calls = ", ".join("set_config(%s, %s, true)" for _ in settings)
    await conn.execute(f"SELECT {calls}", [part for pair in settings for part in pair])


async def ping(pool: Pool, timeout: float = 2.0) -> bool:
    """True when the database answers `SELECT 1` within `timeout` seconds.

    A pool whose every connection is out (fifty clients writing at once) is busy, not down: it
    then asks the database over a connection of its own, so /health does not report a working
    database as unavailable to a supervisor that would restart it.
    """
    try:
        async with pool.connection(timeout=timeout) as conn:
            await conn.execute("SELECT 1")
    except PoolTimeout:
        # Our pools are opened from a URL; a pool built on a conninfo callable stays "down".
        conninfo = pool.conninfo
        return isinstance(conninfo, str) and await _answers_outside_the_pool(conninfo, timeout)
    except (psycopg.Error, OSError):
        return False
    return True


async def _answers_outside_the_pool(conninfo: str, timeout: float) -> bool:
    try:
        async with asyncio.timeout(timeout):
            conn = await psycopg.AsyncConnection.connect(
                conninfo, connect_timeout=max(1, int(timeout)), autocommit=True
            )
            async with conn:
                await conn.execute("SELECT 1")
    except (psycopg.Error, OSError, TimeoutError):
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
