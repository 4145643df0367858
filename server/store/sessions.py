"""SQL for `imported_sessions`: what the importers have read and what learning has done."""

from __future__ import annotations

from psycopg.rows import class_row

from server.core.models.sessions import FileProgress, ImportedSession
from server.store.tx import Conn

SESSION_COLUMNS = (
    "session_id, title, source, project, project_path, file_path, bytes_imported, lines_imported,"
    " message_count, first_message_at, last_message_at, imported_at, distill_state,"
    " distill_failures, distill_last_error, distilled_at, signals_state, behavior_state"
)

# Whether the user a transaction acts for may see a session and its turns: their own, or one
# imported by nobody in particular (the CLI, before users); all of them when nobody is asking.
SESSION_VISIBLE_SQL = (
    "(current_viewer() IS NULL OR imported_sessions.owner_id IS NULL"
    " OR imported_sessions.owner_id = current_viewer())"
)

_SESSION_FILTER = (
    "(%(project)s::text IS NULL OR project = %(project)s OR project_path = %(project)s)"
    " AND (%(source)s::text IS NULL OR source = %(source)s)"
    f" AND {SESSION_VISIBLE_SQL}"
)


async def project_names(conn: Conn) -> list[tuple[str, str]]:
    """(name, folder) of the projects of the imported sessions the reader may see (a session
    may be imported before, or without, any memory of its project)."""
    cur = await conn.execute(
        "SELECT DISTINCT project, project_path FROM imported_sessions"
        f" WHERE project <> '' AND {SESSION_VISIBLE_SQL} ORDER BY project, project_path"
    )
    return [(str(name), str(path)) for name, path in await cur.fetchall()]


async def counts_by_source(conn: Conn, project: str | None) -> dict[str, int]:
    """How many sessions each agent has (in `project`, if given): the list's filter choices."""
    cur = await conn.execute(
        "SELECT source, count(*) FROM imported_sessions"
        " WHERE (%(project)s::text IS NULL OR project = %(project)s OR project_path = %(project)s)"
        f" AND {SESSION_VISIBLE_SQL}"
        " GROUP BY source ORDER BY count(*) DESC, source",
        {"project": project},
    )
    return {str(source): int(n) for source, n in await cur.fetchall()}


async def list_page(
    conn: Conn, project: str | None, source: str | None, limit: int, offset: int
) -> list[ImportedSession]:
    """Sessions newest message first (never-dated ones last)."""
    async with conn.cursor(row_factory=class_row(ImportedSession)) as cur:
        await cur.execute(
            f"SELECT {SESSION_COLUMNS} FROM imported_sessions WHERE {_SESSION_FILTER}"
            " ORDER BY last_message_at DESC NULLS LAST, session_id, owner_id"
            " LIMIT %(limit)s OFFSET %(offset)s",
            {"project": project, "source": source, "limit": limit, "offset": offset},
        )
        return await cur.fetchall()


# Whose import rows a transaction reads and writes: its user's, or with none the ownerless
# ones. Read positions and session rows are each owner's own (migration 025): one user's import
# of a file never advances, or claims, another's.
_SAME_OWNER = "coalesce(owner_id, 0) = coalesce(current_viewer(), 0)"


async def file_offsets(conn: Conn) -> dict[str, tuple[int, int]]:
    """file path -> (bytes, lines) already imported, for every file the transaction's user (or,
    with none, nobody in particular) has read."""
    cur = await conn.execute(
        f"SELECT file_path, bytes_imported, lines_imported FROM imported_files WHERE {_SAME_OWNER}"
    )
    return {row[0]: (int(row[1]), int(row[2])) for row in await cur.fetchall()}


async def known_project_names(conn: Conn) -> dict[str, str]:
    """project path -> display name, as already stored (names never change once given)."""
    cur = await conn.execute(
        "SELECT DISTINCT ON (project_path) project_path, project FROM ("
        "  SELECT project_path, project FROM imported_sessions"
        "  UNION ALL SELECT DISTINCT project_path, project FROM memories"
        " ) AS known WHERE project_path <> '' AND project <> ''"
        " ORDER BY project_path, project"
    )
    return {row[0]: row[1] for row in await cur.fetchall()}


