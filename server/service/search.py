"""Retrieval behind MemoryService's search methods: semantic, keyword, hybrid, related, duplicates.

- semantic: cosine similarity over the HNSW indexes (memories and their passages, the two read
  at once on two connections).
- keyword: the query's English stems and whole identifiers, any of which may match, ranked
  by BM25 with IDF from the planner's term statistics; cover density breaks ties. Candidates
  are the memories holding one of the rarer terms (seeds), so common words stay cheap.
- hybrid: the two candidate lists fused by score (server/core/ranking.score_fusion: each
  list adds its weight times the hit's score as a share of the list's best), the two legs
  running side by side on their own connections; every hit gets its exact similarity and
  keyword score, whichever list found it, and both count in the fusion.
  A date named in the query adds the two lists again, limited to that period.
Each mode's base score is scaled by the ranking prior (kind weight, recency, a turn that asks)
unless switched off;
with the prior on, the versions of a changed fact are ordered by what the question asks for
(the current one, or the one before; server/domain/versions.py).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import numpy as np
from cachetools import TTLCache

from server.core.errors import InvalidInput, NotFound
from server.core.models.memories import DuplicatePair, Memory, MemoryFilter, RelatedMemory
from server.core.models.output import preview
from server.core.models.search import SearchHit, SearchResult
from server.core.models.vectors import Window
from server.core.ranking import (
    NO_PRIOR,
    RankingPrior,
    asks,
    asks_why,
    gives_reason,
    idf,
    score_fusion,
    seed_terms,
    term_weights,
)
from server.core.validation import (
    MAX_SCAN_LIMIT,
    check_fusion_weights,
    check_limit,
    check_query,
    check_unit,
)
from server.domain.prompt_names import named_things
from server.domain.query_dates import (
    EventReference,
    Period,
    change_period,
    event_period,
    event_reference,
    mentioned_period,
    names_relative_time,
)
from server.domain.statement_versions import confirmed, newer_first, stale_candidates
from server.domain.supersession_rules import redundant_near_copy
from server.domain.versions import (
    Tense,
    earlier_subject_candidates,
    lift_newer,
    near_copy_candidates,
    order_as_of,
    order_versions,
    plainly_present,
    question_tense,
    same_subject_candidates,
    wanted_ids,
)
from server.domain.vocabulary import Vocabulary
from server.service.embeddings import Embedder
from server.store import memories as memory_store
from server.store import search as search_store
from server.store.search import KeywordQuery
from server.store.tx import Conn, Pool, transaction

# Hybrid fuses each list's top max(limit, this) candidates. With score fusion a deeper list
# no longer lifts what merely appears in both (as rank fusion did: LoCoMo conversations 0-4,
# recall@10 0.671 at depth 10, 0.666 at 20 then); measured with score fusion, conversations 0-4
# recall@10 0.761 at 10, 0.761 at 15, 0.758 at 20, and 15 was as good or better on the team's
# corpus (docs/benchmarks-history.md, session 13).
HYBRID_MIN_DEPTH = 15
# When a query names a date, the best matches from that period join hybrid's fusion as two more
# lists, each weighted this many times its mode's weight (LoCoMo conversations 0-4, replayed:
# recall@10 0.661 without them, 0.668 / 0.674 / 0.678 at 0.5x / 1x / 2x;
# docs/benchmarks-history.md).
DATED_LIST_WEIGHT = 2.0
# A relative phrase ("early March", "two weeks ago") is a guess at the period: its lists count
# half as much, and its semantic list keeps only memories about the question at all, so a memory
# that is merely from then cannot pass the answer from another time.
RELATIVE_DATED_LIST_WEIGHT = 1.0
RELATIVE_DATED_MIN_SIMILARITY = 0.3
# "before the security review": the memory that tells of the event must be about it, as close as
# prompt recall asks a memory to be to a prompt (the bundled model's measured recall cut-off).
EVENT_MIN_SIMILARITY = 0.45
# The event is the closest turn of a session among this many closest memories (notes describe
# events and are dated when written): outside corpus past answered@1 0.444 -> 0.472, @5 0.861
# -> 0.889; the team corpus unchanged (docs/benchmarks-history.md, session 20).
EVENT_CANDIDATES = 5
# Versions of a fact are close but are not duplicates; read more pairs so that leaving them out
# still fills the page.
DUPLICATE_OVERFETCH = 2
# Keyword candidates come from the rarest query terms matching this many memories together
# (ranking.seed_terms). At 100,000 memories a question's terms match 5,000 (median) to 13,000
# rows; with 2,000 seed rows (and store/search.BM25_MAX_ROWS) the keyword SQL takes 9 / 13 ms
# p50 / p95 instead of 31 / 56 ms, and 98% of its top 10 is exact BM25's over every match
# (docs/benchmarks-history.md). Below ~2,000 memories every term is a seed.
KEYWORD_SEED_ROWS = 2000
# Terms the developer vocabulary adds to a keyword query (server/domain/vocabulary.py) count at
# this share of their IDF: they are evidence for the question, not its own words. Measured with
# the table on (keyword side only; adding the forms to the embedded query gained nothing):
# outside corpus answered@1 0.535 -> 0.543 (paraphrase 0.526 -> 0.579), LoCoMo unchanged.
EXPANSION_WEIGHT = 0.5
# A word's rarity read from a store of a few memories is noise (in a store of one memory, every
# word it holds is "in all of them"), so the words share counts a smaller store as this many:
# a new user's first memories are weighed as words, not as the whole store.
SHARE_MIN_STORE = 100
# An older hit that restates what a newer hit replaced (the request a corrected plan repeated)
# is outdated with it: checked in the first places only, at the similarity two wordings of one
# statement reach with the bundled model (the write guard's UPDATE band starts at 0.75).
NEAR_COPY_PLACES = 3
NEAR_COPY_SIMILARITY = 0.75
# A newer hit about the same thing as an older one above it (no link between them) is lifted
# above it for a present-tense question (`_newer_about_the_same`). Chosen on the team corpus
# (similarity 0.5 / 0.6 / 0.7: all answered@1 0.595 / 0.619 / 0.587) and LoCoMo's tuning split
# (no change at any of them once both hits must state a value; without that condition MRR fell
# 0.569 -> 0.541), checked on the outside corpus (0.528 -> 0.543). docs/benchmarks-history.md.
# The mirror for a question about an earlier state (`_earlier_about_the_same`) uses the same
# bounds: team corpus past answered@1 0.385 -> 0.410, the same at 0.5; LoCoMo unchanged.
SAME_SUBJECT_SIMILARITY = 0.6
SAME_SUBJECT_PLACES = 3  # the older hit is one of the first three
SAME_SUBJECT_DEPTH = 8  # the newer hit is one of the first eight
SAME_SUBJECT_MIN_SHARE = 0.8  # the newer hit scores at least this share of the older's
SAME_SUBJECT_MIN_GAP = timedelta(hours=1)  # not a neighbouring turn of the same exchange
# For a question that asks why, a memory that states a cause or a purpose in so many words
# (ranking.gives_reason) scores this much more: the turn that reports a symptom repeats the
# question's words, the one that explains it often does not. Chosen on LoCoMo's tuning split
# (MRR 0.5785 / 0.5794 / 0.5803 at 1.0 / 1.1 / 1.2) and the team corpus (unchanged), checked
# on the outside corpus (answered@5 0.890 -> 0.906) and LoCoMo held out (MRR 0.5568 -> 0.5575).
REASON_WEIGHT = 1.2
# Query vectors kept after a search (`Searcher._query_vector`): the hooks of a few sessions at
# once ask of the query they just searched for.
QUERY_VECTORS_KEPT = 64
# Versions of a fact pulled into a result list follow a chain at most this many links.
MAX_CHAIN_STEPS = 3
# Document frequencies move slowly; caching them per term keeps IDF weighting off the hot path.
_FREQUENCY_TTL_SECONDS = 300.0

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class CorpusStatistics:
    """What keyword weights need of the whole store: live memories, their mean length in
    terms, and each term's share (None until ANALYZE has run)."""

    live: int
    average_terms: float
    term_shares: tuple[dict[str, float], float] | None


