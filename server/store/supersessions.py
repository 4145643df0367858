"""SQL for supersession links: the earlier neighbours of new memories, links set and cleared,
the pairs put to the model for review and its verdicts applied.

A link lives on the newer memory (`supersedes`, `supersede_reason`); the older one is superseded
while a live memory links to it. The caller owns the transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from psycopg.rows import class_row

from server.core.models.learning import LinkPair
from server.store.tx import Conn
from server.store.visibility import VISIBLE_SQL, visible


@dataclass(frozen=True, slots=True)
class Candidate:
    """An earlier live memory of the same project near a new one, by stored vectors."""

    newer_id: int
    older_id: int
    similarity: float


# For each new memory, the closest earlier live memories of its project (by created_at, then
# id), leaving out the ones a user or the model unlinked from it. Stored vectors only. A
# trajectory (how a task got done) replaces only a trajectory, and a fact only a fact.
_EARLIER_NEIGHBOURS_SQL = (
    "SELECT n.id, o.id, 1 - (o.embedding <=> n.embedding)"
    " FROM memories AS n CROSS JOIN LATERAL ("
    "   SELECT c.id, c.embedding FROM memories AS c"
    "   WHERE c.project = n.project AND c.deleted_at IS NULL AND c.archived_at IS NULL"
    "   AND c.embedding IS NOT NULL AND (c.created_at, c.id) < (n.created_at, n.id)"
    "   AND (c.kind = 'trajectory') = (n.kind = 'trajectory')"
    "   AND NOT c.id = ANY(n.supersede_rejected)"
    f"   AND {visible('c')}"
    "   ORDER BY c.embedding <=> n.embedding LIMIT %(k)s"
    " ) AS o"
    " WHERE n.id = ANY(%(ids)s) AND n.embedding IS NOT NULL AND n.deleted_at IS NULL"
    " AND n.supersedes IS NULL"
    " ORDER BY n.created_at, n.id, 3 DESC"
)


# A link the rules made (not one set by hand or by the model, nor one it confirmed): such a link
# may be made again from scratch.
_RULE_LINK = (
    "(c.supersedes IS NULL OR (c.supersede_reason <> %(by_hand)s"
    " AND c.supersede_reason NOT LIKE %(by_model)s AND c.supersede_reason NOT LIKE %(confirmed)s))"
)

# Relinking rewrites a later memory's link, so it is the asking user's own memory (anyone's when
# nobody is asking, as for every link the rules set), and its present link points at a memory
# they can see: a teammate's link to a memory of theirs one cannot see is not taken back.
_RELINK_SCOPE = (
    "(current_viewer() IS NULL OR c.owner_id = current_viewer())"
    " AND (c.supersedes IS NULL OR EXISTS (SELECT 1 FROM memories AS t"
    f" WHERE t.id = c.supersedes AND {visible('t')}))"
)

# For each new memory, the closest later live memories of its project whose link (or lack of
# one) the rules made: a memory imported after its successors (an older file read last) may be
# the one they replace.
_LATER_RELINKABLE_SQL = (
    "SELECT DISTINCT l.id"
    " FROM memories AS o CROSS JOIN LATERAL ("
    "   SELECT c.id FROM memories AS c"
    "   WHERE c.project = o.project AND c.deleted_at IS NULL AND c.archived_at IS NULL"
    "   AND c.embedding IS NOT NULL AND (c.created_at, c.id) > (o.created_at, o.id)"
    f"   AND (c.kind = 'trajectory') = (o.kind = 'trajectory') AND {_RULE_LINK}"
    f"   AND {visible('c')} AND {_RELINK_SCOPE}"
    "   ORDER BY c.embedding <=> o.embedding LIMIT %(k)s"
    " ) AS l"
    " WHERE o.id = ANY(%(ids)s) AND o.embedding IS NOT NULL AND o.deleted_at IS NULL"
)


def _rule_link_params(by_hand: str, by_model: str, confirmed: str) -> dict[str, str]:
    return {"by_hand": by_hand, "by_model": by_model + "%", "confirmed": "%" + confirmed}


async def later_relinkable(
    conn: Conn,
    memory_ids: Sequence[int],
    per_memory: int,
    *,
    by_hand: str,
    by_model: str,
    confirmed: str,
) -> list[int]:
    """The closest later memories of each given one whose link the rules made or that have
    none (ascending ids). `by_hand`: the reason of a link a user set; `by_model`: how the
    reason of a link the model proposed starts; `confirmed`: how a confirmed one ends."""
    if not memory_ids:
        return []
    cur = await conn.execute(
        _LATER_RELINKABLE_SQL,
        {
            "ids": list(memory_ids),
            "k": per_memory,
            **_rule_link_params(by_hand, by_model, confirmed),
        },
    )
    return sorted(int(row[0]) for row in await cur.fetchall())


async def clear_rule_links(
    conn: Conn, memory_ids: Sequence[int], *, by_hand: str, by_model: str, confirmed: str
) -> dict[int, int]:
    """Take back the links the rules made from these memories, to be found again; returns
    the links taken back (newer id -> older id)."""
    if not memory_ids:
        return {}
    cur = await conn.execute(
        "UPDATE memories AS c SET supersedes = NULL, supersede_reason = ''"
        " FROM memories AS before"
        f" WHERE before.id = c.id AND c.id = ANY(%(ids)s) AND c.supersedes IS NOT NULL"
        f" AND {_RULE_LINK} AND {_RELINK_SCOPE} RETURNING c.id, before.supersedes",
        {"ids": list(memory_ids), **_rule_link_params(by_hand, by_model, confirmed)},
    )
    return {int(row[0]): int(row[1]) for row in await cur.fetchall()}


async def earlier_neighbours(
    conn: Conn, memory_ids: Sequence[int], per_memory: int
) -> list[Candidate]:
    """Candidates for the memories that do not supersede anything yet, oldest memory first."""
    if not memory_ids:
        return []
    cur = await conn.execute(_EARLIER_NEIGHBOURS_SQL, {"ids": list(memory_ids), "k": per_memory})
    return [Candidate(int(n), int(o), float(s)) for n, o, s in await cur.fetchall()]


# The links the rules made, as pairs for the model to judge; a link changed since is left out.
# The agent whose session the older memory `o` came from: its owner's imported session's
# source, else the agent a distilled memory names; NULL for one no agent's session wrote, and
# NULL for one whose owner is not the newer memory's `n` (a teammate's shared memory, or an
# ownerless one on a team's server): an agent's model is shown a pair only when its older
# agent is that model's, so another user's text never goes to the provider the writer chose.
# Without users every owner is NULL and only the agent counts.
_OLDER_AGENT_SQL = (
    "CASE WHEN o.owner_id IS DISTINCT FROM n.owner_id THEN NULL ELSE coalesce("
    "(SELECT s.source FROM imported_sessions AS s"
    " WHERE s.session_id = o.session_id AND s.owner_id IS NOT DISTINCT FROM o.owner_id),"
    " o.metadata->>'agent') END AS older_agent"
)
_RULE_PAIRS_SQL = (
    "SELECT n.id AS newer_id, n.content AS newer_text, n.created_at AS newer_at,"
    " o.id AS older_id, o.content AS older_text, o.created_at AS older_at,"
    " coalesce(1 - (o.embedding <=> n.embedding), 0) AS similarity,"
    " n.supersede_reason AS rule_reason,"
    f" {_OLDER_AGENT_SQL}"
    " FROM unnest(%(newer)s::bigint[], %(older)s::bigint[], %(reason)s::text[])"
    "   AS l(newer_id, older_id, reason)"
    " JOIN memories AS n ON n.id = l.newer_id AND n.supersedes = l.older_id"
    "   AND n.supersede_reason = l.reason"
    " JOIN memories AS o ON o.id = l.older_id"
    " WHERE n.deleted_at IS NULL"
    " ORDER BY n.created_at, n.id"
)

# For each new memory, its closest earlier live memories of the project that could still be
# linked to it: not raw turns, not the one it supersedes, not one a user or the model unlinked
# from it, not one something live already supersedes. Closest pairs first.
_REVIEW_NEIGHBOURS_SQL = (
    "SELECT n.id AS newer_id, n.content AS newer_text, n.created_at AS newer_at,"
    " o.id AS older_id, o.content AS older_text, o.created_at AS older_at, o.similarity,"
    f" NULL::text AS rule_reason, {_OLDER_AGENT_SQL}"
    " FROM memories AS n CROSS JOIN LATERAL ("
    "   SELECT c.id, c.content, c.created_at, c.session_id, c.metadata, c.owner_id,"
    "   1 - (c.embedding <=> n.embedding) AS similarity"
    "   FROM memories AS c"
    "   WHERE c.project = n.project AND c.deleted_at IS NULL AND c.archived_at IS NULL"
    "   AND c.kind <> 'raw' AND c.embedding IS NOT NULL"
    "   AND (c.kind = 'trajectory') = (n.kind = 'trajectory')"
    "   AND (c.created_at, c.id) < (n.created_at, n.id)"
    "   AND c.id IS DISTINCT FROM n.supersedes AND NOT c.id = ANY(n.supersede_rejected)"
    "   AND NOT EXISTS (SELECT 1 FROM memories AS s"
    f"     WHERE s.supersedes = c.id AND s.deleted_at IS NULL AND {visible('s')})"
    f"   AND {visible('c')}"
    "   ORDER BY c.embedding <=> n.embedding LIMIT %(k)s"
    " ) AS o"
    " WHERE n.id = ANY(%(ids)s) AND n.embedding IS NOT NULL AND n.deleted_at IS NULL"
    " AND o.similarity >= %(floor)s"
    " ORDER BY o.similarity DESC, n.id, o.id"
)


async def rule_pairs(conn: Conn, links: Sequence[tuple[int, int, str]]) -> list[LinkPair]:
    """The (newer, older, reason) links, with texts and dates, that are still set as they were."""
    if not links:
        return []
    params = {
        "newer": [n for n, _, _ in links],
        "older": [o for _, o, _ in links],
        "reason": [r for _, _, r in links],
    }
    async with conn.cursor(row_factory=class_row(LinkPair)) as cur:
        await cur.execute(_RULE_PAIRS_SQL, params)
        return await cur.fetchall()


async def review_neighbours(
    conn: Conn, memory_ids: Sequence[int], *, min_similarity: float, per_memory: int
) -> list[LinkPair]:
    """Earlier memories the new ones could still supersede, at `min_similarity` or closer."""
    if not memory_ids:
        return []
    async with conn.cursor(row_factory=class_row(LinkPair)) as cur:
        await cur.execute(
            _REVIEW_NEIGHBOURS_SQL,
            {"ids": list(memory_ids), "k": per_memory, "floor": min_similarity},
        )
        return await cur.fetchall()


async def contents(conn: Conn, memory_ids: Sequence[int]) -> dict[int, str]:
    cur = await conn.execute(
        f"SELECT id, content FROM memories WHERE id = ANY(%(ids)s) AND {VISIBLE_SQL}",
        {"ids": list(memory_ids)},
    )
    return {int(row[0]): str(row[1]) for row in await cur.fetchall()}


async def superseded_among(conn: Conn, memory_ids: Sequence[int]) -> set[int]:
    """Which of these memories a live memory the writer can see already supersedes: a
    teammate's private link neither blocks nor steers the writer's own."""
    cur = await conn.execute(
        "SELECT DISTINCT supersedes FROM memories"
        f" WHERE supersedes = ANY(%(ids)s) AND deleted_at IS NULL AND {VISIBLE_SQL}",
        {"ids": list(memory_ids)},
    )
    return {int(row[0]) for row in await cur.fetchall()}


async def set_links(conn: Conn, links: Sequence[tuple[int, int, str]]) -> None:
    """Record (newer, older, reason) links found by the rules, where none is set yet."""
    if not links:
        return
    async with conn.cursor() as cur:
        await cur.executemany(
            "UPDATE memories SET supersedes = %(older)s, supersede_reason = %(reason)s"
            " WHERE id = %(newer)s AND supersedes IS NULL",
            [{"newer": n, "older": o, "reason": r} for n, o, r in links],
        )


async def set_link(conn: Conn, newer_id: int, older_id: int | None, reason: str) -> None:
    """Set (or with None clear) the memory a memory supersedes; a cleared link is remembered."""
    await conn.execute(
        "UPDATE memories SET"
        " supersede_rejected = CASE WHEN %(older)s::bigint IS NULL AND supersedes IS NOT NULL"
        "   AND NOT supersedes = ANY(supersede_rejected)"
        "   THEN supersede_rejected || supersedes ELSE supersede_rejected END,"
        " supersedes = %(older)s, supersede_reason = %(reason)s, updated_at = now()"
        " WHERE id = %(newer)s",
        {"newer": newer_id, "older": older_id, "reason": reason if older_id else ""},
    )


async def cut_links_across_projects(conn: Conn, memory_id: int) -> int:
    """Clear every link between `memory_id` and a memory of another project (after it moved
    project: a version of a fact stays with its fact's project, #65 H1); how many."""
    cur = await conn.execute(
        "UPDATE memories AS m SET supersedes = NULL, supersede_reason = '', updated_at = now()"
        " FROM memories AS older"
        " WHERE older.id = m.supersedes AND (m.id = %(id)s OR m.supersedes = %(id)s)"
        " AND m.project IS DISTINCT FROM older.project",
        {"id": memory_id},
    )
    return cur.rowcount


async def confirm_link(conn: Conn, newer_id: int, older_id: int, reason: str, note: str) -> bool:
    """Append `note` to a link's reason; False if the link is no longer the one with `reason`."""
    cur = await conn.execute(
        "UPDATE memories SET supersede_reason = supersede_reason || %(note)s, updated_at = now()"
        " WHERE id = %(newer)s AND supersedes = %(older)s AND supersede_reason = %(reason)s",
        {"newer": newer_id, "older": older_id, "reason": reason, "note": note},
    )
    return cur.rowcount == 1


async def reject_link(conn: Conn, newer_id: int, older_id: int, reason: str) -> bool:
    """Clear a link and remember the older id so it is never made again; False if the link is
    no longer the one with `reason` (changed meanwhile, perhaps by hand)."""
    cur = await conn.execute(
        "UPDATE memories SET supersedes = NULL, supersede_reason = '',"
        " supersede_rejected = CASE WHEN %(older)s::bigint = ANY(supersede_rejected)"
        "   THEN supersede_rejected ELSE supersede_rejected || %(older)s::bigint END,"
        " updated_at = now()"
        " WHERE id = %(newer)s AND supersedes = %(older)s AND supersede_reason = %(reason)s",
        {"newer": newer_id, "older": older_id, "reason": reason},
    )
    return cur.rowcount == 1


async def link_if_free(conn: Conn, newer_id: int, older_id: int, reason: str) -> bool:
    """Link newer to older only if newer supersedes nothing, was never unlinked from older, and
    older is live and superseded by nothing live; False otherwise. The caller checks cycles."""
    cur = await conn.execute(
        "UPDATE memories AS n SET supersedes = %(older)s, supersede_reason = %(reason)s,"
        " updated_at = now()"
        " WHERE n.id = %(newer)s AND n.supersedes IS NULL AND n.deleted_at IS NULL"
        " AND NOT %(older)s::bigint = ANY(n.supersede_rejected)"
        " AND EXISTS (SELECT 1 FROM memories AS o"
        f"   WHERE o.id = %(older)s AND o.deleted_at IS NULL AND {visible('o')})"
        " AND NOT EXISTS (SELECT 1 FROM memories AS s"
        f"   WHERE s.supersedes = %(older)s AND s.deleted_at IS NULL AND {visible('s')})",
        {"newer": newer_id, "older": older_id, "reason": reason},
    )
    return cur.rowcount == 1


async def chain_reaches(conn: Conn, start_id: int, target_id: int) -> bool:
    """Whether following `supersedes` from `start_id` back in time comes to `target_id`."""
    cur = await conn.execute(
        "WITH RECURSIVE chain(id) AS ("
        "  SELECT supersedes FROM memories WHERE id = %(start)s AND supersedes IS NOT NULL"
        "  UNION"
        "  SELECT m.supersedes FROM memories AS m JOIN chain ON m.id = chain.id"
        "  WHERE m.supersedes IS NOT NULL"
        ") SELECT EXISTS (SELECT 1 FROM chain WHERE id = %(target)s)",
        {"start": start_id, "target": target_id},
    )
    row = await cur.fetchone()
    return bool(row and row[0])


async def history(conn: Conn, memory_id: int, limit: int = 50) -> list[int]:
    """Ids of the versions of a memory's fact, oldest first: its predecessors, it, successors."""
    cur = await conn.execute(
        "WITH RECURSIVE back(id, depth) AS ("
        "  SELECT %(id)s::bigint, 0"
        "  UNION"
        "  SELECT m.supersedes, back.depth - 1 FROM memories AS m JOIN back ON m.id = back.id"
        "  WHERE m.supersedes IS NOT NULL AND back.depth > -%(limit)s"
        "), forth(id, depth) AS ("
        "  SELECT %(id)s::bigint, 0"
        "  UNION"
        "  SELECT m.id, forth.depth + 1 FROM memories AS m JOIN forth ON m.supersedes = forth.id"
        "  WHERE m.deleted_at IS NULL AND forth.depth < %(limit)s"
        ") SELECT id FROM (SELECT id, depth FROM back UNION SELECT id, depth FROM forth) AS v"
        " ORDER BY depth",
        {"id": memory_id, "limit": limit},
    )
    return [int(row[0]) for row in await cur.fetchall()]


async def backfill_progress(conn: Conn) -> tuple[int, int] | None:
    """(done up to id, last id to do) of the backfill, locked until the transaction ends."""
    cur = await conn.execute("SELECT done_id, up_to_id FROM supersession_backfill FOR UPDATE")
    row = await cur.fetchone()
    return (int(row[0]), int(row[1])) if row else None


async def backfill_batch(conn: Conn, after_id: int, up_to_id: int, limit: int) -> list[int]:
    cur = await conn.execute(
        "SELECT id FROM memories WHERE id > %(after)s AND id <= %(up_to)s"
        " ORDER BY id LIMIT %(limit)s",
        {"after": after_id, "up_to": up_to_id, "limit": limit},
    )
    return [int(row[0]) for row in await cur.fetchall()]


async def record_backfill(conn: Conn, done_id: int) -> None:
    await conn.execute("UPDATE supersession_backfill SET done_id = %(done)s", {"done": done_id})
