"""SQL for the learning jobs: which sessions to distill, their turns, and what was learned."""

from __future__ import annotations

from collections.abc import Sequence

from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from server.core.models.learning import EventRow, SessionTurnRow
from server.core.models.memories import Memory
from server.core.models.sessions import PendingSession, StoredTurn
from server.store.memories import COLUMNS
from server.store.sessions import SESSION_VISIBLE_SQL
from server.store.tx import Conn

# A session's row, and its turns, of the user the transaction acts for (ownerless ones with
# none): distillation acts as each session's owner, and users' rows of one session id are
# each their own (migration 025).
_SAME_OWNER = "coalesce({table}.owner_id, 0) = coalesce(current_viewer(), 0)"


async def pending_sessions(
    conn: Conn,
    *,
    project: str | None,
    session_ids: Sequence[str] | None,
    min_messages: int,
    max_failures: int,
) -> list[PendingSession]:
    """Sessions waiting for distillation, oldest activity first.

    A session qualifies with `min_messages` stored turns in all, fewer than `max_failures`
    failed attempts, and at least one turn not yet distilled (archived). Each owner's row of a
    session id is its own, counted with that owner's turns.
    """
    async with conn.cursor(row_factory=class_row(PendingSession)) as cur:
        await cur.execute(
            "SELECT s.session_id, s.source, s.project, s.title, s.distill_failures, s.owner_id,"
            " count(m.id) FILTER (WHERE m.archived_at IS NULL) AS new_turns"
            " FROM imported_sessions s"
            " JOIN memories m ON m.session_id = s.session_id AND m.kind = 'raw'"
            "   AND m.deleted_at IS NULL AND coalesce(m.owner_id, 0) = coalesce(s.owner_id, 0)"
            " WHERE s.distill_state = 'pending' AND s.distill_failures < %(max_failures)s"
            " AND (%(project)s::text IS NULL OR s.project = %(project)s"
            "      OR s.project_path = %(project)s)"
            " AND (%(ids)s::text[] IS NULL OR s.session_id = ANY(%(ids)s))"
            " GROUP BY s.session_id, s.owner_id, s.source, s.project, s.title,"
            " s.distill_failures"
            " HAVING count(m.id) >= %(min_messages)s"
            "   AND count(m.id) FILTER (WHERE m.archived_at IS NULL) > 0"
            " ORDER BY max(m.created_at), s.session_id, s.owner_id",
            {
                "project": project,
                "ids": list(session_ids) if session_ids is not None else None,
                "min_messages": min_messages,
                "max_failures": max_failures,
            },
        )
        return await cur.fetchall()


async def sessions_with_prefix(conn: Conn, prefix: str, limit: int = 20) -> list[str]:
    cur = await conn.execute(
        "SELECT DISTINCT session_id FROM imported_sessions"
        " WHERE starts_with(session_id, %(prefix)s)"
        f" AND {SESSION_VISIBLE_SQL}"
        " ORDER BY session_id LIMIT %(limit)s",
        {"prefix": prefix, "limit": limit},
    )
    return [row[0] for row in await cur.fetchall()]


async def undistilled_turns(conn: Conn, session_id: str) -> list[StoredTurn]:
    """A session's live raw turns not yet distilled, in the order they were said: those of
    the user the transaction acts for (the session's owner, as distillation acts)."""
    async with conn.cursor(row_factory=class_row(StoredTurn)) as cur:
        await cur.execute(
            "SELECT id, coalesce(role, 'user') AS role, content, created_at FROM memories"
            " WHERE session_id = %(session)s AND kind = 'raw' AND deleted_at IS NULL"
            f" AND archived_at IS NULL AND {_SAME_OWNER.format(table='memories')}"
            " ORDER BY created_at, id",
            {"session": session_id},
        )
        return await cur.fetchall()


async def archive(conn: Conn, memory_ids: Sequence[int]) -> int:
    cur = await conn.execute(
        "UPDATE memories SET archived_at = now() WHERE id = ANY(%(ids)s) AND archived_at IS NULL",
        {"ids": list(memory_ids)},
    )
    return cur.rowcount


async def mark_distilled(conn: Conn, session_id: str, turns: int) -> None:
    await conn.execute(
        "UPDATE imported_sessions SET distill_state = 'done', distilled_at = now(),"
        " distilled_message_count = distilled_message_count + %(turns)s,"
        " distill_last_error = NULL WHERE session_id = %(session)s"
        f" AND {_SAME_OWNER.format(table='imported_sessions')}",
        {"session": session_id, "turns": turns},
    )


