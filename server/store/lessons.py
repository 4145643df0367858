"""SQL for `lessons`, and for the sessions the lesson proposer has read.

With users, reads of lessons apply `lesson_visible()` (migration 018) and inserts are stamped
with the asking user (the column default); see server/core/access.py.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from psycopg.rows import class_row

from server.core.models.lessons import Lesson, LessonChange, LessonDraft
from server.store.journal import journal_owners
from server.store.tx import Conn

COLUMNS = (
    "id, tool, pattern, project, message, strictness, origin, active, created_at, updated_at,"
    " proposed, (SELECT u.name FROM users AS u WHERE u.id = lessons.owner_id) AS owner"
)


async def insert(conn: Conn, draft: LessonDraft) -> Lesson:
    async with conn.cursor(row_factory=class_row(Lesson)) as cur:
        await cur.execute(
            "INSERT INTO lessons (tool, pattern, project, message, strictness, origin)"
            " VALUES (%(tool)s, %(pattern)s, %(project)s, %(message)s, %(strictness)s,"
            f" %(origin)s) RETURNING {COLUMNS}",
            {
                "tool": draft.tool,
                "pattern": draft.pattern,
                "project": draft.project,
                "message": draft.message,
                "strictness": draft.strictness,
                "origin": draft.origin,
            },
        )
        row = await cur.fetchone()
    assert row is not None
    return row


async def update(conn: Conn, lesson_id: int, change: LessonChange) -> Lesson | None:
    """The lesson after the change; None when there is no such lesson."""
    async with conn.cursor(row_factory=class_row(Lesson)) as cur:
        await cur.execute(
            "UPDATE lessons SET tool = coalesce(%(tool)s, tool),"
            " pattern = coalesce(%(pattern)s, pattern), project = coalesce(%(project)s, project),"
            " message = coalesce(%(message)s, message),"
            " strictness = coalesce(%(strictness)s, strictness),"
            " active = coalesce(%(active)s, active),"
            # Enabling a proposal accepts it, disabling dismisses it: either way it was reviewed.
            " proposed = proposed AND %(active)s::boolean IS NULL, updated_at = now()"
            f" WHERE id = %(id)s RETURNING {COLUMNS}",
            {
                "id": lesson_id,
                "tool": change.tool,
                "pattern": change.pattern,
                "project": change.project,
                "message": change.message,
                "strictness": change.strictness,
                "active": change.active,
            },
        )
        return await cur.fetchone()


async def listed(conn: Conn, project: str | None, include_inactive: bool) -> list[Lesson]:
    """The lessons the asking user sees, newest first; with a project, its own and those for
    every project."""
    async with conn.cursor(row_factory=class_row(Lesson)) as cur:
        await cur.execute(
            f"SELECT {COLUMNS} FROM lessons"
            " WHERE (%(project)s::text IS NULL OR project = '' OR project = %(project)s)"
            " AND (%(all)s OR active) AND lesson_visible(owner_id, project) ORDER BY id DESC",
            {"project": project, "all": include_inactive},
        )
        return await cur.fetchall()


@dataclasses.dataclass(frozen=True, slots=True)
class LessonOwnership:
    """Whose a lesson is: its owner (id and name; None before users) and its project."""

    owner_id: int | None
    owner: str | None
    project: str


async def project_names(conn: Conn) -> list[str]:
    """The projects lessons the reader may see are kept for (a project may have lessons and
    no memories yet)."""
    cur = await conn.execute(
        "SELECT DISTINCT project FROM lessons WHERE project <> ''"
        " AND lesson_visible(owner_id, project) ORDER BY project"
    )
    return [str(row[0]) for row in await cur.fetchall()]


async def ownership(conn: Conn, lesson_id: int) -> LessonOwnership | None:
    """Whose the lesson is, locked until the transaction ends; None when there is none or
    the asking user cannot see it."""
    async with conn.cursor(row_factory=class_row(LessonOwnership)) as cur:
        await cur.execute(
            "SELECT owner_id, (SELECT u.name FROM users AS u WHERE u.id = lessons.owner_id)"
            " AS owner, project FROM lessons WHERE id = %(id)s"
            " AND lesson_visible(owner_id, project) FOR UPDATE",
            {"id": lesson_id},
        )
        return await cur.fetchone()


@dataclasses.dataclass(frozen=True, slots=True)
class JournalCounts:
    """How many prompts and calls a session's journal holds."""

    session_id: str
    prompts: int
    calls: int


