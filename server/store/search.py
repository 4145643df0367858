"""Search SQL: vector look-ups over the HNSW indexes and weighted full-text matching.

Semantic look-ups search memories' own vectors and their passage vectors (memory_chunks) and
keep each memory's best distance. The pool sets `hnsw.iterative_scan`, so filtered look-ups
keep scanning the index until they have enough rows instead of returning a starved list.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from server.core.models.memories import MemoryFilter, Neighbour
from server.core.models.vectors import TURN_CONTEXT_WEIGHTS, Window
from server.store.memories import FILTER_SQL, filter_params
from server.store.tx import Conn
from server.store.visibility import VISIBLE_SQL, visible

# Best distance per memory over its own vector and its chunks' (passages and statements, see
# migrations/020_statement_units.sql) in one statement: for a look-up within a period, whose
# rows the planner reads by date. MATERIALIZED keeps the planner from merging the two parts.
_NEAREST_SQL = (
    "WITH own AS MATERIALIZED ("
    "  SELECT id, embedding <=> %(vec)s AS distance FROM memories"
    f"  WHERE embedding IS NOT NULL AND {FILTER_SQL}"
    "  ORDER BY embedding <=> %(vec)s LIMIT %(k)s"
    "), passages AS MATERIALIZED ("
    "  SELECT c.memory_id AS id, c.embedding <=> %(vec)s AS distance"
    "  FROM memory_chunks c JOIN memories ON memories.id = c.memory_id"
    f"  WHERE {FILTER_SQL}"
    "  ORDER BY c.embedding <=> %(vec)s LIMIT %(k)s * %(rows_per_memory)s"
    ")"
    " SELECT id, 1 - min(distance) AS similarity"
    " FROM (SELECT id, distance FROM own UNION ALL SELECT id, distance FROM passages) AS both_"
    " GROUP BY id HAVING 1 - min(distance) >= %(min_similarity)s"
    " ORDER BY min(distance), id LIMIT %(k)s"
)

# The same two parts as separate statements, each read from its table's HNSW index, so that
# the two look-ups can run at once on two connections (`nearest_rows`, `best_per_memory`).
_NEAREST_OWN_SQL = (
    "SELECT id, embedding <=> %(vec)s FROM memories"
    f" WHERE embedding IS NOT NULL AND {FILTER_SQL}"
    " ORDER BY embedding <=> %(vec)s LIMIT %(k)s"
)
_NEAREST_PASSAGES_SQL = (
    "SELECT c.memory_id, c.embedding <=> %(vec)s"
    " FROM memory_chunks c JOIN memories ON memories.id = c.memory_id"
    f" WHERE {FILTER_SQL}"
    " ORDER BY c.embedding <=> %(vec)s LIMIT %(k)s"
)

# A memory has several chunk rows (passages, statements), and the nearest rows of a look-up
# often belong to a few memories: read this many rows per memory wanted, so k rows still
# name about k memories.
CHUNK_ROWS_PER_MEMORY = 4


async def prefer_indexes(conn: Conn) -> None:
    """Keep the planner off whole-table scans for the rest of this transaction.

    The planner prices the HNSW look-up by `hnsw.ef_search`; at 200 it put it above an exact
    scan of a table of ~10,000 memories and scanned it all (14 ms p50 there against 3.4 ms
    through the index). Filters keep their own indexes (project, kind, tags), so a selective
    filter is still answered exactly.
    """
    await conn.execute("SET LOCAL enable_seqscan = off")


async def nearest_rows(
    conn: Conn, embedding: np.ndarray, where: MemoryFilter, limit: int, *, passages: bool
) -> list[tuple[int, float]]:
    """(memory id, cosine distance) of the memories' own vectors nearest the query, or with
    `passages` of their chunk rows (CHUNK_ROWS_PER_MEMORY rows read per memory wanted, since
    one memory may own several of the nearest), through the table's HNSW index.

    A semantic look-up reads both and joins them with `best_per_memory`.
    """
    await prefer_indexes(conn)
    params = {
        **filter_params(where),
        "vec": embedding,
        "k": limit * CHUNK_ROWS_PER_MEMORY if passages else limit,
    }
    rows = await _in_vector_order(
        conn, _NEAREST_PASSAGES_SQL if passages else _NEAREST_OWN_SQL, params
    )
    return [(int(row[0]), float(row[1])) for row in rows]


def best_per_memory(
    found: Sequence[Sequence[tuple[int, float]]], limit: int, min_similarity: float = -1.0
) -> list[tuple[int, float]]:
    """(memory id, cosine similarity) of the `limit` closest memories, best first, from
    look-ups that each gave (memory id, distance): a memory counts by its nearest row."""
    nearest: dict[int, float] = {}
    for rows in found:
        for memory_id, distance in rows:
            if distance < nearest.get(memory_id, 2.0):
                nearest[memory_id] = distance
    ranked = sorted(nearest.items(), key=lambda item: (item[1], item[0]))
    return [(i, 1.0 - d) for i, d in ranked if 1.0 - d >= min_similarity][:limit]


async def semantic_candidates(
    conn: Conn,
    embedding: np.ndarray,
    where: MemoryFilter,
    limit: int,
    min_similarity: float = -1.0,
    *,
    within_period: bool = False,
) -> list[tuple[int, float]]:
    """(memory id, cosine similarity) of the closest memories, best first, on one connection.

    `within_period`: the filter names a period (a question's date), so the planner may read
    the period's rows by date and rank them exactly. Through the HNSW index instead, a narrow
    period makes the iterative scan walk most of the graph to find k rows from then: at
    100,000 memories that was hybrid's tail (the dated look-up's p95 86 ms against 9 ms p50).
    Otherwise the two indexes are read one after the other (`nearest_rows`); a search that
    can spare a second connection reads them at once instead (server/service/search.py).
    """
    if not within_period:
        found = [
            await nearest_rows(conn, embedding, where, limit, passages=passages)
            for passages in (False, True)
        ]
        return best_per_memory(found, limit, min_similarity)
    await prefer_indexes(conn)
    params = {
        **filter_params(where),
        "vec": embedding,
        "k": limit,
        "rows_per_memory": CHUNK_ROWS_PER_MEMORY,
        "min_similarity": min_similarity,
    }
    cur = await conn.execute(_NEAREST_SQL, params)
    return [(int(row[0]), float(row[1])) for row in await cur.fetchall()]


async def _in_vector_order(conn: Conn, sql: str, params: dict[str, Any]) -> list[Any]:
    """Run a nearest-neighbour statement with sorting priced out, so its ORDER BY distance
    LIMIT k is read from the HNSW index.

    The planner cannot tell how many rows the visibility condition keeps (it reads settings,
    server/store/memories.py) and guesses 1%; at 10,000 memories it then prefers sorting the
    few rows it expects over the index, and sorts them all (18.7 ms p50 against 3.6 ms through
    the index). Only this statement runs so: small sorts elsewhere in the transaction (a
    memory's newest successor) must stay sorts.
    """
    await conn.execute("SET LOCAL enable_sort = off")
    cur = await conn.execute(sql, params)
    rows = await cur.fetchall()
    await conn.execute("SET LOCAL enable_sort = on")
    return list(rows)


async def similarities(conn: Conn, embedding: np.ndarray, ids: Sequence[int]) -> dict[int, float]:
    """Exact cosine similarity of the query to each given memory (best passage for long ones)."""
    if not ids:
        return {}
    cur = await conn.execute(
        "SELECT id, 1 - min(distance) FROM ("
        "  SELECT id, embedding <=> %(vec)s AS distance FROM memories"
        f"  WHERE id = ANY(%(ids)s) AND embedding IS NOT NULL AND {VISIBLE_SQL}"
        "  UNION ALL"
        "  SELECT c.memory_id, c.embedding <=> %(vec)s FROM memory_chunks c"
        "  JOIN memories ON memories.id = c.memory_id"
        f"  WHERE c.memory_id = ANY(%(ids)s) AND {VISIBLE_SQL}"
        ") AS d GROUP BY id",
        {"vec": embedding, "ids": list(ids)},
    )
    return {int(row[0]): float(row[1]) for row in await cur.fetchall()}


async def nearest_statements(
    conn: Conn, embedding: np.ndarray, ids: Sequence[int]
) -> dict[int, Window]:
    """The span of each given memory's statement (its `unit = 'statement'` chunk rows,
    migrations/020_statement_units.sql) nearest the query: which of its statements the query
    is about, where ranking the memory kept only how close the best one came. A memory stating
    fewer than two things has none and is left out."""
    if not ids:
        return {}
    cur = await conn.execute(
        "SELECT DISTINCT ON (c.memory_id) c.memory_id, c.start_char, c.end_char"
        " FROM memory_chunks c JOIN memories ON memories.id = c.memory_id"
        f" WHERE c.memory_id = ANY(%(ids)s) AND c.unit = 'statement' AND {VISIBLE_SQL}"
        " ORDER BY c.memory_id, c.embedding <=> %(vec)s",
        {"vec": embedding, "ids": list(ids)},
    )
    return {int(row[0]): Window(int(row[1]), int(row[2])) for row in await cur.fetchall()}


async def pair_similarities(
    conn: Conn, pairs: Sequence[tuple[int, int]]
) -> dict[tuple[int, int], float]:
    """Cosine similarity of the stored vectors of each pair of memories (both must be visible
    and have a vector; other pairs are left out)."""
    if not pairs:
        return {}
    cur = await conn.execute(
        "SELECT p.a, p.b, 1 - (a.embedding <=> b.embedding)"
        " FROM unnest(%(left)s::bigint[], %(right)s::bigint[]) AS p(a, b)"
        " JOIN memories a ON a.id = p.a JOIN memories b ON b.id = p.b"
        f" WHERE a.embedding IS NOT NULL AND b.embedding IS NOT NULL"
        f" AND {visible('a')} AND {visible('b')}",
        {"left": [a for a, _ in pairs], "right": [b for _, b in pairs]},
    )
    return {(int(row[0]), int(row[1])): float(row[2]) for row in await cur.fetchall()}


async def known_texts(conn: Conn, texts: Sequence[str]) -> dict[str, bool]:
    """Whether some live memory the reader may see holds all the words of each text (English
    stems, as keyword search reads them); a text of stop words only counts as known."""
    if not texts:
        return {}
    cur = await conn.execute(
        "SELECT t.text, numnode(q) = 0 OR EXISTS (SELECT 1 FROM memories"
        f"  WHERE tsv @@ q AND deleted_at IS NULL AND {VISIBLE_SQL})"
        " FROM unnest(%(texts)s::text[]) AS t(text),"
        " LATERAL plainto_tsquery('english', t.text) AS q",
        {"texts": list(texts)},
    )
    return {str(row[0]): bool(row[1]) for row in await cur.fetchall()}


async def query_lexemes(conn: Conn, text: str) -> list[str]:
    """The searchable terms of a query: English stems plus whole identifiers, as stored."""
    cur = await conn.execute(
        "SELECT lexeme FROM unnest(to_tsvector('english', %(q)s))"
        " UNION SELECT unnest(identifier_lexemes(%(q)s))",
        {"q": text},
    )
    return sorted(str(row[0]) for row in await cur.fetchall())


async def document_frequencies(conn: Conn, lexemes: Sequence[str]) -> dict[str, int]:
    """How many stored memories contain each term, counted through the GIN index."""
    if not lexemes:
        return {}
    cur = await conn.execute(
        "SELECT t.lexeme, (SELECT count(*) FROM memories"
        "   WHERE tsv @@ quote_literal(t.lexeme)::tsquery)"
        " FROM unnest(%(lexemes)s::text[]) AS t(lexeme)",
        {"lexemes": list(lexemes)},
    )
    return {str(row[0]): int(row[1]) for row in await cur.fetchall()}


async def term_statistics(conn: Conn, live_rows: int) -> tuple[dict[str, float], float] | None:
    """Lexeme frequencies ANALYZE recorded for memories.tsv, as shares of rows.

    Returns (share per tracked lexeme, the smallest tracked share), or None when the table has
    not been analysed yet, or when it has since changed size by more than half (after a large
    import or a wipe the recorded shares describe other memories).
    """
    cur = await conn.execute(
        "SELECT s.most_common_elems::text::text[], s.most_common_elem_freqs, c.reltuples"
        " FROM pg_stats s JOIN pg_class c ON c.oid = 'memories'::regclass"
        " WHERE s.schemaname = current_schema() AND s.tablename = 'memories'"
        " AND s.attname = 'tsv'"
    )
    row = await cur.fetchone()
    if row is None or row[0] is None or row[1] is None:
        return None
    analysed_rows = float(row[2])
    if not 0.5 * live_rows <= analysed_rows <= 2.0 * live_rows:
        return None
    lexemes, shares = list(row[0]), [float(s) for s in row[1]]
    tracked = dict(zip(lexemes, shares[: len(lexemes)], strict=True))
    # The array ends with the minimum, maximum and null share after one share per lexeme.
    floor = shares[len(lexemes)] if len(shares) > len(lexemes) else min(tracked.values(), default=0)
    return tracked, floor


async def live_count(conn: Conn) -> int:
    cur = await conn.execute("SELECT count(*) FROM memories WHERE deleted_at IS NULL")
    row = await cur.fetchone()
    return int(row[0]) if row else 0


# BM25 over the tsvector: each query term found in a memory adds its IDF weight, scaled by
# how often it occurs there (saturating, k1) and by the memory's length in distinct terms
# against the average (b). A conversation turn's occurrences count the two turns before it
# too (`context_tsv`, migration 006): weight B (the turn before) at TURN_CONTEXT_WEIGHTS[0],
# C at [1], and so does its length (CONTEXT_LENGTH_SHARE of the context's). ts_rank_cd
# (cover density: how close together the terms stand) breaks ties.
_TERMS_SQL = (
    "WITH terms AS (SELECT lexeme, weight"
    "  FROM unnest(%(lexemes)s::text[], %(weights)s::float8[]) AS t(lexeme, weight))"
)
_SCORE_SQL = (
    "coalesce((SELECT sum(terms.weight * tf * (%(k1)s + 1)"
    "   / (tf + %(k1)s * (1 - %(b)s + %(b)s"
    "       * (length(m.tsv) + %(context_length)s * coalesce(length(m.context_tsv), 0))"
    "       / %(avg_length)s)))"
    "  FROM (SELECT lexeme, sum(tf) AS tf FROM ("
    "     SELECT u.lexeme, greatest(coalesce(array_length(u.positions, 1), 1), 1)::float8 AS tf"
    "     FROM unnest(m.tsv) AS u WHERE u.lexeme = ANY(%(lexemes)s::text[])"
    "     UNION ALL"
    "     SELECT c.lexeme, coalesce((SELECT sum(CASE w WHEN 'B' THEN %(context_before)s"
    "       ELSE %(context_earlier)s END) FROM unnest(c.weights) AS w), %(context_earlier)s)"
    "     FROM unnest(m.context_tsv) AS c WHERE c.lexeme = ANY(%(lexemes)s::text[])"
    "     ) AS counted GROUP BY lexeme) AS found"
    "  JOIN terms ON terms.lexeme = found.lexeme), 0)"
    " + 0.01 * ts_rank_cd(m.tsv, %(any_term)s::tsquery)"
)
# k1 as usual; b lowered from the textbook 0.75 because longer memories tend to carry more of
# the answer, not just more words (tuned on LoCoMo conversations 0-4, see
# docs/benchmarks-history.md).
BM25_K1 = 1.2
BM25_B = 0.3
# A turn scored on its context's words is as long as its own words plus this share of the
# context's: measured by its own length alone, a two-word reply ("Do it.") outscored the turn
# it answers on that turn's own words (BM25 favours short memories). Team corpus answered@1
# 0.635 -> 0.651, LoCoMo tuning recall@10 / MRR 0.761 / 0.570 -> 0.766 / 0.581; the outside
# corpus lost one question net (docs/benchmarks-history.md).
CONTEXT_LENGTH_SHARE = 0.5
# BM25 runs in SQL per row (unnesting the tsvector), so it scores at most this many rows (or
# as many as asked for, when more): those holding the most IDF weight of query terms,
# shortest first (presence only: one index probe per term, inline). At 100,000 memories: the
# exact BM25 top 10 in 98% of places with 2,000 seed rows, 99% with 3,000 seed rows and 200
# scored (13 / 17 ms p95), against 95.5% for the 1,000 rows `ts_rank` used to pick from every
# match (56 ms p95; docs/benchmarks-history.md).
BM25_MAX_ROWS = 100


@dataclass(frozen=True, slots=True)
class KeywordQuery:
    """A keyword query as the SQL reads it: terms, their IDF weights and the seed terms."""

    lexemes: list[str]
    weights: list[float]
    average_length: float  # BM25's average memory length, in distinct terms
    # Candidates are the memories holding a seed term (see ranking.seed_terms); all of
    # `lexemes` score them.
    seeds: list[str]


def any_term_query(lexemes: Sequence[str]) -> str:
    """A tsquery literal matching any of the lexemes exactly (quoted, so nothing is parsed).

    Sent as a parameter rather than built in SQL so the planner sees a constant and can use
    the GIN index.
    """
    quoted = ("'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'" for lexeme in lexemes)
    return " | ".join(quoted)


def _bm25_params(query: KeywordQuery) -> dict[str, object]:
    return {
        "any_term": any_term_query(query.lexemes),
        "lexemes": list(query.lexemes),
        "weights": list(query.weights),
        "k1": BM25_K1,
        "b": BM25_B,
        "avg_length": max(query.average_length, 1.0),
        "context_length": CONTEXT_LENGTH_SHARE,
        "context_before": TURN_CONTEXT_WEIGHTS[0],
        "context_earlier": TURN_CONTEXT_WEIGHTS[1],
    }


def _weight_held_sql(
    lexemes: Sequence[str], weights: Sequence[float], column: str = "tsv"
) -> tuple[str, dict[str, object]]:
    """An expression summing the weight of each lexeme a row's word index (`column`) holds,
    presence only (one `@@` test per lexeme, no unnesting), and its parameters."""
    sql = " + ".join(
        f"CASE WHEN {column} @@ %(term_{i})s::tsquery THEN %(weight_{i})s ELSE 0 END"
        for i in range(len(lexemes))
    )
    params: dict[str, object] = {}
    for i, (lexeme, weight) in enumerate(zip(lexemes, weights, strict=True)):
        params[f"term_{i}"] = any_term_query([lexeme])
        params[f"weight_{i}"] = weight
    return sql, params


def _candidates_sql(presence: str) -> str:
    """Seed-term matches, preselected by the weight of the query terms they hold (`presence`,
    from `_weight_held_sql`), then BM25."""
    return (
        f"{_TERMS_SQL}, matches AS MATERIALIZED ("
        "  SELECT id, tsv, context_tsv, created_at FROM memories"
        f"  WHERE tsv @@ %(seed_term)s::tsquery AND {FILTER_SQL}"
        f"  ORDER BY {presence} DESC, length(tsv), created_at DESC, id DESC"
        "  LIMIT %(max_rows)s)"
        f" SELECT m.id, {_SCORE_SQL} AS score FROM matches m"
        " ORDER BY score DESC, m.created_at DESC, m.id DESC LIMIT %(k)s"
    )


async def keyword_candidates(
    conn: Conn, query: KeywordQuery, where: MemoryFilter, limit: int
) -> list[tuple[int, float]]:
    """(memory id, BM25 score) of memories containing the query's terms, best first.

    Candidates hold a seed term. When they are fewer than `limit` (a filter can leave none
    of the rare terms' memories) the look-up is repeated with every term as a seed.
    """
    if not query.lexemes:
        return []
    presence, presence_params = _weight_held_sql(query.lexemes, query.weights)
    params = {
        **filter_params(where),
        **_bm25_params(query),
        **presence_params,
        "seed_term": any_term_query(query.seeds or query.lexemes),
        "max_rows": max(BM25_MAX_ROWS, limit),
        "k": limit,
    }
    sql = _candidates_sql(presence)
    cur = await conn.execute(sql, params)
    rows = await cur.fetchall()
    if len(rows) < limit and set(query.seeds or query.lexemes) != set(query.lexemes):
        cur = await conn.execute(sql, params | {"seed_term": params["any_term"]})
        rows = await cur.fetchall()
    return [(int(row[0]), float(row[1])) for row in rows]


async def keyword_scores(conn: Conn, query: KeywordQuery, ids: Sequence[int]) -> dict[int, float]:
    """The BM25 score of each given memory (0 when it contains none of the terms)."""
    if not query.lexemes or not ids:
        return {}
    cur = await conn.execute(
        f"{_TERMS_SQL} SELECT m.id, {_SCORE_SQL} FROM memories m"
        f" WHERE m.id = ANY(%(ids)s) AND {visible('m')}",
        {**_bm25_params(query), "ids": list(ids)},
    )
    return {int(row[0]): float(row[1]) for row in await cur.fetchall()}


async def weight_held_here_and_elsewhere(
    conn: Conn, weights: Mapping[str, float], seeds: Sequence[str], project: str
) -> tuple[float, float]:
    """The most of the lexemes' weight (lexeme -> weight) one memory holds in its word index,
    among the memories of `project` and of no project (here), and among every other
    project's (elsewhere); 0 where none holds any. Only memories holding a seed term are read
    (the rarest terms, as keyword candidates are), so a common word cannot make it read
    most of the store."""
    if not weights or not seeds:
        return 0.0, 0.0
    held, params = _weight_held_sql(list(weights), list(weights.values()), column="m.tsv")
    params |= {"seeds": any_term_query(seeds), "project": project}
    cur = await conn.execute(
        "SELECT coalesce(m.project, '') IN ('', %(project)s) AS here,"
        f" max({held}) FROM memories m"
        " WHERE m.tsv @@ %(seeds)s::tsquery AND m.deleted_at IS NULL AND m.archived_at IS NULL"
        f" AND {visible('m')} GROUP BY 1",
        params,
    )
    best = {bool(row[0]): float(row[1] or 0.0) for row in await cur.fetchall()}
    return best.get(True, 0.0), best.get(False, 0.0)


IDENTIFIER_WORDS_CHARS = 20_000  # term_weight_held reads identifiers' words this far


async def term_weight_held(
    conn: Conn, weights: Mapping[str, float], ids: Sequence[int]
) -> dict[int, float]:
    """The summed weight of the lexemes (lexeme -> weight) each given memory holds in its own
    text, not its turn context; 0 for a memory holding none.

    Words inside paths, packages and identifiers count as held (`@fastify/rate-limit` holds
    "rate" and "limit"): the word index keeps such a token whole, a reader does not. They are
    read from the text's first IDENTIFIER_WORDS_CHARS characters, which bounds the work per
    prompt however long a memory is.
    """
    if not weights or not ids:
        return {}
    cur = await conn.execute(
        f"{_TERMS_SQL}, held AS ("
        "  SELECT m.id, tsvector_to_array(m.tsv) || tsvector_to_array(to_tsvector('english',"
        "    regexp_replace(left(m.content, %(chars)s), '[^[:alnum:][:space:]]+', ' ', 'g')))"
        "    AS lexemes"
        f"  FROM memories m WHERE m.id = ANY(%(ids)s) AND {visible('m')})"
        " SELECT held.id, coalesce(sum(terms.weight)"
        "  FILTER (WHERE terms.lexeme = ANY(held.lexemes)), 0)"
        " FROM held CROSS JOIN terms GROUP BY held.id",
        {
            "lexemes": list(weights),
            "weights": list(weights.values()),
            "ids": list(ids),
            "chars": IDENTIFIER_WORDS_CHARS,
        },
    )
    return {int(row[0]): float(row[1]) for row in await cur.fetchall()}


async def average_term_count(conn: Conn) -> float:
    """Mean number of distinct terms per live memory (BM25's average document length)."""
    cur = await conn.execute(
        "SELECT coalesce(avg(length(tsv)), 1) FROM memories WHERE deleted_at IS NULL"
    )
    row = await cur.fetchone()
    return float(row[0]) if row else 1.0


async def nearest_live(
    conn: Conn, embedding: np.ndarray | None, *, exclude_id: int | None = None
) -> Neighbour | None:
    """The live memory closest to `embedding` (other than `exclude_id`), for the write guard.

    Raw turns are not compared against: a memory worth saving is not made redundant by the
    conversation it was said in. No vector yet (the embedder is down) compares with nothing.
    """
    if embedding is None:
        return None
    cur = await conn.execute(
        "SELECT id, 1 - (embedding <=> %(vec)s) AS similarity, content"
        " FROM memories"
        " WHERE deleted_at IS NULL AND embedding IS NOT NULL AND kind <> 'raw'"
        f" AND (%(exclude)s::bigint IS NULL OR id <> %(exclude)s) AND {VISIBLE_SQL}"
        " ORDER BY embedding <=> %(vec)s LIMIT 1",
        {"vec": embedding, "exclude": exclude_id},
    )
    row = await cur.fetchone()
    if row is None:
        return None
    return Neighbour(id=row[0], similarity=float(row[1]), content=row[2], deleted=False)


async def nearest_live_many(
    conn: Conn, embeddings: Sequence[np.ndarray | None], *, project: str | None = None
) -> list[tuple[int, float] | None]:
    """(id, similarity) of the live memory closest to each vector, in one statement.

    Like `nearest_live`, raw turns are left out; `project` keeps the comparison in one project.
    A missing vector (the embedder is down) has no nearest memory.
    """
    present = [(i, vector) for i, vector in enumerate(embeddings) if vector is not None]
    found: list[tuple[int, float] | None] = [None] * len(embeddings)
    if not present:
        return found
    hits = await _nearest_of(conn, [vector for _, vector in present], project)
    for (i, _), hit in zip(present, hits, strict=True):
        found[i] = hit
    return found


async def _nearest_of(
    conn: Conn, embeddings: Sequence[np.ndarray], project: str | None
) -> list[tuple[int, float] | None]:
    cur = await conn.execute(
        "SELECT probe.ord, nearest.id, nearest.similarity"
        " FROM unnest(%(vecs)s::vector[]) WITH ORDINALITY AS probe (vec, ord)"
        " LEFT JOIN LATERAL ("
        "   SELECT id, 1 - (embedding <=> probe.vec) AS similarity FROM memories"
        "   WHERE deleted_at IS NULL AND embedding IS NOT NULL AND kind <> 'raw'"
        "   AND (%(project)s::text IS NULL OR project = %(project)s)"
        f"   AND {VISIBLE_SQL}"
        "   ORDER BY embedding <=> probe.vec LIMIT 1"
        " ) AS nearest ON true"
        " ORDER BY probe.ord",
        {"vecs": list(embeddings), "project": project},
    )
    return [
        (int(row[1]), float(row[2])) if row[1] is not None else None for row in await cur.fetchall()
    ]


async def related(conn: Conn, memory_id: int, limit: int) -> list[tuple[int, float]]:
    """Live memories nearest to a memory's stored vector (no re-embedding), itself excluded."""
    await prefer_indexes(conn)
    rows = await _in_vector_order(
        conn,
        "WITH source AS (SELECT embedding FROM memories"
        f" WHERE id = %(id)s AND {VISIBLE_SQL})"
        " SELECT m.id, 1 - (m.embedding <=> source.embedding) AS similarity"
        " FROM memories m, source"
        " WHERE m.id <> %(id)s AND m.deleted_at IS NULL AND m.embedding IS NOT NULL"
        f" AND {visible('m')}"
        " ORDER BY m.embedding <=> source.embedding LIMIT %(limit)s",
        {"id": memory_id, "limit": limit},
    )
    return [(int(row[0]), float(row[1])) for row in rows]


async def duplicate_pairs(
    conn: Conn,
    *,
    threshold: float,
    scan_limit: int,
    limit: int,
    project: str | None,
    neighbours: int = 5,
) -> list[tuple[int, int, float]]:
    """Pairs (older id, newer id, similarity) at or above `threshold`, most similar first.

    Looks up the few nearest neighbours of each of the `scan_limit` newest live memories
    through the index: linear in `scan_limit`, never all pairs.
    """
    cur = await conn.execute(
        "WITH recent AS MATERIALIZED ("
        "  SELECT id, embedding FROM memories"
        "  WHERE deleted_at IS NULL AND embedding IS NOT NULL"
        "  AND (%(project)s::text IS NULL OR project = %(project)s OR project_path = %(project)s)"
        f"  AND {VISIBLE_SQL}"
        "  ORDER BY created_at DESC, id DESC LIMIT %(scan)s"
        ")"
        " SELECT DISTINCT least(r.id, n.id), greatest(r.id, n.id), n.similarity"
        " FROM recent r CROSS JOIN LATERAL ("
        "  SELECT m.id, 1 - (m.embedding <=> r.embedding) AS similarity FROM memories m"
        "  WHERE m.deleted_at IS NULL AND m.embedding IS NOT NULL AND m.id <> r.id"
        "  AND (%(project)s::text IS NULL OR m.project = %(project)s"
        "       OR m.project_path = %(project)s)"
        f"  AND {visible('m')}"
        "  ORDER BY m.embedding <=> r.embedding LIMIT %(neighbours)s"
        " ) AS n"
        " WHERE n.similarity >= %(threshold)s"
        " ORDER BY n.similarity DESC, 1, 2 LIMIT %(limit)s",
        {
            "project": project,
            "scan": scan_limit,
            "neighbours": neighbours,
            "threshold": threshold,
            "limit": limit,
        },
    )
    return [(int(row[0]), int(row[1]), float(row[2])) for row in await cur.fetchall()]


async def project_vectors(
    conn: Conn, memory_ids: Sequence[int]
) -> list[tuple[int, str, np.ndarray]]:
    """(id, project, stored vector) of those of `memory_ids` the reader may see that have one,
    for comparing a small set with itself (the preferences shown) outside the database: a
    self-join compared every pair of rows, a million for 1,000 preferences (77 ms)."""
    cur = await conn.execute(
        "SELECT id, project, embedding FROM memories"
        f" WHERE id = ANY(%(ids)s) AND embedding IS NOT NULL AND {VISIBLE_SQL} ORDER BY id",
        {"ids": list(memory_ids)},
        binary=True,  # read as text, 1,000 vectors took 135 ms to parse
    )
    # pgvector's adapter reads a `vector` as its own Vector type.
    return [(int(row[0]), str(row[1]), row[2].to_numpy()) for row in await cur.fetchall()]