async def mark_distill_failed(conn: Conn, session_id: str, reason: str, max_failures: int) -> int:
    """Count a failed attempt; at `max_failures` the session is `failed` until reset."""
    cur = await conn.execute(
        "UPDATE imported_sessions SET distill_failures = distill_failures + 1,"
        " distill_last_error = %(reason)s,"
        " distill_state = CASE WHEN distill_failures + 1 >= %(max)s THEN 'failed'"
        "   ELSE distill_state END"
        " WHERE session_id = %(session)s"
        f" AND {_SAME_OWNER.format(table='imported_sessions')} RETURNING distill_failures",
        {"session": session_id, "reason": reason[:2000], "max": max_failures},
    )
    row = await cur.fetchone()
    return int(row[0]) if row else 0


async def reset_failures(conn: Conn, session_ids: Sequence[str] | None) -> int:
    """Make failed sessions pending again with a clean count; all of them when ids is None."""
    cur = await conn.execute(
        "UPDATE imported_sessions SET distill_failures = 0, distill_last_error = NULL,"
        " distill_state = CASE WHEN distill_state = 'failed' THEN 'pending'"
        "   ELSE distill_state END"
        " WHERE (distill_failures > 0 OR distill_state = 'failed')"
        " AND (%(ids)s::text[] IS NULL OR session_id = ANY(%(ids)s))"
        " AND (current_viewer() IS NULL OR owner_id = current_viewer())",
        {"ids": list(session_ids) if session_ids is not None else None},
    )
    return cur.rowcount


async def by_signal_keys(conn: Conn, keys: Sequence[str]) -> list[Memory]:
    """The memories stored under these signal keys (deleted ones too: they stay deleted)."""
    async with conn.cursor(row_factory=class_row(Memory)) as cur:
        await cur.execute(
            f"SELECT DISTINCT ON (metadata->>'signal_key') {COLUMNS} FROM memories"
            " WHERE metadata ? 'signal_key' AND metadata->>'signal_key' = ANY(%(keys)s)"
            " ORDER BY metadata->>'signal_key', deleted_at NULLS FIRST, id",
            {"keys": list(keys)},
        )
        return await cur.fetchall()


async def set_metadata(conn: Conn, memory_id: int, metadata: dict[str, object]) -> None:
    await conn.execute(
        "UPDATE memories SET metadata = %(metadata)s, updated_at = now() WHERE id = %(id)s",
        {"id": memory_id, "metadata": Jsonb(metadata)},
    )


async def sessions_pending_signals(conn: Conn, project: str | None) -> list[tuple[str, str]]:
    """(session id, project) of sessions with turns or events not yet mined for signals; a
    session id several users imported, once."""
    cur = await conn.execute(
        "SELECT session_id, project FROM (SELECT DISTINCT ON (session_id) session_id, project,"
        " last_message_at FROM imported_sessions WHERE signals_state <> 'done'"
        " AND (%(project)s::text IS NULL OR project = %(project)s OR project_path = %(project)s)"
        " ORDER BY session_id, owner_id NULLS FIRST) AS pending"
        " ORDER BY last_message_at NULLS LAST, session_id",
        {"project": project},
    )
    return [(row[0], row[1]) for row in await cur.fetchall()]


async def turns_of_sessions(conn: Conn, session_ids: Sequence[str]) -> list[SessionTurnRow]:
    """Raw turns of these sessions (archived ones too), in the order they were said."""
    async with conn.cursor(row_factory=class_row(SessionTurnRow)) as cur:
        await cur.execute(
            "SELECT id, session_id, project, coalesce(role, 'user') AS role, content, created_at,"
            " metadata->>'record_uuid' AS record_uuid FROM memories"
            " WHERE session_id = ANY(%(ids)s) AND kind = 'raw' AND deleted_at IS NULL"
            " ORDER BY session_id, created_at, id",
            {"ids": list(session_ids)},
        )
        return await cur.fetchall()


async def events_of(
    conn: Conn, *, session_ids: Sequence[str] = (), projects: Sequence[str] = ()
) -> list[EventRow]:
    """Tool calls of these sessions and of every session of these projects, in order."""
    async with conn.cursor(row_factory=class_row(EventRow)) as cur:
        await cur.execute(
            "SELECT session_id, project, tool, target, success, at FROM session_events"
            " WHERE session_id = ANY(%(ids)s) OR project = ANY(%(projects)s)"
            " ORDER BY session_id, at NULLS FIRST, id",
            {"ids": list(session_ids), "projects": list(projects)},
        )
        return await cur.fetchall()


