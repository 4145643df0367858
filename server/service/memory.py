"""MemoryService: the one API that MCP tools, REST routes and batch jobs call.

Each method validates its input, redacts secrets, embeds off the event loop, runs one
transaction of store calls, and returns a dataclass. The write guard and redaction live here
and in the mixins it is made of (server/service/writes.py, service/bulk_writes.py,
service/learning.py, service/views.py) and nowhere else. Reads go through a cache keyed by the
database's committed state (server/service/cache.py), so a write needs no step to be seen, by this
process or any other.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from typing import Any

from server.core.access import current_viewer
from server.core.config import Settings
from server.core.errors import EmbeddingUnavailable, InvalidInput, NotFound, StartupError
from server.core.models.memories import (
    EXPORT_FORMATS,
    DuplicatePair,
    Memory,
    MemoryFilter,
    MemoryPage,
    MemoryVersion,
    ProjectSummary,
    RelatedMemory,
    TagCount,
)
from server.core.models.receipts import ReceiptFilter
from server.core.models.search import PromptFacts, PromptRead, RecallEvidence, SearchResult
from server.core.models.stats import Stats
from server.core.models.views import (
    MemoryCheck,
    Preference,
    PreferenceTiers,
    RecentContext,
    StartupContext,
)
from server.core.validation import (
    MAX_PAGE,
    blank_to_none,
    check_filter,
    check_id,
    check_limit,
    check_page,
)
from server.domain import export
from server.domain.context import MAX_CONTEXT_CHARS, startup_markdown
from server.domain.project_rule import placed_projects
from server.domain.query_dates import without_dates
from server.domain.vocabulary import VocabularyError, load_vocabulary
from server.service.adapted_models import carried_cutoffs
from server.service.bulk_writes import BulkWrites
from server.service.cache import ReadCache
from server.service.cutoffs import cutoffs_for
from server.service.embeddings import Embedder
from server.service.journal import ToolJournal
from server.service.learning import LearningSteps
from server.service.leases import JobLeases
from server.service.lessons import LessonProposals, Lessons
from server.service.projects import ProjectRule
from server.service.promotions import Promotions
from server.service.receipts import Receipts
from server.service.rerank import Reranker, Reranking
from server.service.search import Searcher
from server.service.supersessions import memory_versions
from server.service.users import UserDirectory
from server.service.uses import Uses
from server.service.vector_backfill import WaitingVectors
from server.service.views import Views
from server.service.writes import Writes
from server.store import memories as memory_store
from server.store import project_folders as folder_store
from server.store import receipts as receipt_store
from server.store import stats as stats_store
from server.store.tx import Pool, committed_state, one_read, ping, transaction

logger = logging.getLogger(__name__)

EXPORT_PAGE_ROWS = 500


class MemoryService(
    Writes, BulkWrites, Views, ToolJournal, Lessons, Receipts, Uses, Promotions, ProjectRule
):
    """The product's verbs over one pool, one embedder and one read cache.

    What the adapters call (server/service/face.py) is this class and its mixins, all sharing
    this object's pool, embedder, settings and cache; which file holds each method is the
    table in server/service/__init__.py. The jobs' own steps are composed parts instead,
    reached by name: `learning` (distill, signals, behaviour), `lesson_proposals`, `leases`
    (who runs which job item), `vectors` (memories waiting for their vectors) and `users`.
    """

    def __init__(
        self,
        pool: Pool,
        embedder: Embedder,
        settings: Settings,
        *,
        reranker: Reranker | None = None,
    ) -> None:
        self.pool = pool
        self.embedder = embedder
        self.settings = settings
        self.cache = ReadCache(
            settings.cache_max_size, settings.cache_ttl_seconds, self._committed_state
        )
        try:
            vocabulary = load_vocabulary(settings.search_vocabulary_file)
        except VocabularyError as exc:
            raise StartupError(f"CLAUDE_MEMORY_SEARCH_VOCABULARY_FILE: {exc}") from None
        self.searcher = Searcher(pool, embedder, settings.ranking_prior, vocabulary)
        self.reranking = Reranking.from_settings(settings, reranker)
        self.cutoffs = cutoffs_for(
            embedder.name, carried_cutoffs(settings.claude_memory_home, embedder.name)
        )
        self.users = UserDirectory(pool, settings.default_visibility)
        self.learning = LearningSteps(pool, embedder, settings)
        self.lesson_proposals = LessonProposals(pool)
        self.leases = JobLeases(pool)
        self.vectors = WaitingVectors(pool, embedder)

    # ----- search -------------------------------------------------------------------------

    async def search_semantic(
        self,
        query: str,
        *,
        limit: int = 10,
        min_similarity: float | None = None,
        where: MemoryFilter | None = None,
        use_prior: bool = True,
    ) -> SearchResult:
        """Memories closest in meaning to `query`, at or above `min_similarity` (by default
        the cut-off measured for the embedding model, server/service/cutoffs.py)."""
        checked = check_filter(await self._scoped(where or MemoryFilter()))
        if min_similarity is None:
            min_similarity = self.cutoffs.semantic
        return await self.cache.get_or_load(
            ("semantic", query, limit, min_similarity, checked, use_prior),
            lambda: self.searcher.semantic(
                query, checked, limit=limit, min_similarity=min_similarity, use_prior=use_prior
            ),
        )

    async def search_keyword(
        self,
        query: str,
        *,
        limit: int = 10,
        where: MemoryFilter | None = None,
        use_prior: bool = True,
    ) -> SearchResult:
        """Memories containing the query's words or exact identifiers, most relevant first."""
        checked = check_filter(await self._scoped(where or MemoryFilter()))
        return await self._keyword(query, checked, limit=limit, use_prior=use_prior)

    async def _keyword(
        self, query: str, checked: MemoryFilter, *, limit: int, use_prior: bool
    ) -> SearchResult:
        """`search_keyword` within a filter already checked, its project resolved."""
        return await self.cache.get_or_load(
            ("keyword", query, limit, checked, use_prior),
            lambda: self.searcher.keyword(query, checked, limit=limit, use_prior=use_prior),
        )

    async def recall_evidence(
        self, query: str, memory_ids: Sequence[int], project: str | None = None
    ) -> RecallEvidence:
        """Prompt recall's evidence on its candidates (use factors and word shares) and, with
        the prompt's `project`, where its words (but its date phrases) are held best, read in
        one transaction."""
        if not memory_ids:
            return RecallEvidence({}, {})
        async with transaction(self.pool) as conn:
            factors = await self._use_factors(conn, memory_ids)
            words = await self.searcher.share_weights(conn, query)
            shares = await self.searcher.term_shares_in(conn, words, memory_ids)
            here, elsewhere = 0.0, 0.0
            # When a prompt asks about ("early March") says nothing of which project it is.
            undated = without_dates(query)
            if project and undated.strip():
                if undated != query:
                    words = await self.searcher.share_weights(conn, undated)
                here, elsewhere = await self.searcher.shares_here_and_elsewhere(
                    conn, words, project
                )
        return RecallEvidence(factors, shares, here, elsewhere)

    async def prompt_recall(self, read: PromptRead) -> PromptFacts:
        """Everything prompt recall reads for one prompt, in one read-only transaction
        (server/store/tx.py `one_read`): the project of the session's folder, found once and
        handed on (`project_at_folder`); the names the prompt gives that no memory holds; the
        hybrid search in that project and general knowledge, down to the floor those names
        set, for a hook (its reranker settings); the evidence on its hits (`recall_evidence`,
        and the statement of each nearest the prompt, by the vector the search computed);
        and what the session's budget has spent (`injected_tokens`: 0, logged, when that one
        read fails, so a receipt never costs the user their recall)."""
        async with one_read(self.pool):
            project = await self.project_at_folder(read.folder)
            unknown = await self.unknown_names(read.query)
            result = await self._hybrid(
                read.query,
                check_filter(MemoryFilter(project=project, with_general=True)),
                limit=read.limit,
                min_similarity=read.floor_unknown if unknown else read.floor,
                hook=True,
            )
            ids = [hit.id for hit in result.hits]
            evidence = await self.recall_evidence(read.query, ids, project)
            async with transaction(self.pool) as conn:
                nearest = await self.searcher.nearest_statements(conn, read.query, ids)
            spent = await self.injected_tokens(read.session_id)
        return PromptFacts(project, unknown, result, replace(evidence, statements=nearest), spent)

    async def unknown_names(self, text: str) -> list[str]:
        """The names (tools, services, identifiers) `text` mentions that no memory holds."""
        return await self.searcher.unknown_names(text)

    async def search_hybrid(
        self,
        query: str,
        *,
        limit: int = 10,
        keyword_weight: float = 0.5,
        semantic_weight: float = 0.5,
        min_similarity: float = 0.0,
        where: MemoryFilter | None = None,
        use_prior: bool = True,
        hook: bool = False,
    ) -> SearchResult:
        """Semantic and keyword results fused by score (server/core/ranking.score_fusion),
        the first ones reordered by the configured reranker (server/service/rerank.py; for a
        hook only when CLAUDE_MEMORY_RERANK_HOOKS is on, within its shorter time limit).

        While the embeddings endpoint is down the keyword results alone are returned (the
        prompt recall hook and agents keep finding exact words); semantic search says why
        it cannot answer.
        """
        checked = check_filter(await self._scoped(where or MemoryFilter()))
        return await self._hybrid(
            query,
            checked,
            limit=limit,
            keyword_weight=keyword_weight,
            semantic_weight=semantic_weight,
            min_similarity=min_similarity,
            use_prior=use_prior,
            hook=hook,
        )

    async def _hybrid(
        self,
        query: str,
        checked: MemoryFilter,
        *,
        limit: int,
        keyword_weight: float = 0.5,
        semantic_weight: float = 0.5,
        min_similarity: float = 0.0,
        use_prior: bool = True,
        hook: bool = False,
    ) -> SearchResult:
        """`search_hybrid` within a filter already checked, its project resolved."""
        fetch = self.reranking.candidates(limit, hook=hook)
        key = ("hybrid", query, fetch, keyword_weight, semantic_weight, min_similarity, checked)
        try:
            fused = await self.cache.get_or_load(
                (*key, use_prior),
                lambda: self.searcher.hybrid(
                    query,
                    checked,
                    limit=fetch,
                    keyword_weight=keyword_weight,
                    semantic_weight=semantic_weight,
                    min_similarity=min_similarity,
                    use_prior=use_prior,
                ),
            )
        except EmbeddingUnavailable as exc:
            logger.warning("hybrid search answered by keywords alone: %s", exc.message)
            return await self._keyword(query, checked, limit=limit, use_prior=use_prior)
        return await self.reranking.reorder(fused, limit=limit, hook=hook)

    async def related(self, memory_id: int, *, limit: int = 3) -> list[RelatedMemory]:
        """Live memories nearest to this one's stored vector."""
        check_id(memory_id)
        return await self.cache.get_or_load(
            ("related", memory_id, limit), lambda: self.searcher.related(memory_id, limit)
        )

    async def versions(self, memory_id: int) -> list[MemoryVersion]:
        """The chain of versions a memory belongs to, oldest first (just itself if none)."""
        check_id(memory_id)
        return await self.cache.get_or_load(
            ("versions", memory_id), lambda: memory_versions(self.pool, memory_id)
        )

    async def find_duplicates(
        self,
        *,
        threshold: float | None = None,
        limit: int = 20,
        project: str | None = None,
        scan_limit: int = 500,
    ) -> list[DuplicatePair]:
        """Near-duplicate pairs among the `scan_limit` newest memories, most similar first
        (by default at the cut-off measured for the embedding model, server/service/cutoffs.py)."""
        if threshold is None:
            threshold = self.cutoffs.duplicates
        project = await self.resolve_project(project)
        return await self.cache.get_or_load(
            ("duplicates", threshold, limit, project, scan_limit),
            lambda: self.searcher.duplicates(
                threshold=threshold,
                limit=limit,
                project=project,
                scan_limit=scan_limit,
            ),
        )

    # ----- reads --------------------------------------------------------------------------

    async def list_memories(
        self, where: MemoryFilter | None = None, *, limit: int = 20, offset: int = 0
    ) -> MemoryPage:
        """A page of memories, newest first, with the total that match the filter."""
        where = check_filter(await self._scoped(where or MemoryFilter()))
        check_page(limit, offset, MAX_PAGE)

        async def load() -> MemoryPage:
            async with transaction(self.pool) as conn:
                total = await memory_store.count(conn, where)
                rows = await memory_store.list_page(conn, where, limit, offset)
            return MemoryPage(total=total, limit=limit, offset=offset, memories=rows)

        return await self.cache.get_or_load(("list", where, limit, offset), load)

    async def tags(self) -> list[TagCount]:
        """Tags of live memories with how often each is used."""

        async def load() -> list[TagCount]:
            async with transaction(self.pool) as conn:
                return await memory_store.tag_counts(conn)

        return await self.cache.get_or_load(("tags",), load)

    async def vectors_waiting(self) -> int:
        """How many memories have no vector yet (saved while the embedder was down)."""
        return await self.vectors.count()

    async def reset_distill_failures(self, session: str | None = None) -> int:
        """Give failed sessions (one, or all) a fresh start; returns how many changed."""
        return await self.learning.reset_distill_failures(session)

    async def stats(self) -> Stats:
        """Counts by project, source and kind; deleted rows; sizes on disk; sessions; cache."""

        async def load() -> Stats:
            async with transaction(self.pool) as conn:
                active, deleted = await stats_store.totals(conn)
                grouped = await stats_store.live_counts_by(conn)
                sizes = await (
                    stats_store.storage_sizes(conn)
                    if current_viewer() is None
                    else stats_store.visible_storage_sizes(conn)
                )
                sessions = await stats_store.session_counts(conn)
                context = await receipt_store.totals(conn, ReceiptFilter())
            return Stats(
                total=active + deleted,
                active=active,
                deleted=deleted,
                by_project=grouped["project"],
                by_source=grouped["source"],
                by_kind=grouped["kind"],
                storage=sizes,
                sessions=sessions,
                cache=self.cache.stats(),
                embedding_model=self.embedder.name,
                embedding_dimension=self.embedder.dimension,
                embedding_provider=self.embedder.provider,
                vectors_waiting=await self.vectors_waiting(),
                context=context,
            )

        cached = await self.cache.get_or_load(("stats",), load)
        # Cache figures are live, not a snapshot from when the stats were cached.
        return Stats(**{**_fields(cached), "cache": self.cache.stats()})

    async def export(
        self, where: MemoryFilter | None = None, output_format: str = "json"
    ) -> AsyncIterator[str]:
        """The matching memories as JSON, JSON Lines or Markdown, in chunks of any total size."""
        where = check_filter(await self._scoped(where or MemoryFilter()))
        if output_format not in EXPORT_FORMATS:
            raise InvalidInput(
                f"output_format must be one of {', '.join(EXPORT_FORMATS)}, got {output_format!r}"
            )
        return self._export_chunks(where, output_format)

    async def _export_chunks(self, where: MemoryFilter, output_format: str) -> AsyncIterator[str]:
        writer = export.writer_for(output_format)
        yield writer.start()
        after_id = 0
        first = True
        while True:
            async with transaction(self.pool) as conn:
                rows = await memory_store.list_after(conn, where, after_id, EXPORT_PAGE_ROWS)
            if not rows:
                break
            for memory in rows:
                yield writer.item(memory, first=first)
                first = False
            after_id = rows[-1].id
        yield writer.end()

    # ----- context for agents --------------------------------------------------------------

    async def projects(self) -> list[ProjectSummary]:
        """Projects with live memories, most recently active first; once per folder, a
        project's memories saved without a folder counted with its folder's."""

        async def load() -> list[ProjectSummary]:
            async with transaction(self.pool) as conn:
                summaries = await memory_store.project_summaries(conn)
                claimed = await folder_store.folders(conn)
            return placed_projects(summaries, claimed)

        return await self.cache.get_or_load(("projects",), load)

    async def recent_context(
        self, project: str | None = None, limit: int = 10, *, source: str | None = None
    ) -> RecentContext:
        """Newest distilled memories of a project, or the newest of any kind if none exist;
        from every agent unless `source` names one."""
        check_limit(limit)
        resolved = await self.resolve_project(project)
        where = MemoryFilter(project=resolved, source=blank_to_none(source))
        return await self._recent(where, limit)

    async def _recent(self, where: MemoryFilter, limit: int) -> RecentContext:
        """`recent_context` of a filter whose project is resolved."""
        distilled = await self.list_memories(replace(where, kind="distilled"), limit=limit)
        if distilled.memories:
            return RecentContext("distilled", where.project, distilled.memories)
        recent = await self.list_memories(where, limit=limit)
        return RecentContext("recent", where.project, recent.memories)

    async def startup_context(
        self,
        project: str | None = None,
        *,
        source: str | None = None,
        vet: MemoryCheck | None = None,
        max_chars: int | None = None,
    ) -> StartupContext:
        """What an agent should know at session start, as Markdown of at most 4,000 chars.

        A project with no memories yet (a first session in a new repository) gets the
        general context, with a line saying so, rather than an error: the memories of no
        project (the user's general preferences and notes), never another project's rules or
        recent work, which would be wrong there. Recent work comes from
        every agent; `source` narrows it to one (preferences are the user's, from anywhere).
        `vet` checks what would be shown against the working tree (the session-start hook's
        folder): a memory it leaves out is not shown, one it notes carries the note.
        `max_chars` (the hooks' token budget) lowers the 4,000 characters.
        """
        try:
            resolved = await self.resolve_project(project)
        except NotFound:
            resolved = None
        requested = blank_to_none(project)
        general_only = requested is not None and resolved is None
        tiers = await self._preference_tiers(resolved, general_only=general_only)
        recent = await self._recent(
            MemoryFilter(project=resolved, general_only=general_only, source=blank_to_none(source)),
            limit=8,
        )
        total = (await self.list_memories(limit=1)).total
        in_project = (
            (await self.list_memories(MemoryFilter(project=resolved), limit=1)).total
            if resolved
            else total
        )
        notes = []
        if general_only:
            notes.append(
                f"No memories for project {requested!r} yet: shown are only those of no"
                " project (your general preferences and notes), none of another project's."
            )
        if blank_to_none(source):
            notes.append(f"Recent work from {source} only.")
        note = " ".join(notes) or None
        recent_memories = list(recent.memories)
        drift: dict[int, str] = {}
        if vet is not None:
            tiers, recent_memories, drift = await _vetted(vet, tiers, recent_memories)
        limit = MAX_CONTEXT_CHARS if max_chars is None else min(max_chars, MAX_CONTEXT_CHARS)
        viewer = current_viewer()
        markdown = startup_markdown(
            resolved,
            tiers,
            recent_memories,
            in_project,
            total,
            note=note,
            limit=limit,
            drift=drift,
            viewer=viewer.name if viewer else None,
        )
        shown = [
            p for p in (*tiers.explicit, *tiers.signals, *tiers.inferred) if p.superseded_by is None
        ]
        return StartupContext(
            project=resolved,
            markdown=markdown,
            preferences=len(shown),
            patterns=sum(1 for p in shown if p.memory.kind == "pattern"),
            recent=len(recent_memories),
            project_memories=in_project,
            total_memories=total,
        )

    async def database_ok(self) -> bool:
        """Whether the database answers right now (for /health; never raises)."""
        return await ping(self.pool)

    def invalidate_cache(self) -> None:
        """Drop cached reads now. Not needed after a write anywhere (the cache sees commits
        itself); POST /cache/invalidate keeps calling it for scripts written for older versions."""
        self.cache.invalidate()

    async def _committed_state(self) -> str:
        async with transaction(self.pool) as conn:
            return await committed_state(conn)


def _fields(stats: Stats) -> dict[str, Any]:
    return {name: getattr(stats, name) for name in stats.__dataclass_fields__}


async def _vetted(
    vet: MemoryCheck, tiers: PreferenceTiers, recent: list[Memory]
) -> tuple[PreferenceTiers, list[Memory], dict[int, str]]:
    """The startup context's preferences and recent work as `vet` leaves them, in one check."""
    preferences = [p.memory for p in (*tiers.explicit, *tiers.signals, *tiers.inferred)]
    kept, drift = await vet([*preferences, *recent])
    kept_ids = {m.id for m in kept}
    order = {m.id: place for place, m in enumerate(kept)}

    def keep(tier: Sequence[Preference]) -> list[Preference]:
        return [p for p in tier if p.memory.id in kept_ids]

    vetted = replace(
        tiers,
        explicit=keep(tiers.explicit),
        signals=keep(tiers.signals),
        inferred=keep(tiers.inferred),
    )
    recent_kept = sorted((m for m in recent if m.id in kept_ids), key=lambda m: order[m.id])
    return vetted, recent_kept, drift
