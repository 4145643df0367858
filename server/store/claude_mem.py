"""Read claude-mem's SQLite database (`~/.claude-mem/claude-mem.db`), read-only.

The one database we query that is not ours. Its SQL lives here because all SQL lives in the
data layer; server/ingest/from_claude_mem.py turns the rows into memories. Rows are read whole
(`SELECT *`) and returned as dicts, so every schema version claude-mem has shipped (columns
added and renamed over its migrations) reads the same way and the caller picks what exists.
Each function is one statement; the file is opened read-only and never written.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

Row = dict[str, Any]


def open_read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection; sqlite3.DatabaseError when the file is not a SQLite database."""
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        tables(conn)  # SQLite reads the header only now: a text file fails here
    except sqlite3.DatabaseError:
        conn.close()
        raise
    return conn


def tables(conn: sqlite3.Connection) -> set[str]:
    """The names of the tables in the database."""
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return {str(row[0]) for row in rows}


def sessions(conn: sqlite3.Connection) -> list[Row]:
    """Every `sdk_sessions` row: ties claude-mem's own session id to Claude Code's."""
    return [dict(row) for row in conn.execute("SELECT * FROM sdk_sessions ORDER BY id")]


def observations(conn: sqlite3.Connection) -> list[Row]:
    """Every observation (structured since migration 8, `text` only before), oldest first."""
    return [dict(row) for row in conn.execute("SELECT * FROM observations ORDER BY id")]


def session_summaries(conn: sqlite3.Connection) -> list[Row]:
    """Every session summary (request, investigated, learned, completed, next steps)."""
    return [dict(row) for row in conn.execute("SELECT * FROM session_summaries ORDER BY id")]


def legacy_memories(conn: sqlite3.Connection) -> list[Row]:
    """The `memories` table of claude-mem's first schema (before the SDK-session tables)."""
    return [dict(row) for row in conn.execute("SELECT * FROM memories ORDER BY id")]


def legacy_overviews(conn: sqlite3.Connection) -> list[Row]:
    """The `overviews` table of claude-mem's first schema: one summary per session."""
    return [dict(row) for row in conn.execute("SELECT * FROM overviews ORDER BY id")]
