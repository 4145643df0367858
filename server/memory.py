"""MemoryService: the one API that MCP tools, REST routes and batch jobs call.

Each method validates its input, redacts secrets, embeds off the event loop, runs one
transaction of store calls, clears the read cache after a write, and returns a dataclass.
The write guard, redaction and cache invalidation live here and nowhere else.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from server import export
from server.cache import ReadCache
from server.config import Settings
from server.embeddings import Embedder
from server.errors import Conflict, InvalidInput, NotFound
from server.models import (
    EXPORT_FORMATS,
    MEMORY_KINDS,
    BulkDeleteResult,
    CheckResult,
    DocumentVectors,
    DuplicatePair,
    Memory,
    MemoryFilter,
    MemoryPage,
    NewMemory,
    RelatedMemory,
    SaveOutcome,
    SearchResult,
    SimilarMemory,
    Stats,
    TagCount,
    UpdateOutcome,
    preview,
)
from server.redact import redact
from server.search import Searcher
from server.store import memories as memory_store
from server.store import search as search_store
from server.store import stats as stats_store
from server.store.tx import Pool, ping, transaction

logger = logging.getLogger(__name__)

MAX_LIST_LIMIT = 500
MAX_TAGS = 50
MAX_TAG_CHARS = 100
MAX_FIELD_CHARS = 1_000
BULK_PREVIEW_ROWS = 10
EXPORT_PAGE_ROWS = 500


@dataclass(frozen=True, slots=True)
class _Prepared:
    """Content after validation and redaction, with its hash."""

    content: str
    content_hash: str
    redacted: int


def content_hash(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


class MemoryService:
    """The product's verbs over one pool, one embedder and one read cache."""

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
        prepared = self._prepare_content(content)
        new = NewMemory(
            content=prepared.content,
            content_hash=prepared.content_hash,
            kind=self._check_kind(kind),
            tags=self._clean_tags(tags),
            source=self._clean_field(source, "source"),
            project=self._clean_field(project, "project"),
            project_path=self._clean_field(project_path, "project_path"),
            session_id=session_id,
            role=role,
            created_at=created_at,
            metadata=metadata or {},
        )
        async with transaction(self.pool) as conn:
            existing = await memory_store.get_by_hash(conn, new.content_hash)
        if existing is not None:
            return await self._exact_match(existing, prepared.redacted)

        [vectors] = await self.embedder.embed_documents_async([new.content])
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
                            similar=_similar(target, nearest.similarity),
                            redacted=prepared.redacted,
                        )
            inserted = await memory_store.insert(conn, new, vectors)
        if inserted is None:
            # Another writer stored the same content between our check and our insert.
            async with transaction(self.pool) as conn:
                existing = await memory_store.get_by_hash(conn, new.content_hash)
            if existing is None:
                raise Conflict("the memory changed while it was being saved; try again")
            return await self._exact_match(existing, prepared.redacted)
        self.cache.invalidate()
        logger.info(
            "saved memory %d (kind %s, %d redactions)", inserted.id, new.kind, prepared.redacted
        )
        return SaveOutcome(
            status="saved",
            id=inserted.id,
            memory=inserted,
            similar=None,
            redacted=prepared.redacted,
        )

    async def _exact_match(self, existing: Memory, redacted: int) -> SaveOutcome:
        if existing.deleted_at is None:
            return SaveOutcome(
                status="duplicate",
                id=existing.id,
                memory=existing,
                similar=_similar(existing, 1.0),
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
            similar=_similar(restored, 1.0),
            redacted=redacted,
        )

    async def check(self, content: str) -> CheckResult:
        """What `save` would do with `content`: ADD, UPDATE (a close match) or NOOP."""
        prepared = self._prepare_content(content)
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
        self._check_id(memory_id)
        clean_tags = self._clean_tags(tags) if tags is not None else None
        clean_project = self._clean_field(project, "project") if project is not None else None
        clean_kind = self._check_kind(kind) if kind is not None else None
        current = await self.get(memory_id)
        if current.deleted_at is not None:
            raise Conflict(f"memory {memory_id} is deleted; call restore_memory({memory_id}) first")
        prepared = self._prepare_content(content) if content is not None else None
        content_changes = prepared is not None and prepared.content_hash != current.content_hash
        redacted = prepared.redacted if prepared is not None else 0

        vectors: DocumentVectors | None = None
        if prepared is not None and content_changes:
            collision = await self._update_collision(memory_id, prepared, force)
            if collision is not None:
                return UpdateOutcome("duplicate", current, collision, redacted)
            [vectors] = await self.embedder.embed_documents_async([prepared.content])
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

        nothing_else = clean_tags is None and clean_project is None and clean_kind is None
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
                conn, memory_id, tags=clean_tags, project=clean_project, kind=clean_kind
            )
        self.cache.invalidate()
        if updated is None:
            raise Conflict(f"memory {memory_id} changed while it was being updated")
        logger.info("updated memory %d", memory_id)
        return UpdateOutcome("updated", updated, None, redacted)

    async def _update_collision(
        self, memory_id: int, prepared: _Prepared, force: bool
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
        return _similar(other, 1.0)

    async def soft_delete(self, memory_id: int) -> Memory:
        """Mark a memory deleted; it stays restorable until purged."""
        self._check_id(memory_id)
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
        self._check_id(memory_id)
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
        self._check_id(memory_id)
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
        dry_run: bool = True,
    ) -> BulkDeleteResult:
        """Soft-delete every live memory with this tag/project/source (all given must match)."""
        if not any(value is not None and value.strip() for value in (tag, project, source)):
            raise InvalidInput("give at least one of tag, project or source to bulk delete")
        where = MemoryFilter(
            tag=_blank_to_none(tag), project=_blank_to_none(project), source=_blank_to_none(source)
        )
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
        checked = self._check_filter(where or MemoryFilter())
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
        checked = self._check_filter(where or MemoryFilter())
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
        checked = self._check_filter(where or MemoryFilter())
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
        self._check_id(memory_id)
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
                project=_blank_to_none(project),
                scan_limit=scan_limit,
            ),
        )

    # ----- reads --------------------------------------------------------------------------

    async def get(self, memory_id: int) -> Memory:
        """One memory by id, deleted or not."""
        self._check_id(memory_id)
        async with transaction(self.pool) as conn:
            memory = await memory_store.get(conn, memory_id)
        if memory is None:
            raise NotFound(f"no memory with id {memory_id}")
        return memory

    async def list_memories(
        self, where: MemoryFilter | None = None, *, limit: int = 20, offset: int = 0
    ) -> MemoryPage:
        """A page of memories, newest first, with the total that match the filter."""
        where = self._check_filter(where or MemoryFilter())
        if not 1 <= limit <= MAX_LIST_LIMIT:
            raise InvalidInput(f"limit must be between 1 and {MAX_LIST_LIMIT}, got {limit}")
        if offset < 0:
            raise InvalidInput(f"offset must be 0 or more, got {offset}")

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
        where = self._check_filter(where or MemoryFilter())
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

    async def database_ok(self) -> bool:
        """Whether the database answers right now (for /health; never raises)."""
        return await ping(self.pool)

    def invalidate_cache(self) -> None:
        """Drop cached reads; batch jobs in other processes ask for this after writing."""
        self.cache.invalidate()

    # ----- validation ---------------------------------------------------------------------

    def _prepare_content(self, content: str) -> _Prepared:
        if not isinstance(content, str):
            raise InvalidInput("content must be text")
        text = content.replace("\x00", "").strip()
        if not text:
            raise InvalidInput("content is empty; give the text to remember")
        if len(text) > self.settings.max_content_chars:
            raise InvalidInput(
                f"content has {len(text):,} characters; the limit is "
                f"{self.settings.max_content_chars:,}: split it into several memories"
            )
        redaction = redact(text)
        return _Prepared(
            content=redaction.text,
            content_hash=content_hash(redaction.text),
            redacted=redaction.count,
        )

    @staticmethod
    def _check_id(memory_id: int) -> None:
        if isinstance(memory_id, bool) or not isinstance(memory_id, int) or memory_id < 1:
            raise InvalidInput(f"memory id must be a positive whole number, got {memory_id!r}")
        if memory_id > 2**63 - 1:
            raise NotFound(f"no memory with id {memory_id}")

    @staticmethod
    def _check_kind(kind: str) -> str:
        if kind not in MEMORY_KINDS:
            raise InvalidInput(f"kind must be one of {', '.join(MEMORY_KINDS)}, got {kind!r}")
        return kind

    @staticmethod
    def _clean_field(value: str, name: str) -> str:
        text = value.replace("\x00", "").strip()
        if len(text) > MAX_FIELD_CHARS:
            raise InvalidInput(f"{name} is longer than {MAX_FIELD_CHARS} characters")
        return text

    @staticmethod
    def _clean_tags(tags: Sequence[str]) -> list[str]:
        if isinstance(tags, str):
            tags = [part for part in tags.split(",")]
        cleaned: list[str] = []
        for tag in tags:
            if not isinstance(tag, str):
                raise InvalidInput("tags must be a list of text labels")
            text = tag.replace("\x00", "").strip()
            if not text or text in cleaned:
                continue
            if len(text) > MAX_TAG_CHARS:
                raise InvalidInput(
                    f"tag {text[:20]!r}... is longer than {MAX_TAG_CHARS} characters"
                )
            cleaned.append(text)
        if len(cleaned) > MAX_TAGS:
            raise InvalidInput(f"at most {MAX_TAGS} tags per memory, got {len(cleaned)}")
        return cleaned

    def _check_filter(self, where: MemoryFilter) -> MemoryFilter:
        if where.kind is not None:
            self._check_kind(where.kind)
        if where.since and where.before and where.since >= where.before:
            raise InvalidInput("since must be earlier than before")
        return where


def _similar(memory: Memory, similarity: float) -> SimilarMemory:
    return SimilarMemory(
        id=memory.id, similarity=round(similarity, 4), preview=preview(memory.content)
    )


def _blank_to_none(value: str | None) -> str | None:
    return value.strip() if value is not None and value.strip() else None


def _fields(stats: Stats) -> dict[str, Any]:
    return {name: getattr(stats, name) for name in stats.__dataclass_fields__}
