"""REST handlers for search: POST /api/search (any mode, every filter) and the established
POST /api/recall (shapes: server/schemas/search.py)."""

from __future__ import annotations

from starlette.responses import JSONResponse

from server.adapters.http_edge import Handler
from server.core.models.memories import MemoryFilter
from server.core.models.output import to_json
from server.core.models.search import SearchResult
from server.recall.working_tree import WORKING_TREES
from server.schemas import search
from server.service.face import MemoryApi


def search_body(result: SearchResult) -> dict[str, object]:
    """A search's answer, the same as MCP's search tools give:
    {mode, query, hits, took_ms, reranked_by, rerank_skipped}."""
    body: dict[str, object] = to_json(result)
    return body


async def recall(service: MemoryApi, body: search.RecallRequest) -> JSONResponse:
    """The established /api/recall: semantic search with `threshold`, kept compatible."""
    result = await service.search_semantic(
        body.query,
        limit=body.limit,
        min_similarity=body.threshold,
        where=MemoryFilter(
            project=body.project,
            with_general=not body.project_only,
        ),
    )
    return JSONResponse(search_body(result))


async def search_memories(service: MemoryApi, body: search.SearchRequest) -> JSONResponse:
    where = MemoryFilter(
        project=body.project,
        with_general=not body.project_only,
        tag=body.tag,
        kind=body.kind,
        source=body.source,
        since=body.since,
        before=body.before,
        include_archived=body.include_archived,
    )
    if body.mode == "semantic":
        result = await service.search_semantic(
            body.query, limit=body.limit, min_similarity=body.min_similarity, where=where
        )
    elif body.mode == "keyword":
        result = await service.search_keyword(body.query, limit=body.limit, where=where)
    else:
        result = await service.search_hybrid(
            body.query,
            limit=body.limit,
            keyword_weight=body.keyword_weight,
            semantic_weight=body.semantic_weight,
            min_similarity=body.min_similarity or 0.0,
            where=where,
        )
    return JSONResponse(search_body(await WORKING_TREES.with_verdicts(result, body.cwd)))


HANDLERS: dict[str, Handler] = {"recall": recall, "search": search_memories}
