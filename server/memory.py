"""MemoryService: the one API that MCP tools, REST routes and batch jobs call.

Each method validates its input, redacts secrets, embeds off the event loop, runs one
transaction of store calls, clears the read cache after a write, and returns a dataclass.
The write guard, redaction and cache invalidation live here and nowhere else.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from datetime import datetime
from typing import Any

from server import export
from server.bulk_writes import BulkWrites
from server.cache import ReadCache
from server.config import Settings
from server.context import startup_markdown
from server.embeddings import Embedder
from server.errors import Conflict, InvalidInput, NotFound
from server.learning import Learning
from server.models import (
    EXPORT_FORMATS,
    BulkDeleteResult,
    CheckResult,
    DocumentVectors,
    DuplicatePair,
    Memory,
    MemoryDraft,
    MemoryFilter,
    MemoryPage,
    ProjectSummary,
    RecentContext,
    RelatedMemory,
    SaveOutcome,
    SearchResult,
    SimilarMemory,
    StartupContext,
    Stats,
    TagCount,
    UpdateOutcome,
    preview,
    similar_memory,
)
from server.search import Searcher
from server.store import memories as memory_store
from server.store import search as search_store
from server.store import stats as stats_store
from server.store.tx import Pool, ping, transaction
from server.turn_context import place_of_new, turn_place, with_turn_context
from server.validation import (
    PreparedContent,
    blank_to_none,
    check_filter,
    check_id,
    check_kind,
    check_limit,
    check_page,
    clean_field,
    clean_tags,
    prepare_content,
    prepare_draft,
)
from server.views import Views

logger = logging.getLogger(__name__)

MAX_LIST_LIMIT = 500
BULK_PREVIEW_ROWS = 10
EXPORT_PAGE_ROWS = 500


class MemoryService(BulkWrites, Learning, Views):
    """The product's verbs over one pool, one embedder and one read cache.

    Batch saves live in server/bulk_writes.py, the learning jobs' writes in
    server/learning.py and the UI's read views in server/views.py: mixins sharing this
    object's pool, embedder, settings and cache.
    """

    def __init__(self, pool: Pool, embedder: Embedder, settings: Settings) -> None:
        self.pool = pool
        self.embedder = embedder
        self.settings = settings
        self.cache = ReadCache(settings.cache_max_size, settings.cache_ttl_seconds)
        self.searcher = Searcher(pool, embedder, settings.ranking_prior)

    # ----- writes -------------------------------------------------------------------------

    async def save(
        self,
        content: str,
        *,
        tags: Sequence[str] = (),
        source: str = "",
        project: str = "",
        project_path: str = "",
        kind: str = "manual",
        session_id: str | None = None,
        role: str | None = None,
        created_at: datetime | None = None,
        metadata: dict[str, Any] | None = None,
        force: bool = False,
    ) -> SaveOutcome:
        """Store a memory unless it is already there.

        An exact copy (same content after redaction) is reported as `duplicate`, or restored
        and reported as `restored` if it had been soft-deleted. A near copy (cosine similarity
        at or above GUARD_NOOP_THRESHOLD) is a `noop` unless `force` is set.
        """
        new, redacted = prepare_draft(
            MemoryDraft(
                content=content,
                tags=list(tags),
                source=source,
                project=project,
                project_path=project_path,
                kind=kind,
                session_id=session_id,
                role=role,
                created_at=created_at,
                metadata=metadata or {},
            ),
            self.settings.max_content_chars,
        )
        async with transaction(self.pool) as conn:
            existing = await memory_store.get_by_hash(conn, new.content_hash)
        if existing is not None:
            return await self._exact_match(existing, redacted)

        [vectors] = await with_turn_context(
            self.pool,
            self.embedder,
            [place_of_new(new)],
            await self.embedder.embed_documents_async([new.content]),
        )
        async with transaction(self.pool) as conn:
            if not force:
                nearest = await search_store.nearest_live(conn, vectors.vector)
                if nearest is not None and nearest.similarity >= self.settings.guard_noop_threshold:
                    target = await memory_store.get(conn, nearest.id)
                    if target is not None:
                        return SaveOutcome(
                            status="noop",
                            id=target.id,
                            memory=target,
                            similar=similar_memory(target, nearest.similarity),
                            redacted=redacted,
                        )
            inserted = await memory_store.insert(conn, new, vectors)
        if inserted is None:
            # Another writer stored the same content between our check and our insert.
            async with transaction(self.pool) as conn:
                existing = await memory_store.get_by_hash(conn, new.content_hash)
            if existing is None:
                raise Conflict("the memory changed while it was being saved; try again")
            return await self._exact_match(existing, redacted)
        self.cache.invalidate()
        logger.info("saved memory %d (kind %s, %d redactions)", inserted.id, new.kind, redacted)
        return SaveOutcome(
            status="saved",
            id=inserted.id,
            memory=inserted,
            similar=None,
            redacted=redacted,
        )

    async def _exact_match(self, existing: Memory, redacted: int) -> SaveOutcome:
        if existing.deleted_at is None:
            return SaveOutcome(
                status="duplicate",
                id=existing.id,
                memory=existing,
                similar=similar_memory(existing, 1.0),
                redacted=redacted,
            )
        async with transaction(self.pool) as conn:
            await memory_store.restore(conn, existing.id)
            restored = await memory_store.get(conn, existing.id)
        self.cache.invalidate()
        if restored is None:
            raise NotFound(f"memory {existing.id} was purged while it was being restored")
        logger.info("restored memory %d on an exact re-save", existing.id)
        return SaveOutcome(
            status="restored",
            id=restored.id,
            memory=restored,
            similar=similar_memory(restored, 1.0),
            redacted=redacted,
        )

    async def check(self, content: str) -> CheckResult:
        """What `save` would do with `content`: ADD, UPDATE (a close match) or NOOP."""
        prepared = prepare_content(content, self.settings.max_content_chars)
        async with transaction(self.pool) as conn:
            existing = await memory_store.get_by_hash(conn, prepared.content_hash)
        if existing is not None:
            reason = (
                f"identical to memory {existing.id}"
                if existing.deleted_at is None
                else f"identical to deleted memory {existing.id}; saving it would restore it"
            )
            return CheckResult(
                action="NOOP",
                similarity=1.0,
                target_id=existing.id,
                target_preview=preview(existing.content),
                reason=reason,
            )
        [vectors] = await self.embedder.embed_documents_async([prepared.content])
        async with transaction(self.pool) as conn:
            nearest = await search_store.nearest_live(conn, vectors.vector)
        if nearest is None:
            return CheckResult("ADD", None, None, None, "no memories stored yet")
        similarity = round(nearest.similarity, 4)
        target_preview = preview(nearest.content)
        if nearest.similarity >= self.settings.guard_noop_threshold:
            return CheckResult(
                "NOOP",
                similarity,
                nearest.id,
                target_preview,
                f"near duplicate of memory {nearest.id} (similarity {similarity:.2f} >= "
                f"{self.settings.guard_noop_threshold}); save with force=true to keep both",
            )
        if nearest.similarity >= self.settings.guard_update_threshold:
            return CheckResult(
                "UPDATE",
                similarity,
                nearest.id,
                target_preview,
                f"close to memory {nearest.id} (similarity {similarity:.2f}); consider "
                f"update_memory({nearest.id}) instead of a new memory",
            )
        return CheckResult(
            "ADD",
            similarity,
            nearest.id,
            target_preview,
            f"new information: the closest memory ({nearest.id}) has similarity {similarity:.2f}",
        )

    async def update(
        self,
        memory_id: int,
        *,
        content: str | None = None,
        tags: Sequence[str] | None = None,
        project: str | None = None,
        kind: str | None = None,
        force: bool = False,
    ) -> UpdateOutcome:
        """Change a live memory; new content is re-embedded once and passes the write guard."""
        check_id(memory_id)
        new_tags, tag_redactions = clean_tags(tags) if tags is not None else (None, 0)
        new_project = clean_field(project, "project") if project is not None else None
        new_kind = check_kind(kind) if kind is not None else None
        current = await self.get(memory_id)
        if current.deleted_at is not None:
            raise Conflict(f"memory {memory_id} is deleted; call restore_memory({memory_id}) first")
        prepared = (
            prepare_content(content, self.settings.max_content_chars)
            if content is not None
            else None
        )
        content_changes = prepared is not None and prepared.content_hash != current.content_hash
        redacted = (prepared.redacted if prepared is not None else 0) + tag_redactions

        vectors: DocumentVectors | None = None
        if prepared is not None and content_changes:
            collision = await self._update_collision(memory_id, prepared, force)
            if collision is not None:
                return UpdateOutcome("duplicate", current, collision, redacted)
            [vectors] = await with_turn_context(
                self.pool,
                self.embedder,
                [
                    turn_place(
                        new_kind or current.kind,
                        current.session_id,
                        current.metadata,
                        current.created_at,
                        current.id,
                    )
                ],
                await self.embedder.embed_documents_async([prepared.content]),
            )
            if not force:
                async with transaction(self.pool) as conn:
                    nearest = await search_store.nearest_live(
                        conn, vectors.vector, exclude_id=memory_id
                    )
                if nearest is not None and nearest.similarity >= self.settings.guard_noop_threshold:
                    similar = SimilarMemory(
                        nearest.id, round(nearest.similarity, 4), preview(nearest.content)
                    )
                    return UpdateOutcome("noop", current, similar, redacted)

        nothing_else = new_tags is None and new_project is None and new_kind is None
        if vectors is None and nothing_else:
            return UpdateOutcome("unchanged", current, None, redacted)

        async with transaction(self.pool) as conn:
            locked = await memory_store.get_for_update(conn, memory_id)
            if locked is None or locked.deleted_at is not None:
                raise Conflict(f"memory {memory_id} was deleted while it was being updated")
            if prepared is not None and vectors is not None:
                changed = await memory_store.update_content(
                    conn, memory_id, prepared.content, prepared.content_hash, vectors
                )
                if changed is None:
                    raise Conflict(f"memory {memory_id} changed while it was being updated")
            updated = await memory_store.update_fields(
                conn, memory_id, tags=new_tags, project=new_project, kind=new_kind
            )
        self.cache.invalidate()
        if updated is None:
            raise Conflict(f"memory {memory_id} changed while it was being updated")
        logger.info("updated memory %d", memory_id)
        return UpdateOutcome("updated", updated, None, redacted)

    async def _update_collision(
        self, memory_id: int, prepared: PreparedContent, force: bool
    ) -> SimilarMemory | None:
        """An exact copy elsewhere blocks an update even with force: hashes are unique."""
        async with transaction(self.pool) as conn:
            other = await memory_store.get_by_hash(conn, prepared.content_hash)
        if other is None or other.id == memory_id:
            return None
        if other.deleted_at is not None and force:
            raise Conflict(
                f"deleted memory {other.id} has exactly this content; restore_memory({other.id})"
                " or purge it first"
            )
        return similar_memory(other, 1.0)

    async def soft_delete(self, memory_id: int) -> Memory:
        """Mark a memory deleted; it stays restorable until purged."""
        check_id(memory_id)
        async with transaction(self.pool) as conn:
            changed = await memory_store.soft_delete(conn, memory_id)
            memory = await memory_store.get(conn, memory_id)
        if memory is None:
            raise NotFound(f"no memory with id {memory_id}")
        if not changed:
            raise Conflict(f"memory {memory_id} is already deleted")
        self.cache.invalidate()
        logger.info("soft-deleted memory %d", memory_id)
        return memory

    async def restore(self, memory_id: int) -> Memory:
        """Undo a soft delete."""
        check_id(memory_id)
        async with transaction(self.pool) as conn:
            changed = await memory_store.restore(conn, memory_id)
            memory = await memory_store.get(conn, memory_id)
        if memory is None:
            raise NotFound(f"no memory with id {memory_id}")
        if not changed:
            raise Conflict(f"memory {memory_id} is not deleted; there is nothing to restore")
        self.cache.invalidate()
        logger.info("restored memory %d", memory_id)
        return memory

    async def purge(self, memory_id: int) -> Memory:
        """Delete a soft-deleted memory for good; a live one must be soft-deleted first."""
        check_id(memory_id)
        async with transaction(self.pool) as conn:
            memory = await memory_store.get_for_update(conn, memory_id)
            if memory is None:
                raise NotFound(f"no memory with id {memory_id}")
            if memory.deleted_at is None:
                raise Conflict(
                    f"memory {memory_id} is not deleted; call delete_memory({memory_id}) first,"
                    " then purge it"
                )
            await memory_store.purge(conn, memory_id)
        self.cache.invalidate()
        logger.info("purged memory %d", memory_id)
        return memory

    async def bulk_soft_delete(
        self,
        *,
        tag: str | None = None,
        project: str | None = None,
        source: str | None = None,
        everything: bool = False,
        dry_run: bool = True,
    ) -> BulkDeleteResult:
        """Soft-delete every live memory with this tag/project/source (all given must match).

        `everything` (and no filter) soft-deletes every memory: restorable, like any delete.
        """
        where = MemoryFilter(
            tag=blank_to_none(tag),
            project=blank_to_none(project),
            source=blank_to_none(source),
            include_archived=True,
        )
        unfiltered = where.tag is None and where.project is None and where.source is None
        if unfiltered and not everything:
            raise InvalidInput(
                "give at least one of tag, project or source to bulk delete (or all=true)"
            )
        if everything and not unfiltered:
            raise InvalidInput("all=true deletes everything; do not combine it with filters")
        async with transaction(self.pool) as conn:
            matched = await memory_store.count(conn, where)
            shown = await memory_store.preview_matching(conn, where, BULK_PREVIEW_ROWS)
            deleted = 0 if dry_run else await memory_store.soft_delete_matching(conn, where)
        if deleted:
            self.cache.invalidate()
            logger.info("bulk soft-deleted %d memories", deleted)
        previews = [type(p)(id=p.id, preview=preview(p.preview)) for p in shown]
        return BulkDeleteResult(dry_run=dry_run, matched=matched, deleted=deleted, preview=previews)

    # ----- search -------------------------------------------------------------------------

    async def search_semantic(
        self,
        query: str,
        *,
        limit: int = 10,
        min_similarity: float = 0.3,
        where: MemoryFilter | None = None,
        use_prior: bool = True,
    ) -> SearchResult:
        """Memories closest in meaning to `query`, at or above `min_similarity`."""
        checked = check_filter(where or MemoryFilter())
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
        checked = check_filter(where or MemoryFilter())
        return await self.cache.get_or_load(
            ("keyword", query, limit, checked, use_prior),
            lambda: self.searcher.keyword(query, checked, limit=limit, use_prior=use_prior),
        )

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
    ) -> SearchResult:
        """Semantic and keyword results fused by Reciprocal Rank Fusion."""
        checked = check_filter(where or MemoryFilter())
        key = ("hybrid", query, limit, keyword_weight, semantic_weight, min_similarity, checked)
        return await self.cache.get_or_load(
            (*key, use_prior),
            lambda: self.searcher.hybrid(
                query,
                checked,
                limit=limit,
                keyword_weight=keyword_weight,
                semantic_weight=semantic_weight,
                min_similarity=min_similarity,
                use_prior=use_prior,
            ),
        )

    async def related(self, memory_id: int, *, limit: int = 3) -> list[RelatedMemory]:
        """Live memories nearest to this one's stored vector."""
        check_id(memory_id)
        return await self.cache.get_or_load(
            ("related", memory_id, limit), lambda: self.searcher.related(memory_id, limit)
        )

    async def find_duplicates(
        self,
        *,
        threshold: float = 0.9,
        limit: int = 20,
        project: str | None = None,
        scan_limit: int = 500,
    ) -> list[DuplicatePair]:
        """Near-duplicate pairs among the `scan_limit` newest memories, most similar first."""
        return await self.cache.get_or_load(
            ("duplicates", threshold, limit, project, scan_limit),
            lambda: self.searcher.duplicates(
                threshold=threshold,
                limit=limit,
                project=blank_to_none(project),
                scan_limit=scan_limit,
            ),
        )

    # ----- reads --------------------------------------------------------------------------

    async def get(self, memory_id: int) -> Memory:
        """One memory by id, deleted or not."""
        check_id(memory_id)
        async with transaction(self.pool) as conn:
            memory = await memory_store.get(conn, memory_id)
        if memory is None:
            raise NotFound(f"no memory with id {memory_id}")
        return memory

    async def list_memories(
        self, where: MemoryFilter | None = None, *, limit: int = 20, offset: int = 0
    ) -> MemoryPage:
        """A page of memories, newest first, with the total that match the filter."""
        where = check_filter(where or MemoryFilter())
        check_page(limit, offset, MAX_LIST_LIMIT)

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

    async def stats(self) -> Stats:
        """Counts by project, source and kind; deleted rows; sizes on disk; sessions; cache."""

        async def load() -> Stats:
            async with transaction(self.pool) as conn:
                active, deleted = await stats_store.totals(conn)
                grouped = await stats_store.live_counts_by(conn)
                sizes = await stats_store.storage_sizes(conn)
                sessions = await stats_store.session_counts(conn)
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
            )

        cached = await self.cache.get_or_load(("stats",), load)
        # Cache figures are live, not a snapshot from when the stats were cached.
        return Stats(**{**_fields(cached), "cache": self.cache.stats()})

    async def export(
        self, where: MemoryFilter | None = None, output_format: str = "json"
    ) -> AsyncIterator[str]:
        """The matching memories as JSON, JSON Lines or Markdown, in chunks of any total size."""
        where = check_filter(where or MemoryFilter())
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
        """Projects with live memories, most recently active first."""

        async def load() -> list[ProjectSummary]:
            async with transaction(self.pool) as conn:
                return await memory_store.project_summaries(conn)

        return await self.cache.get_or_load(("projects",), load)

    async def resolve_project(self, name: str | None) -> str | None:
        """The stored display name for `name`, matched by name or path, case-insensitively.

        None for no name; InvalidInput listing known projects when nothing matches.
        """
        wanted = blank_to_none(name)
        if wanted is None:
            return None
        projects = await self.projects()
        for summary in projects:
            if wanted.lower() in (summary.project.lower(), summary.project_path.lower()):
                return summary.project
        known = ", ".join(sorted({p.project for p in projects if p.project})[:20]) or "none yet"
        raise InvalidInput(f"no project {wanted[:80]!r}; known projects: {known}")

    async def recent_context(self, project: str | None = None, limit: int = 10) -> RecentContext:
        """Newest distilled memories of a project, or the newest of any kind if none exist."""
        check_limit(limit)
        resolved = await self.resolve_project(project)
        distilled = await self.list_memories(
            MemoryFilter(project=resolved, kind="distilled"), limit=limit
        )
        if distilled.memories:
            return RecentContext("distilled", resolved, distilled.memories)
        recent = await self.list_memories(MemoryFilter(project=resolved), limit=limit)
        return RecentContext("recent", resolved, recent.memories)

    async def startup_context(self, project: str | None = None) -> StartupContext:
        """What an agent should know at session start, as Markdown of at most 4,000 chars.

        A project with no memories yet (a first session in a new repository) gets the
        general context, with a line saying so, rather than an error.
        """
        try:
            resolved = await self.resolve_project(project)
        except InvalidInput:
            resolved = None
        tiers = await self.preferences(resolved)
        recent = await self.recent_context(resolved, limit=8)
        total = (await self.list_memories(limit=1)).total
        in_project = (
            (await self.list_memories(MemoryFilter(project=resolved), limit=1)).total
            if resolved
            else total
        )
        requested = blank_to_none(project)
        note = f"No memories for project {requested!r} yet." if requested and not resolved else None
        markdown = startup_markdown(resolved, tiers, recent.memories, in_project, total, note=note)
        shown = [
            p for p in (*tiers.explicit, *tiers.signals, *tiers.inferred) if p.superseded_by is None
        ]
        return StartupContext(
            project=resolved,
            markdown=markdown,
            preferences=len(shown),
            patterns=sum(1 for p in shown if p.memory.kind == "pattern"),
            recent=len(recent.memories),
            project_memories=in_project,
            total_memories=total,
        )

    async def database_ok(self) -> bool:
        """Whether the database answers right now (for /health; never raises)."""
        return await ping(self.pool)

    def invalidate_cache(self) -> None:
        """Drop cached reads; batch jobs in other processes ask for this after writing."""
        self.cache.invalidate()


def _fields(stats: Stats) -> dict[str, Any]:
    return {name: getattr(stats, name) for name in stats.__dataclass_fields__}
