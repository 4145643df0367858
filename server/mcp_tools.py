"""The MCP server: 18 tools, each a thin adapter over one MemoryService method.

Tools cannot see the Starlette app's state, so the lifespan puts the service in a module-level
holder (`bind_service`) and every tool fetches it with `service()`. Names and parameters match
the established claude-memory tool set, so existing CLAUDE.md instructions keep working.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import anyio
from fastmcp import FastMCP
from fastmcp.exceptions import ToolError

from server.errors import ServiceError
from server.memory import MemoryService
from server.models import (
    BulkDeleteResult,
    CheckResult,
    DuplicatePair,
    Memory,
    MemoryFilter,
    MemoryPage,
    RecentContext,
    SaveOutcome,
    SearchResult,
    StartupContext,
    Stats,
    TagCount,
    UpdateOutcome,
)
from server.timeparse import parse_optional_time
from server.validation import check_limit

INSTRUCTIONS = (
    "Persistent memory across coding sessions: decisions, bug root causes, corrections and "
    "the user's preferences. Call startup_context at session start, search before starting "
    "work on a topic, and save_memory what should outlive this session."
)
READ_ONLY = {"readOnlyHint": True, "openWorldHint": False}
WRITES = {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False}
DESTRUCTIVE = {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": False}
MAX_TOOL_LIMIT = 100
INLINE_EXPORT_LIMIT = 200

_service: MemoryService | None = None


def bind_service(memory_service: MemoryService | None) -> None:
    """Set (or clear, with None) the service the tools use; called by the app's lifespan."""
    global _service
    _service = memory_service


def service() -> MemoryService:
    if _service is None:
        raise ToolError("the memory service is not running yet; try again in a moment")
    return _service


@contextmanager
def tool_errors() -> Iterator[None]:
    """Turn service errors into MCP tool errors carrying the service's message."""
    try:
        yield
    except ServiceError as exc:
        raise ToolError(exc.message) from exc


async def _filter(
    project: str | None = None,
    tag: str | None = None,
    since: str | None = None,
    before: str | None = None,
) -> MemoryFilter:
    return MemoryFilter(
        project=await service().resolve_project(project),
        tag=tag.strip() if tag and tag.strip() else None,
        since=parse_optional_time(since, "since"),
        before=parse_optional_time(before, "before"),
    )


@dataclass(frozen=True, slots=True)
class TagList:
    tags: list[TagCount]


@dataclass(frozen=True, slots=True)
class DuplicateList:
    pairs: list[DuplicatePair]


@dataclass(frozen=True, slots=True)
class PurgeResult:
    purged_id: int


@dataclass(frozen=True, slots=True)
class ExportResult:
    """Small exports come back inline in `content`; large ones are written to `path`."""

    count: int
    output_format: str
    content: str | None
    path: str | None


