"""What memories say about the code, stored with them (migration 021, issue #37).

Each memory's anchors (server/domain/anchors.py) are found when it is written and kept in
`memory_anchors`, one row per anchor in the order of its text; `memories.anchors_indexed`
says a memory's rows are there (memories written before the table get theirs from
`index_waiting`, run by the server's background task). The write paths in store/memories.py
call `replace_anchors` in their own transaction, so a memory and its anchors never disagree.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from server.domain.anchors import Anchor, anchors_of
from server.store.tx import Conn
from server.store.visibility import visible

# An anchor longer than this is not one a check can use (and a b-tree entry has a size limit):
# such a name or value is not stored, nor is the anchor.
MAX_ANCHOR_CHARS = 300


async def replace_anchors(conn: Conn, memories: Sequence[tuple[int, str]]) -> None:
    """Store the anchors of each (id, content) in place of any it had, and mark it indexed."""
    if not memories:
        return
    ids = [memory_id for memory_id, _ in memories]
    # Off the event loop: a batch of long texts takes the rules tens of milliseconds.
    found = await asyncio.to_thread(lambda: [storable(anchors_of(text)) for _, text in memories])
    await conn.execute("DELETE FROM memory_anchors WHERE memory_id = ANY(%(ids)s)", {"ids": ids})
    rows = [
        {"id": memory_id, "position": position, "kind": a.kind, "name": a.name, "value": a.value}
        for memory_id, anchors in zip(ids, found, strict=True)
        for position, a in enumerate(anchors)
    ]
    async with conn.cursor() as cur:
        if rows:
            await cur.executemany(
                "INSERT INTO memory_anchors (memory_id, position, kind, name, value)"
                " VALUES (%(id)s, %(position)s, %(kind)s, %(name)s, %(value)s)",
                rows,
            )
        await cur.execute(
            "UPDATE memories SET anchors_indexed = true WHERE id = ANY(%(ids)s)"
            " AND NOT anchors_indexed",
            {"ids": ids},
        )


def storable(anchors: Sequence[Anchor]) -> list[Anchor]:
    """The anchors short enough to store (and so to check)."""
    return [
        a
        for a in anchors
        if len(a.name) <= MAX_ANCHOR_CHARS and len(a.value or "") <= MAX_ANCHOR_CHARS
    ]


async def stored_anchors(conn: Conn, memory_ids: Sequence[int]) -> dict[int, list[Anchor] | None]:
    """The stored anchors of each memory the reader may see, in text order; None for a memory
    whose anchors are not stored yet (written before migration 021 and not indexed since)."""
    if not memory_ids:
        return {}
    cur = await conn.execute(
        "SELECT m.id, m.anchors_indexed, a.kind, a.name, a.value FROM memories AS m"
        " LEFT JOIN memory_anchors AS a ON a.memory_id = m.id"
        f" WHERE m.id = ANY(%(ids)s) AND {visible('m')} ORDER BY m.id, a.position",
        {"ids": list(memory_ids)},
    )
    found: dict[int, list[Anchor] | None] = {}
    for memory_id, indexed, kind, name, value in await cur.fetchall():
        if not indexed:
            found[int(memory_id)] = None
            continue
        anchors = found.setdefault(int(memory_id), [])
        if kind is not None and anchors is not None:
            anchors.append(Anchor(kind, name, value))
    return found


async def index_waiting(conn: Conn, limit: int) -> int:
    """Find and store the anchors of up to `limit` memories written before they were stored
    (lowest ids first); how many were indexed. Rows another transaction holds are skipped."""
    cur = await conn.execute(
        "SELECT id, content FROM memories WHERE NOT anchors_indexed"
        " ORDER BY id LIMIT %(limit)s FOR UPDATE SKIP LOCKED",
        {"limit": limit},
    )
    batch = [(int(memory_id), str(content)) for memory_id, content in await cur.fetchall()]
    await replace_anchors(conn, batch)
    return len(batch)
