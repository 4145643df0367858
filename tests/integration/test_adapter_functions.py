"""A REST handler and an MCP tool called alone, as plain functions over the real service: no
app, no transport (server/adapters/rest/, server/adapters/mcp/)."""

from __future__ import annotations

import json

from server.adapters.mcp import search as mcp_search
from server.adapters.rest import memories as rest_memories
from server.adapters.rest import search as rest_search
from server.schemas.search import HybridSearch, SearchRequest
from server.service.memory import MemoryService

PNPM = "This repository uses pnpm, never npm; CI rejects a package-lock.json."


async def test_a_rest_handler_answers_when_called_with_the_service(service: MemoryService) -> None:
    saved = await service.save(PNPM, tags=["build"], project="acme-api")

    response = await rest_memories.get_memory(service, saved.id)

    assert response.status_code == 200
    body = json.loads(bytes(response.body))
    assert (body["id"], body["content"], body["tags"]) == (saved.id, PNPM, ["build"])


async def test_an_mcp_tool_and_its_route_answer_alike_when_called_alone(
    service: MemoryService,
) -> None:
    saved = await service.save(PNPM, tags=["build"], project="acme-api")
    await service.save(PNPM + " Since May.", project="acme-api", force=True)
    question = {"query": "pnpm", "project": "acme-api", "tag": "build"}

    by_tool = await mcp_search.hybrid_search(service, HybridSearch.model_validate(question))
    response = await rest_search.search_memories(service, SearchRequest.model_validate(question))

    by_route = json.loads(bytes(response.body))
    assert [hit.id for hit in by_tool.hits] == [saved.id]
    assert [hit["id"] for hit in by_route["hits"]] == [saved.id]
    assert (by_tool.mode, by_tool.query) == ("hybrid", "pnpm")
    assert (by_route["mode"], by_route["query"]) == ("hybrid", "pnpm")
