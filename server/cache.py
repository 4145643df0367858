"""A TTL read cache that every write clears.

A generation counter closes the race between a slow read and a write: a read that started
before the latest invalidation does not put its (possibly stale) answer in the cache.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable
from typing import Any, TypeVar

from cachetools import TTLCache

from server.models import CacheStats

T = TypeVar("T")


class ReadCache:
    def __init__(self, max_size: int, ttl_seconds: float) -> None:
        self._max_size = max_size
        self._ttl = ttl_seconds
        self._entries: TTLCache[Hashable, Any] | None = (
            TTLCache(maxsize=max_size, ttl=ttl_seconds)
            if max_size > 0 and ttl_seconds > 0
            else None
        )
        self._generation = 0
        self.hits = 0
        self.misses = 0

    async def get_or_load(self, key: Hashable, load: Callable[[], Awaitable[T]]) -> T:
        """The cached value for `key`, or `load()`'s result, cached if no write intervened."""
        if self._entries is None:
            return await load()
        try:
            value: T = self._entries[key]
        except KeyError:
            pass
        else:
            self.hits += 1
            return value
        self.misses += 1
        generation = self._generation
        value = await load()
        if generation == self._generation:
            self._entries[key] = value
        return value

    def invalidate(self) -> None:
        """Forget everything; called after every write, from any path."""
        self._generation += 1
        if self._entries is not None:
            self._entries.clear()

    def stats(self) -> CacheStats:
        return CacheStats(
            size=len(self._entries) if self._entries is not None else 0,
            max_size=self._max_size,
            ttl_seconds=self._ttl,
            hits=self.hits,
            misses=self.misses,
        )
