"""Hybrid search runs its keyword and semantic legs side by side, each on a pooled connection:
many more concurrent searches than connections (even a pool of one) must all finish, with the
same answers as when run one at a time."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest
from cachetools import TTLCache

from server.core.config import Settings
from server.core.models.memories import MemoryFilter
from server.db.pool import open_pool
from server.service.embeddings import Embedder
from server.service.memory import MemoryService
from tests.bulk_memories import bulk_insert, filler

pytestmark = pytest.mark.reliability

QUERIES = [
    "worker queue retry backoff",
    "billing invoice customer report",
    "schema migration index query",
    "deploy release branch review",
    "session token route handler",
    "cache timeout connection pool",
]


async def test_more_hybrid_searches_than_connections_all_finish(
    service: MemoryService, pg_url: str, embedder: Embedder, settings: Settings
) -> None:
    await bulk_insert(service, filler(300, seed=7))
    await bulk_insert(service, filler(40, seed=8), project="narrow")
    searches = [
        (query, where)
        for query in QUERIES
        for where in (MemoryFilter(), MemoryFilter(project="narrow"))
    ] * 4  # 48 searches against 1 connection
    expected = {
        (query, where.project): [
            hit.id for hit in (await service.search_hybrid(query, limit=10, where=where)).hits
        ]
        for query, where in searches[: len(QUERIES) * 2]
    }

    small_pool = await open_pool(pg_url, min_size=1, max_size=1)
    try:
        small = MemoryService(small_pool, embedder, replace(settings, cache_max_size=0))
        results = await asyncio.wait_for(
            asyncio.gather(
                *(small.search_hybrid(query, limit=10, where=where) for query, where in searches)
            ),
            timeout=120,
        )
    finally:
        await small_pool.close()

    for (query, where), result in zip(searches, results, strict=True):
        assert [hit.id for hit in result.hits] == expected[(query, where.project)]
        assert len(result.hits) == 10


async def test_keyword_statistics_refreshed_under_concurrent_searches_never_fail(
    service: MemoryService, settings: Settings
) -> None:
    """The corpus statistics expire every few minutes; searches running while they are being
    read again (or expire between two reads) once failed with KeyError 'average_terms' under
    two servers' load (bench/replicas.py). Here they expire every few milliseconds."""
    await bulk_insert(service, filler(200, seed=11))
    fresh = MemoryService(service.pool, service.embedder, replace(settings, cache_max_size=0))
    fresh.searcher._statistics = TTLCache(maxsize=1, ttl=0.002)
    expected = [h.id for h in (await fresh.search_keyword(QUERIES[0], limit=10)).hits]

    results = await asyncio.wait_for(
        asyncio.gather(*(fresh.search_keyword(q, limit=10) for q in QUERIES * 25)), timeout=120
    )

    assert len(results) == len(QUERIES) * 25
    assert [h.id for h in results[0].hits] == expected