@dataclass(frozen=True, slots=True)
class ShareWeights:
    """A query's lexemes with their weight in a word share, and how many memories hold each."""

    weights: dict[str, float]
    frequencies: dict[str, int]


@dataclass(frozen=True, slots=True)
class CountedTerms:
    """A query's lexemes with how many memories hold each (0: none does)."""

    frequencies: dict[str, int]
    added: frozenset[str]  # the vocabulary's forms, not the query's own words
    statistics: CorpusStatistics


class Searcher:
    def __init__(
        self,
        pool: Pool,
        embedder: Embedder,
        prior: RankingPrior,
        vocabulary: Vocabulary | None = None,
    ) -> None:
        self.pool = pool
        self.embedder = embedder
        self.prior = prior
        self.vocabulary = vocabulary or Vocabulary()
        self._frequencies: TTLCache[str, int] = TTLCache(
            maxsize=100_000, ttl=_FREQUENCY_TTL_SECONDS
        )
        # One snapshot of the corpus statistics, replaced whole: searches run concurrently and
        # each reads the snapshot once, so none sees half of an old one and half of a new one.
        self._statistics: TTLCache[str, CorpusStatistics] = TTLCache(
            maxsize=1, ttl=_FREQUENCY_TTL_SECONDS
        )
        # The queries' vectors, kept so a caller can ask more of a search's query without a
        # second model call (`nearest_statements`).
        self._query_vectors: TTLCache[str, np.ndarray] = TTLCache(
            maxsize=QUERY_VECTORS_KEPT, ttl=_FREQUENCY_TTL_SECONDS
        )

    async def _query_vector(self, text: str) -> np.ndarray:
        """The vector of the query `text`, embedded once while it is kept."""
        vector = self._query_vectors.get(text)
        if vector is None:
            [vector] = await self.embedder.encode_queries_async([text])
            self._query_vectors[text] = vector
        return vector

    async def nearest_statements(
        self, conn: Conn, query: str, ids: Sequence[int]
    ) -> dict[int, Window]:
        """The statement of each of `ids` nearest `query` (server/store/search.py
        `nearest_statements`), by the vector the search for `query` computed: nothing when that
        search found none to keep (the model was down and keywords alone answered, or its
        result came from the read cache after the vector was dropped), rather than a second
        model call on the hook's path."""
        vector = self._query_vectors.get(check_query(query))
        if vector is None or not ids:
            return {}
        return await search_store.nearest_statements(conn, vector, ids)

    async def semantic(
        self,
        query: str,
        where: MemoryFilter,
        *,
        limit: int,
        min_similarity: float,
        use_prior: bool = True,
    ) -> SearchResult:
        started = time.perf_counter()
        text = check_query(query)
        check_limit(limit)
        check_unit("min_similarity", min_similarity)
        vector = await self._query_vector(text)
        candidates = await self._nearest(vector, where, _candidate_count(limit), min_similarity)
        async with transaction(self.pool) as conn:
            rows = await memory_store.get_many(conn, [i for i, _ in candidates])
        similarity = dict(candidates)
        hits = self._rank(rows, lambda m: similarity[m.id], use_prior, text, similarity=similarity)
        hits = await self._versions(hits, text, limit, use_prior, vector)
        return _result("semantic", text, hits, started)

    async def keyword(
        self, query: str, where: MemoryFilter, *, limit: int, use_prior: bool = True
    ) -> SearchResult:
        started = time.perf_counter()
        text = check_query(query)
        check_limit(limit)
        async with transaction(self.pool) as conn:
            terms = await self._terms(conn, text)
            candidates = await search_store.keyword_candidates(
                conn, terms, where, _candidate_count(limit)
            )
            rows = await memory_store.get_many(conn, [i for i, _ in candidates])
        keyword = dict(candidates)
        hits = self._rank(rows, lambda m: keyword[m.id], use_prior, text, keyword=keyword)
        hits = await self._versions(hits, text, limit, use_prior)
        return _result("keyword", text, hits, started)

    async def hybrid(
        self,
        query: str,
        where: MemoryFilter,
        *,
        limit: int,
        keyword_weight: float,
        semantic_weight: float,
        min_similarity: float = 0.0,
        use_prior: bool = True,
    ) -> SearchResult:
        started = time.perf_counter()
        text = check_query(query)
        check_limit(limit)
        check_unit("min_similarity", min_similarity)
        check_fusion_weights(keyword_weight, semantic_weight)
        count = max(HYBRID_MIN_DEPTH, limit)
        # A question naming a date is about that period: its best matches from then join the
        # fusion as two more lists.
        period, relative = await self._period(text, where) if use_prior else (None, False)
        dated = _within(where, period)
        dated_weight = RELATIVE_DATED_LIST_WEIGHT if relative else DATED_LIST_WEIGHT
        dated_floor = max(min_similarity, RELATIVE_DATED_MIN_SIMILARITY if relative else 0.0)
        # The keyword leg runs on its own connection while the query is embedded and the
        # semantic leg runs on another, so hybrid costs about the slower of the two legs.
        # Neither waits for the other while holding a connection, so the pool cannot deadlock.
        # Inside `one_read` (prompt recall, server/store/tx.py) the legs take its one
        # connection in turn: only the embedding overlaps the keyword leg.
        keyword_leg = asyncio.ensure_future(self._keyword_lists(text, where, dated, count))
        try:
            vector = await self._query_vector(text)
            lists = await self._semantic_lists(
                vector, where, dated, count, min_similarity, dated_floor
            )
            terms, keyword_lists = await keyword_leg
        finally:
            _discard(keyword_leg)
        lists.update(keyword_lists)
        weights = {
            "semantic": semantic_weight,
            "keyword": keyword_weight,
            "semantic_dated": dated_weight * semantic_weight,
            "keyword_dated": dated_weight * keyword_weight,
        }
        ids = list(dict.fromkeys(i for found in lists.values() for i, _ in found))
        # Each list scored its own candidates; only the other lists' finds need a score.
        similarity = dict(lists["semantic"]) | dict(lists.get("semantic_dated", []))
        keyword_score = dict(lists["keyword"]) | dict(lists.get("keyword_dated", []))
        async with transaction(self.pool) as conn:
            similarity.update(
                await search_store.similarities(
                    conn, vector, [i for i in ids if i not in similarity]
                )
            )
            keyword_score.update(
                await search_store.keyword_scores(
                    conn, terms, [i for i in ids if i not in keyword_score]
                )
            )
            rows = await memory_store.get_many(conn, ids)
        # Each list's scores, for every candidate: a memory just below one list's cut
        # still counts there by how close it came.
        fused = score_fusion(
            {
                "semantic": {i: similarity.get(i, 0.0) for i in ids},
                "keyword": {i: keyword_score.get(i, 0.0) for i in ids},
                **{name: dict(found) for name, found in lists.items() if "dated" in name},
            },
            weights,
        )
        # A candidate only a zero-weighted list found scores nothing: it is not a hit.
        hits = self._rank(
            [m for m in rows if fused.get(m.id, 0.0) > 0],
            lambda m: fused[m.id],
            use_prior,
            text,
            similarity=similarity,
            keyword=keyword_score,
            fused=fused,
        )
        hits = await self._versions(
            hits, text, limit, use_prior, vector, period if dated is not None else None
        )
        if dated is not None and period is not None:
            hits = [_in_period(hit, period) for hit in hits]
        return _result("hybrid", text, hits, started)

    async def _period(self, text: str, where: MemoryFilter) -> tuple[Period | None, bool]:
        """The period the question names, and whether it is a guess (a relative phrase, a
        change or an event). A relative phrase is read from the newest memory in scope (the
        project searched), or from now if there is none; an event from the memory that tells
        of it. A date attached to a change ("before we switched in March") dates the change:
        the period is the weeks before it (or after it)."""
        anchor = None
        if names_relative_time(text):
            async with transaction(self.pool) as conn:
                anchor = await memory_store.newest_created_at(conn, where) or datetime.now(UTC)
        changed = change_period(text, anchor)
        if changed is not None:
            return changed, True
        period = mentioned_period(text)
        if period is not None:
            return period, False
        if anchor is not None:
            return mentioned_period(text, anchor), True
        reference = event_reference(text)
        if reference is None:
            return None, False
        return await self._event_period(reference, where), True

    async def _event_period(self, reference: EventReference, where: MemoryFilter) -> Period | None:
        """The weeks before or after the event a question names, dated by the turn in scope
        closest to the event's words (or the closest memory of any kind when no turn is among
        the closest), else by the first turn holding all its words; None when no memory is
        close enough to be that event."""
        [vector] = await self.embedder.encode_queries_async([reference.phrase])
        async with transaction(self.pool) as conn:
            found = await search_store.semantic_candidates(
                conn, vector, where, EVENT_CANDIDATES, EVENT_MIN_SIMILARITY
            )
            rows = await memory_store.get_many(conn, [i for i, _ in found])
            if not rows:
                # A short name ("the cutover", "the 4.2.0 release") is too little for its
                # vector to reach the turn that tells of it: the first turn holding its words
                # dates it (the first mention; later turns talk about it after the fact).
                named = await memory_store.oldest_turn(conn, replace(where, text=reference.phrase))
                rows = await memory_store.get_many(conn, [named] if named else [])
                found = [(m.id, 0.0) for m in rows]
            if not rows:
                return None
            # An event happens in a session; a note (a runbook, a handbook) describes the
            # state around it and is dated when it was written. The closest turn of a
            # session dates the event, the closest memory of any kind when no turn is close.
            by_id = {m.id: m for m in rows}
            ranked = [by_id[i] for i, _ in found if i in by_id]
            event = next((m for m in ranked if m.session_id), ranked[0])
            at = event.created_at
            if event.session_id and reference.direction == "before":
                # The session that tells of the event is where it happened: its earlier turns
                # already work on the change, so "before" ends where that session began.
                started = await memory_store.oldest_created_at(
                    conn, replace(where, session_id=event.session_id)
                )
                at = min(at, started) if started else at
        return event_period(reference, at, event.id)

    async def _keyword_lists(
        self, text: str, where: MemoryFilter, dated: MemoryFilter | None, count: int
    ) -> tuple[KeywordQuery, dict[str, list[tuple[int, float]]]]:
        """Hybrid's keyword candidates (and the dated period's), in one transaction."""
        async with transaction(self.pool) as conn:
            terms = await self._terms(conn, text)
            lists = {"keyword": await search_store.keyword_candidates(conn, terms, where, count)}
            if dated is not None:
                lists["keyword_dated"] = await search_store.keyword_candidates(
                    conn, terms, dated, count
                )
        return terms, lists

    async def _semantic_lists(
        self,
        vector: np.ndarray,
        where: MemoryFilter,
        dated: MemoryFilter | None,
        count: int,
        min_similarity: float,
        dated_min_similarity: float,
    ) -> dict[str, list[tuple[int, float]]]:
        """Hybrid's semantic candidates (and the dated period's), each look-up on its own
        connection, all at once (one after the other inside `one_read`)."""
        if dated is None:
            return {"semantic": await self._nearest(vector, where, count, min_similarity)}
        nearest, in_period = await _at_once(
            self._nearest(vector, where, count, min_similarity),
            self._nearest_in_period(vector, dated, count, dated_min_similarity),
        )
        return {"semantic": nearest, "semantic_dated": in_period}

    async def _nearest(
        self, vector: np.ndarray, where: MemoryFilter, count: int, min_similarity: float
    ) -> list[tuple[int, float]]:
        """The closest memories by their own vectors and by their passages': the two HNSW
        look-ups run at once on two connections, so on two cores the semantic leg takes about
        the slower of the two instead of their sum (docs/benchmarks-history.md, session 23).
        Inside `one_read` (prompt recall) they share its one connection, one after the other."""

        async def look_up(passages: bool) -> list[tuple[int, float]]:
            async with transaction(self.pool) as conn:
                return await search_store.nearest_rows(
                    conn, vector, where, count, passages=passages
                )

        found = await _at_once(look_up(passages=False), look_up(passages=True))
        return search_store.best_per_memory(found, count, min_similarity)

    async def _nearest_in_period(
        self, vector: np.ndarray, dated: MemoryFilter, count: int, min_similarity: float
    ) -> list[tuple[int, float]]:
        """The closest memories from the period a question names, ranked exactly."""
        async with transaction(self.pool) as conn:
            return await search_store.semantic_candidates(
                conn, vector, dated, count, min_similarity, within_period=True
            )

    async def related(self, memory_id: int, limit: int) -> list[RelatedMemory]:
        check_limit(limit)
        async with transaction(self.pool) as conn:
            source = await memory_store.get(conn, memory_id)
            if source is None:
                raise NotFound(f"no memory with id {memory_id}")
            neighbours = await search_store.related(conn, memory_id, limit)
            rows = {m.id: m for m in await memory_store.get_many(conn, [i for i, _ in neighbours])}
        return [
            RelatedMemory(
                id=i,
                similarity=round(similarity, 4),
                kind=rows[i].kind,
                project=rows[i].project,
                created_at=rows[i].created_at,
                preview=preview(rows[i].content),
            )
            for i, similarity in neighbours
            if i in rows
        ]

    async def duplicates(
        self, *, threshold: float, limit: int, project: str | None, scan_limit: int
    ) -> list[DuplicatePair]:
        check_unit("threshold", threshold)
        check_limit(limit)
        if not 1 <= scan_limit <= MAX_SCAN_LIMIT:
            raise InvalidInput(
                f"scan_limit must be between 1 and {MAX_SCAN_LIMIT}, got {scan_limit}"
            )
        async with transaction(self.pool) as conn:
            pairs = await search_store.duplicate_pairs(
                conn,
                threshold=threshold,
                scan_limit=scan_limit,
                limit=min(limit * DUPLICATE_OVERFETCH, 500),
                project=project,
            )
            ids = {i for a, b, _ in pairs for i in (a, b)}
            rows = {m.id: m for m in await memory_store.get_many(conn, sorted(ids))}
        found = [
            DuplicatePair(a, b, round(s, 4), preview(rows[a].content), preview(rows[b].content))
            for a, b, s in pairs
            if a in rows and b in rows and _same_fact(rows[a], rows[b], s)
        ]
        return found[:limit]

    async def _terms(self, conn: Conn, text: str) -> KeywordQuery:
        """The query's terms with IDF weights, and the average memory length in terms.

        Terms the vocabulary adds (the other forms of what the query names) count at
        EXPANSION_WEIGHT of their IDF: evidence, not the question's own words."""
        counted = await self._counted_terms(conn, text)
        terms, weights = term_weights(counted.frequencies, counted.statistics.live)
        weights = [
            w * EXPANSION_WEIGHT if t in counted.added else w
            for t, w in zip(terms, weights, strict=True)
        ]
        return KeywordQuery(
            lexemes=terms,
            weights=weights,
            average_length=counted.statistics.average_terms,
            seeds=seed_terms({t: counted.frequencies[t] for t in terms}, KEYWORD_SEED_ROWS),
        )

    async def _counted_terms(self, conn: Conn, text: str) -> CountedTerms:
        """The query's lexemes (with the vocabulary's other forms) and how many memories hold
        each."""
        lexemes = await search_store.query_lexemes(conn, text)
        extra = self.vocabulary.expansions(text)
        added: set[str] = set()
        if extra:
            expanded = await search_store.query_lexemes(conn, " ".join(extra))
            added = {lexeme for lexeme in expanded if lexeme not in lexemes}
            lexemes = sorted({*lexemes, *added})
        statistics = self._statistics.get("corpus")
        if statistics is None:
            statistics = await self._refresh_statistics(conn)
        total = statistics.live
        if statistics.term_shares is not None:
            shares, floor = statistics.term_shares
            # An untracked term is rarer than every tracked one: count it at half the floor.
            frequencies = {t: max(1, round(total * shares.get(t, floor / 2))) for t in lexemes}
        else:
            cached = {t: self._frequencies.get(t) for t in lexemes}
            known = {t: n for t, n in cached.items() if n is not None}
            missing = [lexeme for lexeme in lexemes if lexeme not in known]
            if missing:
                found = await search_store.document_frequencies(conn, missing)
                self._frequencies.update(found)
                known.update(found)
            frequencies = {lexeme: known.get(lexeme, 0) for lexeme in lexemes}
        return CountedTerms(frequencies, frozenset(added), statistics)

    async def _refresh_statistics(self, conn: Conn) -> CorpusStatistics:
        """Row count, mean length and term shares, refreshed every few minutes.

        Term shares come from the planner's statistics; until ANALYZE has run (a new or tiny
        database) terms are counted exactly through the GIN index instead.
        """
        live = await search_store.live_count(conn)
        statistics = CorpusStatistics(
            live=int(live),
            average_terms=float(await search_store.average_term_count(conn)),
            term_shares=await search_store.term_statistics(conn, int(live)),
        )
        self._statistics["corpus"] = statistics
        self._frequencies.clear()
        return statistics

    async def _versions(
        self,
        hits: list[SearchHit],
        text: str,
        limit: int,
        use_prior: bool,
        vector: np.ndarray | None = None,
        period: Period | None = None,
    ) -> list[SearchHit]:
        """The top `limit` hits with the version of each fact the question asks for first.

        A version pulled into the list gets its similarity to the query when there is a query
        vector, so a similarity cut-off downstream (prompt recall) can judge it. A question that
        names a period ("in early March") asks for the version of then: the period's lists
        already lifted it, so no version is moved for the present.
        """
        top = hits[:limit]
        if not use_prior:
            return top
        as_of = period.as_of if period is not None else None
        tense: Tense | None = None if as_of is not None else question_tense(text)
        if period is not None and tense == "present":
            return top
        pulled: list[SearchHit] = []
        for _ in range(MAX_CHAIN_STEPS):
            wanted = wanted_ids([*top, *pulled], tense)
            if not wanted:
                break
            async with transaction(self.pool) as conn:
                rows = await memory_store.get_many(conn, wanted)
                close = (
                    await search_store.similarities(conn, vector, wanted)
                    if vector is not None
                    else {}
                )
            pulled.extend(
                _hit(m, 0.0, similarity=_rounded(close.get(m.id)))
                for m in rows
                if m.deleted_at is None
            )
        if as_of is not None:
            ordered = order_as_of(top, pulled, as_of)[:limit] if pulled or _linked(top) else top
            return await self._earlier_about_the_same(ordered, again=False, before=as_of)
        assert tense is not None
        ordered = order_versions(top, pulled, tense)[:limit] if pulled or _linked(top) else top
        if tense != "present" or event_reference(text) is not None:
            return await self._earlier_about_the_same(ordered, again=tense == "first")
        if plainly_present(text):
            ordered = await self._successors_over_near_copies(ordered)
            ordered = await self._newer_about_the_same(ordered)
            ordered = await self._newer_statements_first(ordered, text)
        return ordered

    async def _newer_about_the_same(self, hits: list[SearchHit]) -> list[SearchHit]:
        """Lift a newer hit above an older one that says much the same (stored vectors
        SAME_SUBJECT_SIMILARITY or closer) when both state a value and the newer scores
        nearly as well: without a link, the later statement of a value is the likelier
        current one (a soft signal: it only reorders, nothing is stored or hidden)."""
        candidates = same_subject_candidates(
            hits,
            places=SAME_SUBJECT_PLACES,
            depth=SAME_SUBJECT_DEPTH,
            min_share=SAME_SUBJECT_MIN_SHARE,
            min_gap=SAME_SUBJECT_MIN_GAP,
        )
        return await self._lift_about_the_same(hits, candidates, "newer", again=True)

    async def _earlier_about_the_same(
        self, hits: list[SearchHit], *, again: bool, before: datetime | None = None
    ) -> list[SearchHit]:
        """For a question about an earlier state, lift an older hit above a newer one that
        says much the same (the mirror of `_newer_about_the_same`): without a link, the earlier
        statement of a value is the likelier answer to "what was it before?". `before`: the
        moment the question looks back to; `again`: go back as far as the pairs reach
        ("originally"), else one step."""
        candidates = earlier_subject_candidates(
            hits,
            places=SAME_SUBJECT_PLACES,
            depth=SAME_SUBJECT_DEPTH,
            min_share=SAME_SUBJECT_MIN_SHARE,
            min_gap=SAME_SUBJECT_MIN_GAP,
            before=before,
        )
        return await self._lift_about_the_same(hits, candidates, "earlier", again=again)

    async def _lift_about_the_same(
        self, hits: list[SearchHit], candidates: list[tuple[int, int]], which: str, *, again: bool
    ) -> list[SearchHit]:
        """Lift the second hit of each candidate pair (passed, lifted) above the first when
        their stored vectors are SAME_SUBJECT_SIMILARITY or closer; `which` ("newer",
        "earlier") says in `version_note` why."""
        if not candidates:
            return hits
        async with transaction(self.pool) as conn:
            close = await search_store.pair_similarities(conn, candidates)
        pairs = [
            (passed, lifted, f"{which}, about the same as #{passed}")
            for passed, lifted in candidates
            if close.get((passed, lifted), 0.0) >= SAME_SUBJECT_SIMILARITY
        ]
        return lift_newer(hits, pairs, again=again) if pairs else hits

    async def _successors_over_near_copies(self, hits: list[SearchHit]) -> list[SearchHit]:
        """Lift a memory that replaced another above an older hit that restates the replaced
        one (stored vectors NEAR_COPY_SIMILARITY or closer): a link retires the plan it
        corrects, and the request that plan repeated is just as outdated."""
        candidates = near_copy_candidates(hits, NEAR_COPY_PLACES)
        if not candidates:
            return hits
        async with transaction(self.pool) as conn:
            close = await search_store.pair_similarities(
                conn, [(hit, replaced) for hit, _, replaced in candidates]
            )
        pairs = [
            (hit, successor, f"replaces #{replaced}, which #{hit} restates")
            for hit, successor, replaced in candidates
            if close.get((hit, replaced), 0.0) >= NEAR_COPY_SIMILARITY
        ]
        return lift_newer(hits, pairs) if pairs else hits

    async def _newer_statements_first(self, hits: list[SearchHit], text: str) -> list[SearchHit]:
        """Lift a newer hit above an older one a statement of which it changes (server/
        domain/statement_versions.py); the candidate statements are embedded in one batch, only when
        the rules find some, so the rules' similarity gates hold as they do for links."""
        candidates = stale_candidates(text, hits)
        if not candidates:
            return hits
        texts = sorted({c.older_text for c in candidates} | {c.newer_text for c in candidates})
        vectors = dict(zip(texts, await self.embedder.encode_async(texts), strict=True))
        stale = [
            c
            for c in candidates
            if confirmed(c, float(np.dot(vectors[c.older_text], vectors[c.newer_text])))
        ]
        return newer_first(hits, stale) if stale else hits

    async def share_weights(self, conn: Conn, query: str) -> ShareWeights:
        """The weight of each of the query's lexemes in a word share (IDF over a store counted
        as at least SHARE_MIN_STORE memories, vocabulary forms at EXPANSION_WEIGHT): a word no
        memory holds counts too, as the rarest of all, so a prompt about something the store
        never heard of is not read as fully named by its one common word. Read once within
        the caller's transaction (MemoryService.recall_evidence) for both uses below."""
        text = check_query(query)
        counted = await self._counted_terms(conn, text)
        total = max(counted.statistics.live, SHARE_MIN_STORE)
        weights = {
            term: idf(total, df) * (EXPANSION_WEIGHT if term in counted.added else 1.0)
            for term, df in counted.frequencies.items()
        }
        return ShareWeights(weights, dict(counted.frequencies))

    async def term_shares_in(
        self, conn: Conn, words: ShareWeights, ids: Sequence[int]
    ) -> dict[int, float]:
        """The share of the query's term weight each memory holds, from 0 to 1: how much of
        what was asked it names."""
        asked = sum(words.weights.values())
        if asked <= 0:
            return {}
        held = await search_store.term_weight_held(conn, words.weights, ids)
        return {memory_id: held.get(memory_id, 0.0) / asked for memory_id in ids}

    async def shares_here_and_elsewhere(
        self, conn: Conn, words: ShareWeights, project: str
    ) -> tuple[float, float]:
        """The largest share of the query's term weight one memory holds in its word index
        among `project`'s and general ones, and among every other project's: whether the
        words asked belong to this project or another (server/recall/cutoff.asked_elsewhere).
        Words inside identifiers are not read here, so both sides count the same way."""
        asked = sum(words.weights.values())
        if asked <= 0:
            return 0.0, 0.0
        seeds = seed_terms(words.frequencies, KEYWORD_SEED_ROWS)
        here, elsewhere = await search_store.weight_held_here_and_elsewhere(
            conn, words.weights, seeds, project
        )
        return here / asked, elsewhere / asked

    async def unknown_names(self, text: str) -> list[str]:
        """The names `text` mentions (server/domain/prompt_names.py) that no memory holds, in
        any of their vocabulary forms ("BLE" is known from "Bluetooth Low Energy")."""
        names = named_things(text)
        if not names:
            return []
        forms = {name: [name, *self.vocabulary.expansions(name)] for name in names}
        async with transaction(self.pool) as conn:
            known = await search_store.known_texts(
                conn, sorted({form for group in forms.values() for form in group})
            )
        return [name for name in names if not any(known.get(f, True) for f in forms[name])]

    def _rank(
        self,
        rows: Sequence[Memory],
        base_score: Callable[[Memory], float],
        use_prior: bool,
        query: str,
        *,
        similarity: dict[int, float] | None = None,
        keyword: dict[int, float] | None = None,
        fused: dict[int, float] | None = None,
    ) -> list[SearchHit]:
        """Hits ordered by score; a score map left out means that score is not reported.
        With the prior on, a question that asks why favours memories that give a reason."""
        prior = self.prior if use_prior else NO_PRIOR
        # Recency counts back from the newest candidate, not from the clock: against the
        # clock the order of the same memories for the same question drifted as time passed
        # (each memory's factor falls at its own pace), and two runs minutes apart could differ.
        now = max((m.created_at for m in rows), default=datetime.now(UTC))
        why = use_prior and asks_why(query)
        hits = [
            _hit(
                m,
                round(
                    base_score(m)
                    * prior.factor(
                        m.kind, m.created_at, now, asking=asks(m.kind, m.content, m.role)
                    )
                    * (REASON_WEIGHT if why and gives_reason(m.content) else 1.0),
                    6,
                ),
                similarity=_rounded(similarity.get(m.id)) if similarity is not None else None,
                keyword=_rounded(keyword.get(m.id, 0.0)) if keyword is not None else None,
                fused=_rounded(fused.get(m.id)) if fused is not None else None,
            )
            for m in rows
        ]
        # A project's own memory goes before general knowledge (no project) that ties with it;
        # then the newer, then by content, so ties are broken the same way whatever order
        # the memories were imported in (ids follow that order).
        hits.sort(key=_tie_order)
        return hits


