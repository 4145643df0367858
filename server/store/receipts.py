"""SQL for receipts of what memory injected (`injections`, migration 022, issue #38).

A receipt is its writer's (`owner_id` defaults to the transaction's user) and read only by
them; acting for nobody (single-user mode) reads every receipt.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from psycopg.rows import class_row

from server.core.models.receipts import (
    ContextDay,
    Injection,
    Receipt,
    ReceiptFilter,
    ReceiptTotals,
    UseCounts,
    UseJudgement,
)
from server.store.tx import Conn

_MINE = "(current_viewer() IS NULL OR owner_id = current_viewer())"
_FILTER = (
    f"{_MINE}"
    " AND (%(session_id)s::text IS NULL OR session_id = %(session_id)s)"
    " AND (%(project)s::text IS NULL OR project = %(project)s)"
    " AND (%(hook)s::text IS NULL OR hook = %(hook)s)"
    " AND (%(since)s::timestamptz IS NULL OR at >= %(since)s)"
    " AND (%(before)s::timestamptz IS NULL OR at < %(before)s)"
)
_COLUMNS = (
    "id, at, hook, session_id, prompt_id, project, memory_ids, lesson_ids, scores, cutoff,"
    " chars, tokens, listed_ids"
)


# Joined to `injections`: each receipt's verdicts counted (columns not named like its own).
_VERDICTS_PER_RECEIPT = (
    "LEFT JOIN (SELECT receipt_id, count(*) AS judged,"
    " count(*) FILTER (WHERE verdict = 'used') AS used,"
    " count(*) FILTER (WHERE verdict = 'contradicted') AS contradicted"
    " FROM injection_uses GROUP BY receipt_id) AS u ON u.receipt_id = injections.id"
)


def _params(where: ReceiptFilter) -> dict[str, Any]:
    return {
        "session_id": where.session_id,
        "project": where.project,
        "hook": where.hook,
        "since": where.since,
        "before": where.before,
    }


async def insert(conn: Conn, injection: Injection, at: datetime) -> None:
    await conn.execute(
        "INSERT INTO injections (at, hook, session_id, prompt_id, project, memory_ids,"
        " lesson_ids, scores, cutoff, chars, tokens, listed_ids)"
        " VALUES (%(at)s, %(hook)s, %(session_id)s, %(prompt_id)s, %(project)s, %(memory_ids)s,"
        " %(lesson_ids)s, %(scores)s, %(cutoff)s, %(chars)s, %(tokens)s, %(listed_ids)s)",
        {
            "at": at,
            "hook": injection.hook,
            "session_id": injection.session_id,
            "prompt_id": injection.prompt_id,
            "project": injection.project,
            "memory_ids": injection.memory_ids,
            "lesson_ids": injection.lesson_ids,
            "scores": injection.scores,
            "cutoff": injection.cutoff,
            "chars": injection.chars,
            "tokens": injection.tokens,
            "listed_ids": injection.listed_ids,
        },
    )


async def page(conn: Conn, where: ReceiptFilter, limit: int) -> list[Receipt]:
    """The newest `limit` receipts that match."""
    async with conn.cursor(row_factory=class_row(Receipt)) as cur:
        await cur.execute(
            f"SELECT {_COLUMNS} FROM injections WHERE {_FILTER}"
            " ORDER BY at DESC, id DESC LIMIT %(limit)s",
            {**_params(where), "limit": limit},
        )
        return await cur.fetchall()


async def totals(conn: Conn, where: ReceiptFilter) -> ReceiptTotals:
    """Counts and sums over every receipt that matches, and over their verdicts."""
    cur = await conn.execute(
        "SELECT count(*), coalesce(sum(cardinality(memory_ids)), 0), coalesce(sum(chars), 0),"
        " coalesce(sum(tokens), 0), coalesce(sum(u.judged), 0), coalesce(sum(u.used), 0),"
        f" coalesce(sum(u.contradicted), 0) FROM injections {_VERDICTS_PER_RECEIPT}"
        f" WHERE {_FILTER}",
        _params(where),
    )
    row = await cur.fetchone()
    return ReceiptTotals(*(int(v) for v in row)) if row else ReceiptTotals(0, 0, 0, 0)


async def by_day(conn: Conn, where: ReceiptFilter) -> list[ContextDay]:
    """Per UTC day and project: injections, memory ids injected and tokens, newest day first."""
    async with conn.cursor(row_factory=class_row(ContextDay)) as cur:
        await cur.execute(
            "SELECT (at AT TIME ZONE 'UTC')::date AS day, project, count(*)::int AS injections,"
            " coalesce(sum(cardinality(memory_ids)), 0)::int AS memories,"
            " coalesce(sum(tokens), 0)::int AS tokens, coalesce(sum(u.judged), 0)::int AS judged,"
            f" coalesce(sum(u.used), 0)::int AS used FROM injections {_VERDICTS_PER_RECEIPT}"
            f" WHERE {_FILTER} GROUP BY 1, 2 ORDER BY 1 DESC, 2",
            _params(where),
        )
        return await cur.fetchall()


async def most_injected(conn: Conn, where: ReceiptFilter, limit: int) -> list[tuple[int, int]]:
    """(memory id, injections) of the memories injected most often, most first."""
    cur = await conn.execute(
        "SELECT memory_id, count(*) FROM injections, unnest(memory_ids) AS memory_id"
        f" WHERE {_FILTER} GROUP BY memory_id ORDER BY count(*) DESC, memory_id"
        " LIMIT %(limit)s",
        {**_params(where), "limit": limit},
    )
    return [(int(memory_id), int(count)) for memory_id, count in await cur.fetchall()]


async def session_tokens(conn: Conn, session_id: str) -> int:
    """The estimated tokens of every receipt of the caller's session `session_id`."""
    cur = await conn.execute(
        f"SELECT coalesce(sum(tokens), 0) FROM injections WHERE {_MINE}"
        " AND session_id = %(session_id)s",
        {"session_id": session_id},
    )
    row = await cur.fetchone()
    return int(row[0]) if row else 0


