"""SQL for `lessons`."""

from __future__ import annotations

from psycopg.rows import class_row

from server.core.models import Lesson, LessonChange, LessonDraft
from server.store.tx import Conn

COLUMNS = "id, tool, pattern, project, message, strictness, origin, active, created_at, updated_at"


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
            " active = coalesce(%(active)s, active), updated_at = now()"
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
    """Lessons newest first; with a project, its own and those for every project."""
    async with conn.cursor(row_factory=class_row(Lesson)) as cur:
        await cur.execute(
            f"SELECT {COLUMNS} FROM lessons"
            " WHERE (%(project)s::text IS NULL OR project = '' OR project = %(project)s)"
            " AND (%(all)s OR active) ORDER BY id DESC",
            {"project": project, "all": include_inactive},
        )
        return await cur.fetchall()
