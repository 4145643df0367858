"""Whole-database operations for backup and restore: names, counts, create, swap, drop.

These run on their own autocommit connections (CREATE / ALTER / DROP DATABASE cannot run in a
transaction), against the server's maintenance database `postgres`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from server.core.errors import DatabaseSetupError


@dataclass(frozen=True, slots=True)
class Counts:
    memories: int
    sessions: int
    migrations: int


def database_name(url: str) -> str:
    name = conninfo_to_dict(url).get("dbname")
    if not name:
        raise ValueError("the database URL names no database")
    return str(name)


def with_database(url: str, name: str) -> str:
    """The same server and credentials, another database."""
    params = conninfo_to_dict(url)
    params["dbname"] = name
    return make_conninfo("", **params)


def counts(url: str) -> Counts:
    """What a database holds; DatabaseSetupError when it is not a claude-memory database."""
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            row = conn.execute(
                "SELECT (SELECT count(*) FROM memories), (SELECT count(*) FROM imported_sessions),"
                " (SELECT count(*) FROM schema_migrations)"
            ).fetchone()
    except psycopg.Error as exc:
        raise DatabaseSetupError(f"cannot read the database: {exc}") from None
    if row is None:
        raise DatabaseSetupError("cannot read the database: no counts")
    return Counts(memories=int(row[0]), sessions=int(row[1]), migrations=int(row[2]))


@dataclass(frozen=True, slots=True)
class StoredUser:
    """A `users` row as a restore compares it: who, with which token, over what, revoked."""

    name: str
    token_hash: str
    projects: str | None  # the array as PostgreSQL writes it ({a,b}); None: every project
    active: bool


def users(url: str) -> set[StoredUser]:
    """The users a database holds (none: a single-user store, or one not migrated yet)."""
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            table = conn.execute("SELECT to_regclass('public.users')").fetchone()
            if table is None or table[0] is None:
                return set()
            rows = conn.execute(
                "SELECT name, token_hash, projects::text, revoked_at IS NULL FROM users"
            ).fetchall()
    except psycopg.Error as exc:
        raise DatabaseSetupError(f"cannot read the database's users: {exc}") from None
    return {
        StoredUser(str(r[0]), str(r[1]), None if r[2] is None else str(r[2]), bool(r[3]))
        for r in rows
    }


def content_hashes(url: str) -> set[str]:
    with psycopg.connect(url, autocommit=True) as conn:
        return {row[0] for row in conn.execute("SELECT content_hash FROM memories").fetchall()}


@contextmanager
def _maintenance(url: str) -> Iterator[psycopg.Connection[tuple[object, ...]]]:
    """An autocommit connection to the server's `postgres` database; errors made readable."""
    try:
        with psycopg.connect(with_database(url, "postgres"), autocommit=True) as conn:
            yield conn
    except psycopg.Error as exc:
        raise DatabaseSetupError(f"database administration failed: {exc}") from None


def create_database(url: str, name: str) -> None:
    with _maintenance(url) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def drop_database(url: str, name: str) -> None:
    with _maintenance(url) as conn:
        _disconnect(conn, name)
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))


def swap_databases(url: str, live: str, replacement: str, retired: str) -> None:
    """`live` becomes `retired` and `replacement` becomes `live`.

    Other sessions on `live` (a running server's pool) are disconnected first; their pool
    reconnects to the new database on its next checkout.
    """
    with _maintenance(url) as conn:
        _disconnect(conn, live)
        conn.execute(
            sql.SQL("ALTER DATABASE {} RENAME TO {}").format(
                sql.Identifier(live), sql.Identifier(retired)
            )
        )
        conn.execute(
            sql.SQL("ALTER DATABASE {} RENAME TO {}").format(
                sql.Identifier(replacement), sql.Identifier(live)
            )
        )


def _disconnect(conn: psycopg.Connection[tuple[object, ...]], name: str) -> None:
    conn.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
        " WHERE datname = %(name)s AND pid <> pg_backend_pid()",
        {"name": name},
    )