async def prune(conn: Conn, before: datetime) -> int:
    """Delete every receipt older than `before` (any owner's: retention is the server's)."""
    cur = await conn.execute("DELETE FROM injections WHERE at < %(before)s", {"before": before})
    return cur.rowcount


# --- whether the agent used what was injected (`injection_uses`, migration 023) -------------

# The verdicts on the receipts a filter matches (the receipts' owner is the verdicts' owner).
_JUDGED_IN = f"receipt_id IN (SELECT id FROM injections WHERE {_FILTER})"
_RANK = "array_position(ARRAY['unused', 'used', 'contradicted'], {})"


async def judgeable(conn: Conn, session_ids: list[str]) -> list[Receipt]:
    """The caller's receipts of memories injected into these sessions, oldest first."""
    async with conn.cursor(row_factory=class_row(Receipt)) as cur:
        await cur.execute(
            f"SELECT {_COLUMNS} FROM injections WHERE {_MINE}"
            " AND session_id = ANY(%(sessions)s)"
            " AND (cardinality(memory_ids) > 0 OR cardinality(listed_ids) > 0)"
            " AND hook IN ('session_start', 'prompt') ORDER BY at, id",
            {"sessions": session_ids},
        )
        return await cur.fetchall()


async def save_uses(conn: Conn, judgements: list[UseJudgement]) -> None:
    """Store verdicts, each its receipt's owner's (the import that judges may act for nobody:
    the hourly job); one already stored is replaced only by a stronger one."""
    if not judgements:
        return
    async with conn.cursor() as cur:
        await cur.executemany(
            "INSERT INTO injection_uses (receipt_id, memory_id, owner_id, at, verdict, evidence)"
            " SELECT %(receipt_id)s, %(memory_id)s, owner_id, %(at)s, %(verdict)s, %(evidence)s"
            " FROM injections WHERE id = %(receipt_id)s"
            " ON CONFLICT (receipt_id, memory_id) DO UPDATE SET verdict = excluded.verdict,"
            " evidence = excluded.evidence, judged_at = now()"
            f" WHERE {_RANK.format('excluded.verdict')}"
            f" > {_RANK.format('injection_uses.verdict')}",
            [
                {
                    "receipt_id": j.receipt_id,
                    "memory_id": j.memory_id,
                    "at": j.at,
                    "verdict": j.verdict,
                    "evidence": j.evidence,
                }
                for j in judgements
            ],
        )


