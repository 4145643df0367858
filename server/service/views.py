"""Read-only views for the web UI and scripts: a memory's anchors, timeline, imported sessions,
preferences.

A mixin of MemoryService (server/service/memory.py); every view goes through the read cache, which
serves nothing older than the last commit (server/service/cache.py).
"""

from __future__ import annotations

from datetime import UTC, datetime

import anyio

from server.core.config import Settings
from server.core.errors import InvalidInput
from server.core.models.memories import Memory, MemoryFilter
from server.core.models.sessions import SessionPage
from server.core.models.views import PreferenceTiers, Timeline
from server.core.validation import MAX_PAGE, blank_to_none, check_filter, check_page
from server.domain.anchors import Anchor, anchors_of
from server.domain.preferences import build_tiers, same_subject_pairs
from server.service.cache import ReadCache
from server.service.projects import ProjectRule
from server.store import anchors as anchor_store
from server.store import memories as memory_store
from server.store import search as search_store
from server.store import sessions as session_store
from server.store import timeline as timeline_store
from server.store.tx import Pool, transaction

MAX_TIMELINE_POINTS = 5_000
MAX_TIMELINE_DAYS = 5_000
PREFERENCES_PER_TIER = 100
PREFERENCE_ROWS = 1_000


class Views(ProjectRule):
    """`anchors`, `timeline`, `sessions` and `preferences`, for MemoryService."""

    pool: Pool
    cache: ReadCache
    settings: Settings

    async def anchors(self, memory: Memory) -> list[Anchor]:
        """What `memory` names of the code, as stored with it (server/store/anchors.py); found
        in its text when it was written before anchors were stored and is not indexed yet;
        nothing for a memory the reader may not see."""
        async with transaction(self.pool) as conn:
            stored = await anchor_store.stored_anchors(conn, [memory.id])
        if memory.id not in stored:
            return []  # not the reader's to see
        anchors = stored[memory.id]
        return anchor_store.storable(anchors_of(memory.content)) if anchors is None else anchors

    async def timeline(self, where: MemoryFilter | None = None, *, limit: int = 2_000) -> Timeline:
        """The newest `limit` matching memories as points, and per-day counts per project.

        Counts cover every match (up to 5,000 day-project rows, newest days kept), so a chart
        stays right when the points are cut off; `truncated` says whether they were.
        """
        where = check_filter(await self._scoped(where or MemoryFilter()))
        if not 1 <= limit <= MAX_TIMELINE_POINTS:
            raise InvalidInput(f"limit must be between 1 and {MAX_TIMELINE_POINTS}, got {limit}")

        async def load() -> Timeline:
            async with transaction(self.pool) as conn:
                total = await memory_store.count(conn, where)
                points = await timeline_store.points(conn, where, limit)
                days = await timeline_store.day_counts(conn, where, MAX_TIMELINE_DAYS)
            return Timeline(total=total, truncated=total > len(points), points=points, days=days)

        return await self.cache.get_or_load(("timeline", where, limit), load)

    async def sessions(
        self,
        *,
        project: str | None = None,
        source: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> SessionPage:
        """Imported sessions, most recently active first, with import and learning state;
        `by_source` counts every agent's sessions whatever `source` picks, for a filter."""
        check_page(limit, offset, MAX_PAGE)
        project, source = await self.resolve_project(project), blank_to_none(source)

        async def load() -> SessionPage:
            async with transaction(self.pool) as conn:
                by_source = await session_store.counts_by_source(conn, project)
                rows = await session_store.list_page(conn, project, source, limit, offset)
            total = by_source.get(source, 0) if source else sum(by_source.values())
            return SessionPage(
                total=total, limit=limit, offset=offset, sessions=rows, by_source=by_source
            )

        return await self.cache.get_or_load(("sessions", project, source, limit, offset), load)

    async def preferences(self, project: str | None = None) -> PreferenceTiers:
        """Learned preferences in three tiers, with confidence and evidence (100 per tier).

        With a project, its own preferences and the general ones (stored without a project).
        """
        return await self._preference_tiers(await self.resolve_project(project))

    async def _preference_tiers(
        self, project: str | None, *, general_only: bool = False
    ) -> PreferenceTiers:
        """`preferences` of a resolved project, or of no project at all when `general_only`."""

        async def load() -> PreferenceTiers:
            async with transaction(self.pool) as conn:
                rows = await memory_store.learned_preferences(
                    conn, project, PREFERENCE_ROWS, general_only=general_only
                )
                vectors = await search_store.project_vectors(conn, [m.id for m in rows])
            # Up to PREFERENCE_ROWS compared with each other: off the event loop.
            pairs = await anyio.to_thread.run_sync(
                same_subject_pairs, vectors, self.settings.guard_update_threshold
            )
            return build_tiers(rows, pairs, datetime.now(tz=UTC), PREFERENCES_PER_TIER)

        return await self.cache.get_or_load(("preferences", project, general_only), load)
