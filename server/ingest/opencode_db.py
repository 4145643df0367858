"""OpenCode's session database (`opencode.db`, SQLite), opened read-only and read as rows.

OpenCode 1.x keeps every session in one SQLite file in its data folder (FORMATS are in
server/ingest/opencode.py). This module is the only place that speaks SQL to it; it is a
foreign file we read, not our store, which is why its queries live in `ingest/` (the
architecture test names it). Every function opens the file read-only, so a running OpenCode
writing the same file is never disturbed, and turns SQLite's errors into OSError with the
file's name, which the importer reports and goes on.

Anyone who can write to the data folder can leave a hostile file there, and its sessions are
read while other users' hook imports wait (server/ingest/session_imports.py). So the tables we
read must be plain tables (a view can be a query that never ends), every read stops after
READ_SECONDS, and the number of rows read is capped.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# How long a read waits for OpenCode's own write to finish before giving up on the file.
BUSY_TIMEOUT_SECONDS = 5.0
# How long one read of the database may run before it is abandoned, and how many rows it may
# return: far beyond a real OpenCode database, short of holding up the other imports for long.
READ_SECONDS = 10.0
MAX_SESSIONS = 100_000
MAX_SESSION_ROWS = 500_000  # a session's messages, and separately its parts
_PROGRESS_STEPS = 10_000  # SQLite instructions between two looks at the clock
_TABLES = ("session", "message", "part")

# A session's size: the bytes of its messages' and parts' JSON. It grows as the session does
# and changes when a streaming part is finished, so the importer's "unchanged" test holds.
_SIZES = """
SELECT s.id, s.parent_id, s.directory,
       COALESCE((SELECT SUM(LENGTH(m.data)) FROM message m WHERE m.session_id = s.id), 0)
     + COALESCE((SELECT SUM(LENGTH(p.data)) FROM part p WHERE p.session_id = s.id), 0)
FROM session s
ORDER BY s.time_created, s.id
LIMIT ?
"""
_SESSION = "SELECT id, parent_id, directory, title, version FROM session WHERE id = ?"
_MESSAGES = """
SELECT id, time_created, data FROM message WHERE session_id = ? ORDER BY time_created, id
LIMIT ?
"""
_PARTS = """
SELECT message_id, id, data FROM part WHERE session_id = ? ORDER BY message_id, id LIMIT ?
"""


@dataclass(frozen=True, slots=True)
class SessionRow:
    """One row of OpenCode's `session` table, with its size (see _SIZES)."""

    id: str
    parent_id: str | None
    directory: str
    size: int


@dataclass(frozen=True, slots=True)
class SessionRecords:
    """One session as OpenCode stored it: its row's fields, its messages and their parts."""

    id: str
    parent_id: str | None
    directory: str
    title: str | None
    version: str | None
    messages: list[tuple[str, int, str]]  # (id, time_created in ms, data JSON)
    parts: dict[str, list[str]]  # message id -> its parts' data JSON, in id (time) order


@contextmanager
def _opened(db: Path) -> Iterator[sqlite3.Connection]:
    try:
        connection = sqlite3.connect(
            f"{db.absolute().as_uri()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_SECONDS
        )
    except sqlite3.Error as exc:
        raise OSError(f"{db}: cannot open OpenCode's database: {exc}") from None
    deadline = time.monotonic() + READ_SECONDS
    connection.set_progress_handler(lambda: time.monotonic() > deadline, _PROGRESS_STEPS)
    try:
        _check_tables(db, connection)
        yield connection
    except sqlite3.OperationalError as exc:
        if time.monotonic() > deadline:
            raise OSError(
                f"{db}: reading OpenCode's database took longer than {READ_SECONDS:g} s;"
                " it was abandoned"
            ) from None
        raise OSError(f"{db}: cannot read OpenCode's database: {exc}") from None
    except sqlite3.Error as exc:
        raise OSError(f"{db}: cannot read OpenCode's database: {exc}") from None
    finally:
        connection.close()


def _check_tables(db: Path, connection: sqlite3.Connection) -> None:
    """Refuse a database whose session, message or part is not a plain table."""
    kinds = dict(
        connection.execute(
            "SELECT name, CASE WHEN sql LIKE 'CREATE VIRTUAL%' THEN 'virtual table' ELSE type END"
            " FROM sqlite_master WHERE name IN (?, ?, ?)",
            _TABLES,
        ).fetchall()
    )
    for name in _TABLES:
        if kinds.get(name, "table") != "table":
            raise OSError(
                f"{db}: OpenCode's `{name}` is a {kinds[name]}, not a table; the file was not"
                " written by OpenCode and is not read"
            )


def _capped(db: Path, rows: list[Any], limit: int, what: str) -> list[Any]:
    if len(rows) > limit:
        raise OSError(f"{db}: more than {limit:,} {what}; the file is not read")
    return rows


def session_rows(db: Path) -> list[SessionRow]:
    """Every session in `db`, oldest first, each with its size."""
    with _opened(db) as connection:
        rows = connection.execute(_SIZES, (MAX_SESSIONS + 1,)).fetchall()
    _capped(db, rows, MAX_SESSIONS, "sessions")
    return [SessionRow(str(i), p, str(d or ""), int(size or 0)) for i, p, d, size in rows]


def session_records(db: Path, session_id: str) -> SessionRecords | None:
    """A session's row, messages and parts, read in one transaction; None when it is gone."""
    with _opened(db) as connection:
        connection.execute("BEGIN")  # one snapshot, while OpenCode may be writing
        row = connection.execute(_SESSION, (session_id,)).fetchone()
        if row is None:
            return None
        messages = [
            (str(m), int(t or 0), d if isinstance(d, str) else "")
            for m, t, d in _capped(
                db,
                connection.execute(_MESSAGES, (session_id, MAX_SESSION_ROWS + 1)).fetchall(),
                MAX_SESSION_ROWS,
                f"messages in session {session_id}",
            )
        ]
        parts: dict[str, list[str]] = {}
        part_rows = connection.execute(_PARTS, (session_id, MAX_SESSION_ROWS + 1)).fetchall()
        for message_id, _, data in _capped(
            db, part_rows, MAX_SESSION_ROWS, f"parts in session {session_id}"
        ):
            parts.setdefault(str(message_id), []).append(data if isinstance(data, str) else "")
        connection.execute("COMMIT")
    return SessionRecords(
        id=str(row[0]),
        parent_id=row[1],
        directory=str(row[2] or ""),
        title=row[3],
        version=row[4],
        messages=messages,
        parts=parts,
    )
