"""A read cache that cannot serve a read older than the last commit, from any process.

Every entry belongs to one *database state*: the text of `pg_current_snapshot()`, which
names the transactions committed so far and changes with every commit, by this process or
any other (another `serve`, `mcp-stdio`, a batch job, psql). Each read asks the database for
its state first (one short query); when the state differs from the one the entries were
loaded in, they are all dropped. A load stores its answer only if the state it started in is
still the current one, so a slow read that raced a commit never fills the cache with what it
saw before. docs/ARCHITECTURE.md ("Reads from several processes") says why this and not
LISTEN/NOTIFY.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable
from typing import Any, TypeVar

from cachetools import TTLCache

from server.core.access import viewer_key
from server.core.models.stats import CacheStats

T = TypeVar("T")

DatabaseState = Callable[[], Awaitable[str]]


class ReadCache:
    def __init__(self, max_size: int, ttl_seconds: float, state: DatabaseState) -> None:
        self._max_size = max_size
        self._ttl = ttl_seconds
        self._state = state
        self._entries: TTLCache[tuple[int, Hashable], Any] | None = (
            TTLCache(maxsize=max_size, ttl=ttl_seconds)
            if max_size > 0 and ttl_seconds > 0
            else None
        )
        self._loaded_in: str | None = None
        # Hits and misses per user (viewer_key), so one user's figures say nothing of another's
        # activity; key 0 is single-user mode and the command line.
        self._hits: dict[int, int] = {}
        self._misses: dict[int, int] = {}

    async def get_or_load(self, key: Hashable, load: Callable[[], Awaitable[T]]) -> T:
        """The cached value for `key` if nothing was committed since it was loaded, else
        `load()`'s result (cached when no newer state was seen while it ran)."""
        if self._entries is None:
            return await load()
        viewer = viewer_key()
        entry = (viewer, key)  # one user's reads are never served to another
        state = await self._state()
        if state != self._loaded_in:
            self._entries.clear()
            self._loaded_in = state
        try:
            value: T = self._entries[entry]
        except KeyError:
            pass
        else:
            self._hits[viewer] = self._hits.get(viewer, 0) + 1
            return value
        self._misses[viewer] = self._misses.get(viewer, 0) + 1
        value = await load()
        if state == self._loaded_in:
            self._entries[entry] = value
        return value

    def invalidate(self) -> None:
        """Forget everything now (POST /cache/invalidate); commits need no call."""
        self._loaded_in = None
        if self._entries is not None:
            self._entries.clear()

    def stats(self) -> CacheStats:
        """The asking user's entries, hits and misses (everyone's share one max_size)."""
        viewer = viewer_key()
        entries = list(self._entries.keys()) if self._entries is not None else []
        return CacheStats(
            size=sum(1 for owner, _ in entries if owner == viewer),
            max_size=self._max_size,
            ttl_seconds=self._ttl,
            hits=self._hits.get(viewer, 0),
            misses=self._misses.get(viewer, 0),
        )
