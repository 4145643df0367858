"""ReadCache: entries belong to one database state; a new state (a commit anywhere) drops them."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from server.service.cache import ReadCache


class States:
    """The database's committed state as the cache sees it: set by the test."""

    def __init__(self) -> None:
        self.current = "s1"
        self.asked = 0

    async def __call__(self) -> str:
        self.asked += 1
        return self.current


def counting_load(values: list[int]) -> tuple[list[int], Callable[[], Awaitable[int]]]:
    calls: list[int] = []

    async def load() -> int:
        calls.append(1)
        return values[len(calls) - 1]

    return calls, load


async def test_second_read_in_the_same_state_is_a_hit() -> None:
    cache = ReadCache(max_size=10, ttl_seconds=60, state=States())
    calls, load = counting_load([42, 43])

    assert await cache.get_or_load("k", load) == 42
    assert await cache.get_or_load("k", load) == 42
    assert (len(calls), cache.stats().hits, cache.stats().misses) == (1, 1, 1)


async def test_a_new_state_drops_every_entry() -> None:
    states = States()
    cache = ReadCache(max_size=10, ttl_seconds=60, state=states)
    _, load_k = counting_load([1, 2])
    _, load_other = counting_load([10, 20])
    await cache.get_or_load("k", load_k)
    await cache.get_or_load("other", load_other)

    states.current = "s2"

    assert await cache.get_or_load("k", load_k) == 2
    assert cache.stats().size == 1


async def test_invalidate_forgets_everything() -> None:
    cache = ReadCache(max_size=10, ttl_seconds=60, state=States())
    _, load = counting_load([1, 2])
    await cache.get_or_load("k", load)

    cache.invalidate()

    assert await cache.get_or_load("k", load) == 2


async def test_a_load_that_raced_a_commit_is_not_cached() -> None:
    states = States()
    cache = ReadCache(max_size=10, ttl_seconds=60, state=states)
    release = asyncio.Event()

    async def slow_stale_load() -> str:
        await release.wait()
        return "stale"

    async def fresh_load() -> str:
        return "fresh"

    reader = asyncio.create_task(cache.get_or_load("k", slow_stale_load))
    await asyncio.sleep(0)
    states.current = "s2"
    assert await cache.get_or_load("k", fresh_load) == "fresh"
    release.set()
    assert await reader == "stale"

    assert await cache.get_or_load("k", slow_stale_load) == "fresh"


async def test_zero_size_disables_caching_and_never_asks_for_the_state() -> None:
    states = States()
    cache = ReadCache(max_size=0, ttl_seconds=60, state=states)
    calls, load = counting_load([1, 2])

    await cache.get_or_load("k", load)
    await cache.get_or_load("k", load)

    assert len(calls) == 2
    assert (cache.stats().size, states.asked) == (0, 0)
