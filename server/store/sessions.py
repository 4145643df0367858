"""SQL for `imported_sessions`: what the importers have read and what learning has done."""

from __future__ import annotations

from psycopg.rows import class_row

from server.models import ImportedSession
from server.store.tx import Conn

SESSION_COLUMNS = (
    "session_id, source, project, project_path, file_path, bytes_imported, lines_imported,"
    " message_count, first_message_at, last_message_at, imported_at, distill_state,"
    " distill_failures, distill_last_error, distilled_at, signals_state, behavior_state"
)

_SESSION_FILTER = (
    "(%(project)s::text IS NULL OR project = %(project)s OR project_path = %(project)s)"
    " AND (%(source)s::text IS NULL OR source = %(source)s)"
)


async def count(conn: Conn, project: str | None, source: str | None) -> int:
    cur = await conn.execute(
        f"SELECT count(*) FROM imported_sessions WHERE {_SESSION_FILTER}",
        {"project": project, "source": source},
    )
    row = await cur.fetchone()
    return int(row[0]) if row else 0


async def list_page(
    conn: Conn, project: str | None, source: str | None, limit: int, offset: int
) -> list[ImportedSession]:
    """Sessions newest message first (never-dated ones last)."""
    async with conn.cursor(row_factory=class_row(ImportedSession)) as cur:
        await cur.execute(
            f"SELECT {SESSION_COLUMNS} FROM imported_sessions WHERE {_SESSION_FILTER}"
            " ORDER BY last_message_at DESC NULLS LAST, session_id"
            " LIMIT %(limit)s OFFSET %(offset)s",
            {"project": project, "source": source, "limit": limit, "offset": offset},
        )
        return await cur.fetchall()