async def record_progress(
    conn: Conn, progress: FileProgress, new_turns: int, new_events: int = 0
) -> None:
    """Save how far a file was read, and fold its new turns into its session's row: the
    read position and the row of the user the transaction acts for (ownerless with none).

    New turns put a distilled session back in the distill queue; new turns or tool calls put
    it back in the signals queue.
    """
    if progress.file_path is not None:
        await _record_file(conn, progress)
    await _record_session(conn, progress, new_turns, new_events)


async def _record_file(conn: Conn, progress: FileProgress) -> None:
    await conn.execute(
        "INSERT INTO imported_files (file_path, session_id, agent_id, source, bytes_imported,"
        " lines_imported, updated_at)"
        " VALUES (%(file_path)s, %(session_id)s, %(agent_id)s, %(source)s, %(bytes)s,"
        " %(lines)s, now())"
        " ON CONFLICT (file_path, coalesce(owner_id, 0)) DO UPDATE SET"
        " session_id = EXCLUDED.session_id,"
        " agent_id = EXCLUDED.agent_id, bytes_imported = EXCLUDED.bytes_imported,"
        " lines_imported = EXCLUDED.lines_imported, updated_at = now()",
        _progress_params(progress),
    )


async def _record_session(
    conn: Conn, progress: FileProgress, new_turns: int, new_events: int
) -> None:
    await conn.execute(
        "INSERT INTO imported_sessions AS s (session_id, source, project, project_path,"
        " file_path, bytes_imported, lines_imported, message_count, first_message_at,"
        " last_message_at, imported_at, title)"
        " VALUES (%(session_id)s, %(source)s, %(project)s, %(project_path)s,"
        " CASE WHEN %(main)s THEN %(file_path)s END,"
        " CASE WHEN %(main)s THEN %(bytes)s ELSE 0 END,"
        " CASE WHEN %(main)s THEN %(lines)s ELSE 0 END,"
        " %(new_turns)s, %(first_at)s, %(last_at)s, now(), %(title)s)"
        " ON CONFLICT (session_id, coalesce(owner_id, 0)) DO UPDATE SET"
        " project = CASE WHEN s.project = '' THEN EXCLUDED.project ELSE s.project END,"
        " project_path = CASE WHEN s.project_path = '' THEN EXCLUDED.project_path"
        "   ELSE s.project_path END,"
        " file_path = coalesce(EXCLUDED.file_path, s.file_path),"
        " bytes_imported = CASE WHEN %(main)s THEN EXCLUDED.bytes_imported"
        "   ELSE s.bytes_imported END,"
        " lines_imported = CASE WHEN %(main)s THEN EXCLUDED.lines_imported"
        "   ELSE s.lines_imported END,"
        " message_count = s.message_count + EXCLUDED.message_count,"
        " first_message_at = least(s.first_message_at, EXCLUDED.first_message_at),"
        " last_message_at = greatest(s.last_message_at, EXCLUDED.last_message_at),"
        " imported_at = now(),"
        " title = coalesce(EXCLUDED.title, s.title),"
        " distill_state = CASE WHEN %(new_turns)s > 0 AND s.distill_state IN ('done', 'skipped')"
        "   THEN 'pending' ELSE s.distill_state END,"
        " signals_state = CASE WHEN %(new_turns)s > 0 OR %(new_events)s > 0 THEN 'pending'"
        "   ELSE s.signals_state END,"
        " behavior_state = CASE WHEN %(new_turns)s > 0 AND s.behavior_state IN ('done', 'skipped')"
        "   THEN 'pending' ELSE s.behavior_state END",
        {**_progress_params(progress), "new_turns": new_turns, "new_events": new_events},
    )


def _progress_params(progress: FileProgress) -> dict[str, object]:
    return {
        "file_path": progress.file_path,
        "session_id": progress.session_id,
        "agent_id": progress.agent_id,
        "source": progress.source,
        "project": progress.project,
        "project_path": progress.project_path,
        "bytes": progress.bytes_imported,
        "lines": progress.lines_imported,
        "main": progress.main_file,
        "title": progress.title,
        "first_at": progress.first_at,
        "last_at": progress.last_at,
    }
