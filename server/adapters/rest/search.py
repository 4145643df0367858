"""REST handlers for search: POST /api/search (any mode, every filter) and the established
POST /api/recall (shapes: server/schemas/search.py; the search itself: server/recall/search.py,
as the MCP search tools run it)."""

from __future__ import annotations

from starlette.responses import JSONResponse

from server.adapters.http_edge import Handler
from server.core.models.output import to_json
from server.core.models.search import SearchResult
from server.recall.search import checked_search
from server.schemas import search
from server.service.face import MemoryApi


def search_body(result: SearchResult) -> dict[str, object]:
    """A search's answer, the same as MCP's search tools give:
    {mode, query, hits, took_ms, reranked_by, rerank_skipped}."""
    body: dict[str, object] = to_json(result)
    return body


async def recall(service: MemoryApi, body: search.RecallRequest) -> JSONResponse:
    """The established /api/recall: semantic search with `threshold`, kept compatible."""
    return JSONResponse(search_body(await checked_search(service, body.search_params())))


async def search_memories(service: MemoryApi, body: search.SearchRequest) -> JSONResponse:
    return JSONResponse(search_body(await checked_search(service, body.search_params())))


HANDLERS: dict[str, Handler] = {"recall": recall, "search": search_memories}
