"""OpenCode's session database (`opencode.db`, SQLite), opened read-only and read as rows.

OpenCode 1.x keeps every session in one SQLite file in its data folder (FORMATS are in
server/ingest/opencode.py). This module is the only place that speaks SQL to it; it is a
foreign file we read, not our store, which is why its queries live in `ingest/` (the
architecture test names it). Every function opens the file read-only, so a running OpenCode
writing the same file is never disturbed, and turns SQLite's errors into OSError with the
file's name, which the importer reports and goes on.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

# How long a read waits for OpenCode's own write to finish before giving up on the file.
BUSY_TIMEOUT_SECONDS = 5.0

# A session's size: the bytes of its messages' and parts' JSON. It grows as the session does
# and changes when a streaming part is finished, so the importer's "unchanged" test holds.
_SIZES = """
SELECT s.id, s.parent_id, s.directory,
       COALESCE((SELECT SUM(LENGTH(m.data)) FROM message m WHERE m.session_id = s.id), 0)
     + COALESCE((SELECT SUM(LENGTH(p.data)) FROM part p WHERE p.session_id = s.id), 0)
FROM session s
ORDER BY s.time_created, s.id
"""
_SESSION = "SELECT id, parent_id, directory, title, version FROM session WHERE id = ?"
_MESSAGES = """
SELECT id, time_created, data FROM message WHERE session_id = ? ORDER BY time_created, id
"""
_PARTS = "SELECT message_id, id, data FROM part WHERE session_id = ? ORDER BY message_id, id"


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
    try:
        yield connection
    except sqlite3.Error as exc:
        raise OSError(f"{db}: cannot read OpenCode's database: {exc}") from None
    finally:
        connection.close()


def session_rows(db: Path) -> list[SessionRow]:
    """Every session in `db`, oldest first, each with its size."""
    with _opened(db) as connection:
        rows = connection.execute(_SIZES).fetchall()
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
            for m, t, d in connection.execute(_MESSAGES, (session_id,))
        ]
        parts: dict[str, list[str]] = {}
        for message_id, _, data in connection.execute(_PARTS, (session_id,)):
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