async def open_listed(conn: Conn, session_id: str, memory_id: int, evidence: str) -> int:
    """Mark `memory_id` used on the caller's latest prompt receipt of `session_id` whose index
    listed it (the agent opened that line); how many receipts that was (0 or 1)."""
    cur = await conn.execute(
        "INSERT INTO injection_uses (receipt_id, memory_id, owner_id, at, verdict, evidence)"
        " SELECT id, %(memory_id)s, owner_id, at, 'used', %(evidence)s FROM injections"
        f" WHERE {_MINE} AND hook = 'prompt' AND session_id = %(session_id)s"
        " AND %(memory_id)s = ANY(listed_ids) ORDER BY at DESC, id DESC LIMIT 1"
        " ON CONFLICT (receipt_id, memory_id) DO UPDATE SET verdict = excluded.verdict,"
        " evidence = excluded.evidence, judged_at = now()"
        f" WHERE {_RANK.format('excluded.verdict')}"
        f" > {_RANK.format('injection_uses.verdict')}",
        {"session_id": session_id, "memory_id": memory_id, "evidence": evidence},
    )
    return cur.rowcount


async def uses_of(conn: Conn, receipt_ids: list[int]) -> list[UseJudgement]:
    """The verdicts on these receipts (the caller's), by receipt and memory."""
    async with conn.cursor(row_factory=class_row(UseJudgement)) as cur:
        await cur.execute(
            "SELECT receipt_id, memory_id, at, verdict, evidence FROM injection_uses"
            f" WHERE {_MINE} AND receipt_id = ANY(%(ids)s) ORDER BY receipt_id, memory_id",
            {"ids": receipt_ids},
        )
        return await cur.fetchall()


async def use_counts(
    conn: Conn, memory_ids: list[int], half_life_days: float
) -> dict[int, UseCounts]:
    """Per memory, the caller's verdicts on prompt recall's injections, counted with weights
    that halve every `half_life_days` days of age: what prompt recall learns from. Verdicts
    on the session-start context are left out: it is judged against the whole session, so
    "unused" there says little about a prompt it would answer."""
    cur = await conn.execute(
        "SELECT memory_id,"
        " coalesce(sum(w) FILTER (WHERE verdict = 'used'), 0),"
        " coalesce(sum(w) FILTER (WHERE verdict = 'unused'), 0),"
        " coalesce(sum(w) FILTER (WHERE verdict = 'contradicted'), 0)"
        " FROM (SELECT memory_id, verdict,"
        "  power(0.5, greatest(extract(epoch FROM now() - at), 0) / 86400.0 / %(half)s) AS w"
        f"  FROM injection_uses WHERE {_MINE} AND memory_id = ANY(%(ids)s)"
        "   AND receipt_id IN (SELECT id FROM injections WHERE hook = 'prompt')) AS judged"
        " GROUP BY memory_id",
        {"ids": memory_ids, "half": half_life_days},
    )
    return {
        int(memory_id): UseCounts(float(used), float(unused), float(contradicted))
        for memory_id, used, unused, contradicted in await cur.fetchall()
    }


async def memories_by_use(
    conn: Conn, where: ReceiptFilter, verdict: str, limit: int
) -> list[tuple[int, int, int]]:
    """(memory id, injections judged, judged `verdict`) of the memories judged `verdict` most
    often ('unused': never judged otherwise), most first."""
    if verdict == "unused":
        having = "count(*) FILTER (WHERE verdict <> 'unused') = 0"
    else:
        having = "count(*) FILTER (WHERE verdict = %(verdict)s) > 0"
    cur = await conn.execute(
        "SELECT memory_id, count(*), count(*) FILTER (WHERE verdict = %(verdict)s)"
        f" FROM injection_uses WHERE {_JUDGED_IN} GROUP BY memory_id HAVING {having}"
        " ORDER BY 3 DESC, 2 DESC, memory_id LIMIT %(limit)s",
        {**_params(where), "verdict": verdict, "limit": limit},
    )
    return [(int(m), int(judged), int(count)) for m, judged, count in await cur.fetchall()]
