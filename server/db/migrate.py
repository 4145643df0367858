"""Apply `migrations/NNN_name.sql` in order, each once, each in its own transaction.

Each migration's transaction first takes a transaction-level advisory lock and then checks
whether the migration is still pending, so concurrent starters (several `serve` processes on
one database, on one host or many) queue up and apply each migration exactly once. The lock
ends with its transaction, never with a session, so this also holds through a pooler in
transaction mode (PgBouncer), where a session-level lock could be released on another client's
behalf or held by a server connection someone else is using.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path

import psycopg

from server.core.errors import DatabaseSetupError

logger = logging.getLogger(__name__)

MIGRATIONS_DIR = Path(__file__).resolve().parents[2] / "migrations"
_FILE_NAME = re.compile(r"^(\d{3})_([a-z0-9_]+)\.sql$")
# Any constant works; this one spells "clmem" so it is recognisable in pg_locks.
_LOCK_KEY = 0x636C6D656D
# (table, HNSW index name) for every vector column. The migrations make the tables; the
# indexes follow the recorded model (server/store/embedding_model.py), and a backup may hold
# only these (server/db/restore_check.py).
VECTOR_TABLES = (("memories", "memories_embedding_hnsw"), ("memory_chunks", "memory_chunks_hnsw"))


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    path: Path


def discover_migrations(directory: Path = MIGRATIONS_DIR) -> list[Migration]:
    """The migration files in version order; a misnamed or repeated version is an error."""
    if not directory.is_dir():
        raise DatabaseSetupError(f"migrations folder not found: {directory}")
    found: dict[int, Migration] = {}
    for path in sorted(directory.glob("*.sql")):
        match = _FILE_NAME.match(path.name)
        if match is None:
            raise DatabaseSetupError(f"migration file {path.name} is not named NNN_name.sql")
        version = int(match.group(1))
        if version in found:
            raise DatabaseSetupError(
                f"migrations {found[version].path.name} and {path.name} share version {version}"
            )
        found[version] = Migration(version=version, name=match.group(2), path=path)
    return [found[v] for v in sorted(found)]


async def apply_migrations(url: str, directory: Path = MIGRATIONS_DIR) -> list[Migration]:
    """Apply the pending migrations; return the ones this call applied (empty if none)."""
    migrations = discover_migrations(directory)
    try:
        conn = await psycopg.AsyncConnection.connect(url, autocommit=True)
    except psycopg.OperationalError as exc:
        raise DatabaseSetupError(f"cannot connect to the database: {_first_line(exc)}") from exc
    conn.prepare_threshold = None  # a pooler in transaction mode keeps no prepared statements
    async with conn:
        await _require_pgvector(conn)
        return await _apply_pending(conn, migrations)


async def _require_pgvector(conn: psycopg.AsyncConnection[tuple[object, ...]]) -> None:
    cur = await conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
    if await cur.fetchone() is None:
        raise DatabaseSetupError(
            "the pgvector extension is not installed on this PostgreSQL server; install it "
            "(https://github.com/pgvector/pgvector, or use the pgvector/pgvector Docker image) "
            "or unset CLAUDE_MEMORY_DATABASE_URL to use the embedded database"
        )


async def _apply_pending(
    conn: psycopg.AsyncConnection[tuple[object, ...]], migrations: list[Migration]
) -> list[Migration]:
    async with conn.transaction():
        await _lock(conn)
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version integer PRIMARY KEY,"
            " name text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        cur = await conn.execute("SELECT version FROM schema_migrations")
        applied_versions = {row[0] for row in await cur.fetchall()}
    applied: list[Migration] = []
    for migration in migrations:
        if migration.version in applied_versions:
            continue
        script = migration.path.read_text(encoding="utf-8")
        try:
            async with conn.transaction():
                await _lock(conn)
                cur = await conn.execute(
                    "SELECT 1 FROM schema_migrations WHERE version = %(v)s",
                    {"v": migration.version},
                )
                if await cur.fetchone() is not None:
                    continue  # another starter applied it while this one waited
                await conn.execute(script.encode("utf-8"))
                await conn.execute(
                    "INSERT INTO schema_migrations (version, name) VALUES (%(v)s, %(n)s)",
                    {"v": migration.version, "n": migration.name},
                )
        except psycopg.Error as exc:
            raise DatabaseSetupError(
                f"migration {migration.path.name} failed and was rolled back: {_first_line(exc)}"
            ) from exc
        logger.info("applied migration %s", migration.path.name)
        applied.append(migration)
    return applied


async def _lock(conn: psycopg.AsyncConnection[tuple[object, ...]]) -> None:
    """Wait for the other starters; the lock ends with the current transaction."""
    await conn.execute("SELECT pg_advisory_xact_lock(%(key)s)", {"key": _LOCK_KEY})


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