async def insert_proposed(conn: Conn, draft: LessonDraft, key: str) -> Lesson | None:
    """Store a proposal, inactive; None when the key was proposed before or a lesson with the
    same tool (any case), pattern and project exists, whoever wrote it."""
    async with conn.cursor(row_factory=class_row(Lesson)) as cur:
        await cur.execute(
            "INSERT INTO lessons (tool, pattern, project, message, strictness, origin, active,"
            " proposed, proposal_key)"
            " SELECT %(tool)s, %(pattern)s, %(project)s, %(message)s, %(strictness)s,"
            " %(origin)s, false, true, %(key)s"
            " WHERE NOT EXISTS (SELECT 1 FROM lessons WHERE lower(tool) = lower(%(tool)s)"
            " AND pattern = %(pattern)s AND project = %(project)s)"
            " ON CONFLICT (proposal_key) WHERE proposal_key IS NOT NULL DO NOTHING"
            f" RETURNING {COLUMNS}",
            {
                "tool": draft.tool,
                "pattern": draft.pattern,
                "project": draft.project,
                "message": draft.message,
                "strictness": draft.strictness,
                "origin": draft.origin,
                "key": key,
            },
        )
        return await cur.fetchone()


async def known_proposals(conn: Conn, drafts: Sequence[tuple[str, LessonDraft]]) -> set[str]:
    """The keys among (key, draft) pairs that `insert_proposed` would refuse."""
    if not drafts:
        return set()
    cur = await conn.execute(
        "SELECT d.key FROM unnest(%(keys)s::text[], %(tools)s::text[], %(patterns)s::text[],"
        " %(projects)s::text[]) AS d (key, tool, pattern, project)"
        " WHERE EXISTS (SELECT 1 FROM lessons l WHERE l.proposal_key = d.key"
        " OR (lower(l.tool) = lower(d.tool) AND l.pattern = d.pattern"
        " AND l.project = d.project))",
        {
            "keys": [key for key, _ in drafts],
            "tools": [draft.tool for _, draft in drafts],
            "patterns": [draft.pattern for _, draft in drafts],
            "projects": [draft.project for _, draft in drafts],
        },
    )
    return {row[0] for row in await cur.fetchall()}


async def lock_proposals(conn: Conn) -> None:
    """Serialise proposal runs until the transaction ends (an hourly and a manual run)."""
    await conn.execute("SELECT pg_advisory_xact_lock(hashtext('claude-memory lesson proposals'))")


async def changed_sessions(conn: Conn, project: str | None, rescan: bool) -> list[JournalCounts]:
    """Sessions with two prompts or more whose journal changed since the proposer read it
    (all of them with `rescan`), oldest session id first; with a project, only its sessions.

    A session's prompts and calls are its owner's and the ownerless ones, as the proposer
    reads them (server/store/journal.py `journal_owners`): a teammate's rows under the same
    session id neither count nor lend it their project."""
    owned = "(t.owner_id IS NULL OR t.owner_id = o.owner_id)"
    async with conn.cursor(row_factory=class_row(JournalCounts)) as cur:
        await cur.execute(
            journal_owners("SELECT DISTINCT session_id FROM journal_prompts")
            + ", p AS (SELECT t.session_id, max(t.project) AS project, count(*)::int AS prompts"
            f" FROM journal_prompts AS t JOIN o USING (session_id) WHERE {owned}"
            " GROUP BY t.session_id),"
            " c AS (SELECT t.session_id, count(*)::int AS calls FROM session_events AS t"
            f" JOIN o USING (session_id) WHERE {owned} GROUP BY t.session_id)"
            " SELECT p.session_id, p.prompts, coalesce(c.calls, 0) AS calls"
            " FROM p LEFT JOIN c USING (session_id)"
            " LEFT JOIN lesson_proposal_sessions r USING (session_id)"
            " WHERE p.prompts >= 2"
            " AND (%(project)s::text IS NULL OR p.project = %(project)s)"
            " AND (%(rescan)s OR r.session_id IS NULL OR r.prompts <> p.prompts"
            " OR r.calls <> coalesce(c.calls, 0))"
            " ORDER BY p.session_id",
            {"project": project, "rescan": rescan},
        )
        return await cur.fetchall()


async def record_sessions_read(conn: Conn, counts: Sequence[JournalCounts]) -> None:
    if not counts:
        return
    await conn.execute(
        "INSERT INTO lesson_proposal_sessions (session_id, prompts, calls)"
        " SELECT * FROM unnest(%(ids)s::text[], %(prompts)s::int[], %(calls)s::int[])"
        " ON CONFLICT (session_id) DO UPDATE SET prompts = EXCLUDED.prompts,"
        " calls = EXCLUDED.calls, read_at = now()",
        {
            "ids": [c.session_id for c in counts],
            "prompts": [c.prompts for c in counts],
            "calls": [c.calls for c in counts],
        },
    )
