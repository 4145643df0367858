"""MCP tools for search: semantic, keyword and hybrid (shapes: server/schemas/search.py)."""

from __future__ import annotations

from dataclasses import replace

from server.adapters.mcp.tooling import READ_ONLY, Tool, memory_filter
from server.core.models.search import SearchResult
from server.ingest.recall_check import WORKING_TREES
from server.schemas.search import HybridSearch, KeywordSearch, SemanticSearch
from server.service.face import MemoryApi


async def semantic_search(service: MemoryApi, args: SemanticSearch) -> SearchResult:
    """Find memories close in meaning to a question, even in other words."""
    result = await service.search_semantic(
        args.query,
        limit=args.limit,
        min_similarity=args.min_similarity,
        where=await memory_filter(
            service,
            args.project,
            since=args.since,
            before=args.before,
            source=args.source,
            with_general=not args.project_only,
        ),
    )
    return await WORKING_TREES.with_verdicts(result, args.cwd)


async def search_memories(service: MemoryApi, args: KeywordSearch) -> SearchResult:
    """Keyword search: exact words and identifiers (ERR_POOL_TIMEOUT, --frozen-lockfile)."""
    result = await service.search_keyword(
        args.query,
        limit=args.limit,
        where=await memory_filter(
            service,
            args.project,
            since=args.since,
            before=args.before,
            source=args.source,
            with_general=not args.project_only,
        ),
    )
    return await WORKING_TREES.with_verdicts(result, args.cwd)


async def hybrid_search(service: MemoryApi, args: HybridSearch) -> SearchResult:
    """Best general search: meaning and exact words combined. Prefer this one."""
    where = await memory_filter(
        service,
        args.project,
        since=args.since,
        before=args.before,
        source=args.source,
        with_general=not args.project_only,
    )
    result = await service.search_hybrid(
        args.query,
        limit=args.limit,
        keyword_weight=args.keyword_weight,
        semantic_weight=args.semantic_weight,
        where=replace(where, include_archived=args.include_archived),
    )
    return await WORKING_TREES.with_verdicts(result, args.cwd)


TOOLS = (
    Tool(semantic_search, READ_ONLY),
    Tool(search_memories, READ_ONLY),
    Tool(hybrid_search, READ_ONLY),
)
