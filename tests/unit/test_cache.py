"""ReadCache: hits, invalidation, and no stale fill after a write raced a read."""

from __future__ import annotations

import asyncio

from server.cache import ReadCache


async def test_second_read_is_a_hit() -> None:
    cache = ReadCache(max_size=10, ttl_seconds=60)
    calls = []

    async def load() -> int:
        calls.append(1)
        return 42

    assert await cache.get_or_load("k", load) == 42
    assert await cache.get_or_load("k", load) == 42
    assert (len(calls), cache.hits, cache.misses) == (1, 1, 1)


async def test_invalidate_forgets_everything() -> None:
    cache = ReadCache(max_size=10, ttl_seconds=60)
    values = iter([1, 2])

    async def load() -> int:
        return next(values)

    await cache.get_or_load("k", load)
    cache.invalidate()

    assert await cache.get_or_load("k", load) == 2


async def test_read_that_raced_a_write_is_not_cached() -> None:
    cache = ReadCache(max_size=10, ttl_seconds=60)
    release = asyncio.Event()

    async def slow_stale_load() -> str:
        await release.wait()
        return "stale"

    reader = asyncio.create_task(cache.get_or_load("k", slow_stale_load))
    await asyncio.sleep(0)
    cache.invalidate()
    release.set()
    assert await reader == "stale"

    async def fresh_load() -> str:
        return "fresh"

    assert await cache.get_or_load("k", fresh_load) == "fresh"


async def test_zero_size_disables_caching() -> None:
    cache = ReadCache(max_size=0, ttl_seconds=60)
    calls = []

    async def load() -> int:
        calls.append(1)
        return 1

    await cache.get_or_load("k", load)
    await cache.get_or_load("k", load)

    assert len(calls) == 2
    assert cache.stats().size == 0