def _tie_order(hit: SearchHit) -> tuple[float, bool, float, str, int]:
    """Best score first; at equal scores a project's own memory, the newer, then by content."""
    return (-hit.score, not hit.project, -hit.created_at.timestamp(), hit.content, -hit.id)


def _hit(
    m: Memory,
    score: float,
    *,
    similarity: float | None = None,
    keyword: float | None = None,
    fused: float | None = None,
) -> SearchHit:
    return SearchHit(
        id=m.id,
        content=m.content,
        kind=m.kind,
        tags=m.tags,
        source=m.source,
        project=m.project,
        project_path=m.project_path,
        session_id=m.session_id,
        created_at=m.created_at,
        similarity=similarity,
        keyword_score=keyword,
        fused_score=fused,
        score=score,
        supersedes=m.supersedes,
        superseded_by=m.superseded_by,
        owner=m.owner,
        role=m.role,
        visibility=m.visibility,
    )


def _in_period(hit: SearchHit, period: Period) -> SearchHit:
    """The hit with a note saying it is from the period the question names, if it is."""
    if not period.start <= hit.created_at < period.end:
        return hit
    last = period.end - timedelta(microseconds=1)
    when = period.label or f"from {period.start:%Y-%m-%d} to {last:%Y-%m-%d}"
    note = f"{when}, the time the question names"
    return replace(hit, time_note=note)