def build_mcp() -> FastMCP:
    """The MCP server with every tool registered; mounted over SSE and streamable HTTP."""
    mcp = FastMCP("claude-memory", instructions=INSTRUCTIONS, mask_error_details=True)

    @mcp.tool(annotations=READ_ONLY)
    async def startup_context(project: str | None = None) -> StartupContext:
        """Call at session start: learned preferences, patterns, recent work and counts.

        Args:
            project: Project name or path (case-insensitive); omit for all projects.
        """
        with tool_errors():
            return await service().startup_context(project)

    @mcp.tool(annotations=WRITES)
    async def save_memory(
        content: str,
        tags: list[str] | None = None,
        source: str = "claude-code",
        project: str = "",
        force: bool = False,
    ) -> SaveOutcome:
        """Save a decision, root cause, correction or preference worth keeping.

        Near duplicates are not saved twice (status noop/duplicate, with the match).
        Args:
            content: Self-contained text; secrets are redacted before storing.
            tags: Labels such as "decision" or "bug".
            source: Where it came from.
            project: Project display name.
            force: Save even if a near duplicate exists.
        """
        with tool_errors():
            return await service().save(
                content, tags=tags or [], source=source, project=project, force=force
            )

    @mcp.tool(annotations=READ_ONLY)
    async def check_memory(content: str) -> CheckResult:
        """Check without saving: is content new (ADD), close to a memory (UPDATE) or known (NOOP)?

        Args:
            content: The text you are thinking of saving.
        """
        with tool_errors():
            return await service().check(content)

    @mcp.tool(annotations=READ_ONLY)
    async def semantic_search(
        query: str,
        limit: int = 10,
        min_similarity: float | None = None,
        project: str | None = None,
        since: str | None = None,
        before: str | None = None,
    ) -> SearchResult:
        """Find memories close in meaning to a question, even in other words.

        Args:
            query: What to look for, in plain language.
            limit: Maximum hits, 1-100.
            min_similarity: Cut-off between 0 and 1; by default the one measured for the
                embedding model (0.15 for the bundled one), which drops what is unrelated.
            project: Only this project (name or path).
            since: Only after this date (ISO 8601 or an age like 7d).
            before: Only before this date.
        """
        with tool_errors():
            where = await _filter(project, since=since, before=before)
            return await service().search_semantic(
                query, limit=limit, min_similarity=min_similarity, where=where
            )

    @mcp.tool(annotations=READ_ONLY)
    async def search_memories(
        query: str,
        limit: int = 10,
        project: str | None = None,
        since: str | None = None,
        before: str | None = None,
    ) -> SearchResult:
        """Keyword search: exact words and identifiers (ERR_POOL_TIMEOUT, --frozen-lockfile).

        Args:
            query: Words or identifiers to find.
            limit: Maximum hits, 1-100.
            project: Only this project (name or path).
            since: Only after this date (ISO 8601 or an age like 7d).
            before: Only before this date.
        """
        with tool_errors():
            where = await _filter(project, since=since, before=before)
            return await service().search_keyword(query, limit=limit, where=where)

    @mcp.tool(annotations=READ_ONLY)
    async def hybrid_search(
        query: str,
        limit: int = 10,
        keyword_weight: float = 0.5,
        semantic_weight: float = 0.5,
        project: str | None = None,
        since: str | None = None,
        before: str | None = None,
        include_archived: bool = False,
    ) -> SearchResult:
        """Best general search: meaning and exact words combined. Prefer this one.

        Args:
            query: What to look for.
            limit: Maximum hits, 1-100.
            keyword_weight: Weight of exact-word matches (0-10).
            semantic_weight: Weight of meaning matches (0-10).
            project: Only this project (name or path).
            since: Only after this date (ISO 8601 or an age like 7d).
            before: Only before this date.
            include_archived: Also raw session turns already distilled.
        """
        with tool_errors():
            where = replace(
                await _filter(project, since=since, before=before),
                include_archived=include_archived,
            )
            return await service().search_hybrid(
                query,
                limit=limit,
                keyword_weight=keyword_weight,
                semantic_weight=semantic_weight,
                where=where,
            )

    @mcp.tool(annotations=READ_ONLY)
    async def list_memories(
        limit: int = 20,
        offset: int = 0,
        tag: str | None = None,
        project: str | None = None,
        since: str | None = None,
        before: str | None = None,
    ) -> MemoryPage:
        """List memories newest first, with the total for paging.

        Args:
            limit: Page size, 1-100.
            offset: How many to skip.
            tag: Only memories with this tag.
            project: Only this project (name or path).
            since: Only after this date (ISO 8601 or an age like 7d).
            before: Only before this date.
        """
        with tool_errors():
            where = await _filter(project, tag, since, before)
            # Agents get pages of at most 100; REST clients may ask for up to 500.
            return await service().list_memories(
                where, limit=check_limit(limit, MAX_TOOL_LIMIT), offset=offset
            )

    @mcp.tool(annotations=READ_ONLY)
    async def get_memory(memory_id: int) -> Memory:
        """Read one memory in full, including whether it is deleted.

        Args:
            memory_id: The memory's id.
        """
        with tool_errors():
            return await service().get(memory_id)

    @mcp.tool(annotations=READ_ONLY)
    async def recent_context(project: str | None = None, limit: int = 10) -> RecentContext:
        """Newest distilled memories of a project (or newest of any kind when none are distilled).

        Args:
            project: Project name or path; omit for all.
            limit: How many, 1-100.
        """
        with tool_errors():
            return await service().recent_context(project, limit=limit)

    @mcp.tool(annotations={**WRITES, "idempotentHint": True})
    async def update_memory(
        memory_id: int,
        content: str | None = None,
        tags: list[str] | None = None,
        supersedes: int | None = None,
        force: bool = False,
    ) -> UpdateOutcome:
        """Correct or extend a memory instead of saving a near copy.

        Args:
            memory_id: The memory to change.
            content: New full text (omit to keep).
            tags: New tags, replacing the old (omit to keep).
            supersedes: Id of the older memory whose fact this one replaces (it stays
                searchable, ranked below this one); 0 removes the link; omit to keep.
            force: Accept content that nearly duplicates another memory.
        """
        with tool_errors():
            return await service().update(
                memory_id, content=content, tags=tags, supersedes=supersedes, force=force
            )

    @mcp.tool(annotations=DESTRUCTIVE)
    async def delete_memory(memory_id: int) -> Memory:
        """Soft-delete a wrong or outdated memory; restore_memory undoes it.

        Args:
            memory_id: The memory to delete.
        """
        with tool_errors():
            return await service().soft_delete(memory_id)

    @mcp.tool(annotations={**WRITES, "idempotentHint": False})
    async def restore_memory(memory_id: int) -> Memory:
        """Undo delete_memory.

        Args:
            memory_id: The deleted memory to bring back.
        """
        with tool_errors():
            return await service().restore(memory_id)

    @mcp.tool(annotations=DESTRUCTIVE)
    async def purge_memory(memory_id: int) -> PurgeResult:
        """Permanently erase a memory that was already soft-deleted. Cannot be undone.

        Args:
            memory_id: A memory deleted with delete_memory.
        """
        with tool_errors():
            purged = await service().purge(memory_id)
            return PurgeResult(purged_id=purged.id)

    @mcp.tool(annotations=READ_ONLY)
    async def find_duplicates(
        threshold: float | None = None,
        limit: int = 20,
        project: str | None = None,
        scan_limit: int = 500,
    ) -> DuplicateList:
        """Find pairs of near-duplicate memories to merge or delete.

        Args:
            threshold: Similarity cut-off, 0-1; by default the one measured for the
                embedding model (0.8 for the bundled one).
            limit: Maximum pairs, 1-100.
            project: Only this project (name or path).
            scan_limit: How many of the newest memories to check, 1-10000.
        """
        with tool_errors():
            resolved = await service().resolve_project(project)
            pairs = await service().find_duplicates(
                threshold=threshold, limit=limit, project=resolved, scan_limit=scan_limit
            )
            return DuplicateList(pairs=pairs)

    @mcp.tool(annotations=DESTRUCTIVE)
    async def bulk_delete(
        tag: str | None = None,
        project: str | None = None,
        source: str | None = None,
        dry_run: bool = True,
    ) -> BulkDeleteResult:
        """Soft-delete every memory matching all given filters. Previews unless dry_run=false.

        Args:
            tag: Memories with this tag.
            project: Memories of this project (name or path).
            source: Memories from this source.
            dry_run: Only count and preview (default true).
        """
        with tool_errors():
            resolved = await service().resolve_project(project)
            return await service().bulk_soft_delete(
                tag=tag, project=resolved, source=source, dry_run=dry_run
            )

    @mcp.tool(annotations=READ_ONLY)
    async def list_tags() -> TagList:
        """All tags in use, with how many live memories carry each."""
        with tool_errors():
            return TagList(tags=await service().tags())

    @mcp.tool(annotations=READ_ONLY)
    async def get_stats() -> Stats:
        """Counts by project, source and kind; deleted; sessions; storage; cache."""
        with tool_errors():
            return await service().stats()

    @mcp.tool(annotations=READ_ONLY)
    async def export_memories(
        project: str | None = None,
        tag: str | None = None,
        since: str | None = None,
        before: str | None = None,
        output_format: Literal["json", "markdown"] = "json",
    ) -> ExportResult:
        """Export memories: up to 200 inline, more to a file whose path is returned.

        Args:
            project: Only this project (name or path).
            tag: Only memories with this tag.
            since: Only after this date (ISO 8601 or an age like 7d).
            before: Only before this date.
            output_format: "json" or "markdown".
        """
        with tool_errors():
            where = await _filter(project, tag, since, before)
            return await _export(where, output_format)

    return mcp


async def _export(where: MemoryFilter, output_format: str) -> ExportResult:
    memory_service = service()
    count = (await memory_service.list_memories(where, limit=1)).total
    chunks = await memory_service.export(where, output_format)
    if count <= INLINE_EXPORT_LIMIT:
        return ExportResult(count, output_format, "".join([c async for c in chunks]), None)
    folder = memory_service.settings.claude_memory_home / "exports"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    path = folder / f"memories-{stamp}.{'md' if output_format == 'markdown' else 'json'}"
    await _write_chunks(path, chunks)
    return ExportResult(count, output_format, None, str(path))


async def _write_chunks(path: Path, chunks: AsyncIterator[str]) -> None:
    """Write an export readable by its owner only: it holds every memory it lists."""
    path.touch(mode=0o600, exist_ok=False)
    async with await anyio.open_file(path, "w", encoding="utf-8") as handle:
        async for chunk in chunks:
            await handle.write(chunk)
