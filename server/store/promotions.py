"""SQL for what promote wrote into instruction files and what a person declined there
(`promoted_lines`, migration 026, #58), and the use counts promotion is earned by.

Rows are their owner's (the default stamps them) and read only by them; acting for nobody
(single-user mode, the CLI) reads every row.
"""

from __future__ import annotations

from datetime import datetime

from psycopg.rows import class_row

from server.core.models.promotion import PromotedLine, UseRecord
from server.store.tx import Conn

_MINE = "(current_viewer() IS NULL OR owner_id = current_viewer())"


async def lines_of(conn: Conn, paths: list[str]) -> list[PromotedLine]:
    """The caller's rows for these files."""
    cur = conn.cursor(row_factory=class_row(PromotedLine))
    await cur.execute(
        "SELECT file_path, memory_id, state, text, at FROM promoted_lines"
        f" WHERE {_MINE} AND file_path = ANY(%(paths)s) ORDER BY file_path, memory_id",
        {"paths": paths},
    )
    return await cur.fetchall()


async def mark(conn: Conn, path: str, memory_id: int, state: str, text: str, at: datetime) -> None:
    """Record `memory_id`'s line in `path` as written (with its text) or declined."""
    await conn.execute(
        "INSERT INTO promoted_lines (file_path, memory_id, state, text, at)"
        " VALUES (%(path)s, %(id)s, %(state)s, %(text)s, %(at)s)"
        " ON CONFLICT (file_path, memory_id, coalesce(owner_id, 0))"
        " DO UPDATE SET state = excluded.state, text = excluded.text, at = excluded.at",
        {"path": path, "id": memory_id, "state": state, "text": text, "at": at},
    )


async def forget(conn: Conn, path: str, memory_ids: list[int]) -> None:
    """Drop the caller's written rows of these memories in `path` (lines promote removed)."""
    await conn.execute(
        f"DELETE FROM promoted_lines WHERE {_MINE} AND file_path = %(path)s"
        " AND memory_id = ANY(%(ids)s) AND state = 'written'",
        {"path": path, "ids": memory_ids},
    )


async def use_records(conn: Conn, memory_ids: list[int]) -> list[UseRecord]:
    """Per memory with verdicts, the caller's: injections it was used in after its last
    correction (a 'contradicted' verdict), and when that correction was."""
    cur = conn.cursor(row_factory=class_row(UseRecord))
    await cur.execute(
        "SELECT u.memory_id,"
        " (count(*) FILTER (WHERE u.verdict = 'used'"
        "  AND (c.corrected_at IS NULL OR u.at > c.corrected_at)))::int AS uses,"
        " c.corrected_at"
        " FROM injection_uses AS u"
        " LEFT JOIN (SELECT memory_id, max(at) AS corrected_at FROM injection_uses"
        f"  WHERE {_MINE} AND verdict = 'contradicted' AND memory_id = ANY(%(ids)s)"
        "  GROUP BY memory_id) AS c ON c.memory_id = u.memory_id"
        " WHERE (current_viewer() IS NULL OR u.owner_id = current_viewer())"
        " AND u.memory_id = ANY(%(ids)s)"
        " GROUP BY u.memory_id, c.corrected_at",
        {"ids": memory_ids},
    )
    return await cur.fetchall()