async def project_paths(conn: Conn, projects: Sequence[str]) -> dict[str, str]:
    cur = await conn.execute(
        "SELECT DISTINCT ON (project) project, project_path FROM imported_sessions"
        " WHERE project = ANY(%(projects)s) AND project_path <> ''"
        " ORDER BY project, last_message_at DESC NULLS LAST",
        {"projects": list(projects)},
    )
    return {row[0]: row[1] for row in await cur.fetchall()}


async def mark_signals_done(conn: Conn, session_ids: Sequence[str]) -> None:
    await conn.execute(
        "UPDATE imported_sessions SET signals_state = 'done', signals_at = now()"
        " WHERE session_id = ANY(%(ids)s)",
        {"ids": list(session_ids)},
    )


async def behavior_pending(
    conn: Conn,
    *,
    project: str | None,
    session_ids: Sequence[str] | None,
    force: bool,
    max_failures: int,
) -> list[PendingSession]:
    """Distilled sessions not yet read for behaviour (any distilled session with `force`); a
    session id several users imported, once (behaviour is learned team-wide)."""
    async with conn.cursor(row_factory=class_row(PendingSession)) as cur:
        await cur.execute(
            "SELECT session_id, source, project, title, distill_failures, new_turns FROM ("
            " SELECT DISTINCT ON (session_id) session_id, source, project, title,"
            " behavior_failures AS distill_failures, message_count AS new_turns,"
            " last_message_at FROM imported_sessions"
            " WHERE distill_state = 'done'"
            " AND (%(force)s OR (behavior_state = 'pending'"
            "      AND behavior_failures < %(max_failures)s))"
            " AND (%(project)s::text IS NULL OR project = %(project)s"
            "      OR project_path = %(project)s)"
            " AND (%(ids)s::text[] IS NULL OR session_id = ANY(%(ids)s))"
            " ORDER BY session_id, owner_id NULLS FIRST) AS pending"
            " ORDER BY last_message_at NULLS LAST, session_id",
            {
                "project": project,
                "ids": list(session_ids) if session_ids is not None else None,
                "force": force,
                "max_failures": max_failures,
            },
        )
        return await cur.fetchall()


async def forget_behavior_of(conn: Conn, session_id: str) -> int:
    """Undo what an earlier behaviour pass learned from a session (for `--force`).

    Observations that came from it are soft-deleted; those it only supported lose it from
    their evidence.
    """
    cur = await conn.execute(
        "UPDATE memories SET deleted_at = now(), updated_at = now()"
        " WHERE source = 'behavior' AND session_id = %(session)s AND deleted_at IS NULL",
        {"session": session_id},
    )
    await conn.execute(
        "UPDATE memories SET metadata = jsonb_set(metadata, '{evidence_sessions}',"
        "   coalesce((SELECT jsonb_agg(e)"
        "             FROM jsonb_array_elements(metadata->'evidence_sessions') AS e"
        "             WHERE e <> to_jsonb(%(session)s::text)), '[]'::jsonb))"
        " WHERE source = 'behavior' AND deleted_at IS NULL"
        " AND metadata->'evidence_sessions' ? %(session)s",
        {"session": session_id},
    )
    return cur.rowcount


async def add_evidence(conn: Conn, memory_id: int, session_id: str, seen_at: str) -> None:
    """Count one more session in support of a learned memory."""
    await conn.execute(
        "UPDATE memories SET updated_at = now(), metadata = jsonb_set(jsonb_set(metadata,"
        " '{evidence_sessions}', coalesce(metadata->'evidence_sessions', '[]'::jsonb)"
        "   || to_jsonb(%(session)s::text)), '{last_seen}', to_jsonb(%(seen)s::text))"
        " WHERE id = %(id)s AND NOT coalesce(metadata->'evidence_sessions', '[]'::jsonb)"
        "   ? %(session)s",
        {"id": memory_id, "session": session_id, "seen": seen_at},
    )


async def mark_behavior(conn: Conn, session_id: str) -> None:
    await conn.execute(
        "UPDATE imported_sessions SET behavior_state = 'done', behavior_at = now(),"
        " behavior_last_error = NULL WHERE session_id = %(session)s",
        {"session": session_id},
    )


async def mark_behavior_failed(conn: Conn, session_id: str, reason: str, max_failures: int) -> int:
    cur = await conn.execute(
        "UPDATE imported_sessions SET behavior_failures = behavior_failures + 1,"
        " behavior_last_error = %(reason)s,"
        " behavior_state = CASE WHEN behavior_failures + 1 >= %(max)s THEN 'failed'"
        "   ELSE behavior_state END"
        " WHERE session_id = %(session)s RETURNING behavior_failures",
        {"session": session_id, "reason": reason[:2000], "max": max_failures},
    )
    row = await cur.fetchone()
    return int(row[0]) if row else 0
