"""SQL for the timeline view: the newest memories as points, and per-day counts."""

from __future__ import annotations

from server.core.models.memories import MemoryFilter
from server.core.models.views import DayCount, TimelinePoint
from server.store.memories import FILTER_SQL, filter_params
from server.store.tx import Conn

# A memory's label: its metadata title when an importer gave it one, else its first line.
_TITLE_SQL = (
    "coalesce(nullif(metadata->>'title', ''), left(split_part(btrim(content), E'\\n', 1), 200))"
)


async def points(conn: Conn, where: MemoryFilter, limit: int) -> list[TimelinePoint]:
    """The newest `limit` matching memories, newest first."""
    cur = await conn.execute(
        f"SELECT id, project, created_at, kind, char_length(content), {_TITLE_SQL}"
        f" FROM memories WHERE {FILTER_SQL}"
        " ORDER BY created_at DESC, id DESC LIMIT %(limit)s",
        {**filter_params(where), "limit": limit},
    )
    return [
        TimelinePoint(
            id=int(row[0]),
            project=row[1],
            created_at=row[2],
            kind=row[3],
            length=int(row[4]),
            title=row[5],
        )
        for row in await cur.fetchall()
    ]


async def day_counts(conn: Conn, where: MemoryFilter, limit: int) -> list[DayCount]:
    """Matching memories per UTC day and project, oldest day first, at most `limit` rows."""
    cur = await conn.execute(
        "SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, project, count(*)"
        f" FROM memories WHERE {FILTER_SQL}"
        " GROUP BY day, project ORDER BY day DESC, project LIMIT %(limit)s",
        {**filter_params(where), "limit": limit},
    )
    rows = [DayCount(day=row[0], project=row[1], count=int(row[2])) for row in await cur.fetchall()]
    rows.reverse()
    return rows
