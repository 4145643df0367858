"""MCP tools for search: semantic, keyword and hybrid (shapes: server/schemas/search.py).

They take the filters POST /api/search takes and answer what it answers (a SearchResult), by
the same call (server/recall/search.py).
"""

from __future__ import annotations

from server.adapters.mcp.tooling import READ_ONLY, Tool
from server.core.models.search import SearchResult
from server.recall.search import checked_search
from server.schemas.search import HybridSearch, KeywordSearch, SemanticSearch
from server.service.face import MemoryApi


async def semantic_search(service: MemoryApi, args: SemanticSearch) -> SearchResult:
    """Find memories close in meaning to a question, even in other words."""
    return await checked_search(service, args.search_params())


async def search_memories(service: MemoryApi, args: KeywordSearch) -> SearchResult:
    """Keyword search: exact words and identifiers (ERR_POOL_TIMEOUT, --frozen-lockfile)."""
    return await checked_search(service, args.search_params())


async def hybrid_search(service: MemoryApi, args: HybridSearch) -> SearchResult:
    """Best general search: meaning and exact words combined. Prefer this one."""
    return await checked_search(service, args.search_params())


TOOLS = (
    Tool(semantic_search, READ_ONLY),
    Tool(search_memories, READ_ONLY),
    Tool(hybrid_search, READ_ONLY),
)
