"""MCP tools for search: semantic, keyword and hybrid (shapes: server/schemas/search.py).

They take the filters POST /api/search takes and answer what it answers (a SearchResult).
"""

from __future__ import annotations

from dataclasses import replace

from server.adapters.mcp.tooling import READ_ONLY, Tool
from server.core.models.memories import MemoryFilter
from server.core.models.search import SearchResult
from server.recall.working_tree import WORKING_TREES
from server.schemas.search import HybridSearch, KeywordSearch, SemanticSearch
from server.service.face import MemoryApi


async def semantic_search(service: MemoryApi, args: SemanticSearch) -> SearchResult:
    """Find memories close in meaning to a question, even in other words."""
    result = await service.search_semantic(
        args.query,
        limit=args.limit,
        min_similarity=args.min_similarity,
        where=_where(args),
    )
    return await WORKING_TREES.with_verdicts(result, args.cwd)


async def search_memories(service: MemoryApi, args: KeywordSearch) -> SearchResult:
    """Keyword search: exact words and identifiers (ERR_POOL_TIMEOUT, --frozen-lockfile)."""
    result = await service.search_keyword(args.query, limit=args.limit, where=_where(args))
    return await WORKING_TREES.with_verdicts(result, args.cwd)


async def hybrid_search(service: MemoryApi, args: HybridSearch) -> SearchResult:
    """Best general search: meaning and exact words combined. Prefer this one."""
    where = replace(_where(args), include_archived=args.include_archived)
    result = await service.search_hybrid(
        args.query,
        limit=args.limit,
        keyword_weight=args.keyword_weight,
        semantic_weight=args.semantic_weight,
        min_similarity=args.min_similarity or 0.0,
        where=where,
    )
    return await WORKING_TREES.with_verdicts(result, args.cwd)


def _where(args: KeywordSearch) -> MemoryFilter:
    """The filter a search's arguments describe, read as POST /api/search reads them."""
    return MemoryFilter(
        project=args.project,
        with_general=not args.project_only,
        tag=args.tag,
        kind=args.kind,
        source=args.source,
        since=args.since,
        before=args.before,
    )


TOOLS = (
    Tool(semantic_search, READ_ONLY),
    Tool(search_memories, READ_ONLY),
    Tool(hybrid_search, READ_ONLY),
)
