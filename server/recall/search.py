"""A search as the adapters ask for it, said once: the mode run, then each hit's verdict
against the working tree the search named (server/recall/working_tree.py).

POST /api/search, POST /api/recall and the three MCP search tools each hand their shape's
`search_params()` (server/schemas/search.py) to `checked_search` and answer what it returns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from server.recall.working_tree import WORKING_TREES

if TYPE_CHECKING:
    from server.core.models.search import SearchParams, SearchResult
    from server.service.face import MemoryApi


async def checked_search(service: MemoryApi, params: SearchParams) -> SearchResult:
    """`params`' search in its mode, each hit with its verdict when `params.cwd` is given."""
    if params.mode == "semantic":
        result = await service.search_semantic(
            params.query,
            limit=params.limit,
            min_similarity=params.min_similarity,
            where=params.where,
        )
    elif params.mode == "keyword":
        result = await service.search_keyword(params.query, limit=params.limit, where=params.where)
    else:
        result = await service.search_hybrid(
            params.query,
            limit=params.limit,
            keyword_weight=params.keyword_weight,
            semantic_weight=params.semantic_weight,
            min_similarity=params.min_similarity or 0.0,
            where=params.where,
        )
    return await WORKING_TREES.with_verdicts(result, params.cwd)