def _within(where: MemoryFilter, period: Period | None) -> MemoryFilter | None:
    """`where` narrowed to `period`; None when there is no period or nothing is left of it."""
    if period is None:
        return None
    since = max(period.start, where.since) if where.since else period.start
    before = min(period.end, where.before) if where.before else period.end
    if since >= before:
        return None
    return replace(where, since=since, before=before)


async def _at_once(*steps: Awaitable[T]) -> list[T]:
    """The steps' results, the steps run side by side. The first failure cancels the others
    and is raised as it is (a TaskGroup would wrap it in an ExceptionGroup, which the
    adapters' error mapping does not know)."""
    tasks = [asyncio.ensure_future(step) for step in steps]
    try:
        return list(await asyncio.gather(*tasks))
    finally:
        for task in tasks:
            _discard(task)


def _discard(task: asyncio.Future[Any]) -> None:
    """Cancel `task` if it still runs, or take its exception, so none is reported as lost."""
    if not task.done():
        task.cancel()
    elif not task.cancelled():
        task.exception()


def _candidate_count(limit: int) -> int:
    """Fetch more than asked so the ranking prior can reorder near the cut-off."""
    return min(limit * 3, 300)


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(float(value), 6)


def _result(mode: str, query: str, hits: list[SearchHit], started: float) -> SearchResult:
    took = (time.perf_counter() - started) * 1000.0
    return SearchResult(mode=mode, query=query, hits=hits, took_ms=round(took, 2))


def _same_fact(first: Memory, second: Memory, similarity: float) -> bool:
    """A duplicate pair, not two versions of a fact: neither supersedes the other, and the
    newer does not state a changed value of the older's fact ("Node 22" after "Node 20")."""
    if first.supersedes == second.id or second.supersedes == first.id:
        return False
    older, newer = sorted((first, second), key=lambda m: (m.created_at, m.id))
    return redundant_near_copy(newer.content, older.content, similarity, 0.0)


def _linked(hits: Sequence[SearchHit]) -> bool:
    return any(h.supersedes or h.superseded_by for h in hits)
