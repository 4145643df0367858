"""One rule for what a project filter means, on every way in (#36): REST and MCP give the same
memories for a project's name in any case or its folder, and refuse an unknown name the same
way, naming the known projects.

The shared fixtures are imported as a user imports them; `acme-api` is their project.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from fastmcp import Client

from server.core.errors import NotFound
from server.core.models.lessons import LessonDraft
from server.service.memory import MemoryService
from tests.integration.acme_facts import PROJECT_PATH, import_acme

ASKED_AS = ["acme-api", "ACME-API", PROJECT_PATH, f"{PROJECT_PATH.upper()}"]


@pytest.fixture
async def acme(service: MemoryService) -> None:
    await import_acme(service)


@pytest.fixture
async def mcp(app_url: str) -> AsyncIterator[Client[Any]]:
    async with Client(f"{app_url}/mcp") as client:
        yield client


async def rest(app_url: str, method: str, path: str, **kwargs: Any) -> httpx.Response:
    async with httpx.AsyncClient(base_url=app_url, timeout=60) as client:
        return await client.request(method, path, **kwargs)


async def mcp_ids(client: Client[Any], tool: str, key: str, **arguments: Any) -> list[int]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    return [item["id"] for item in result.structured_content[key]]


@pytest.mark.usefixtures("acme")
async def test_a_project_named_any_way_lists_the_same_memories_over_rest_and_mcp(
    app_url: str, mcp: Client[Any]
) -> None:
    listed: dict[str, tuple[list[int], list[int]]] = {}
    for name in ASKED_AS:
        response = await rest(
            app_url, "GET", "/api/memories", params={"project": name, "limit": 200}
        )
        assert response.status_code == 200, response.text
        over_rest = [m["id"] for m in response.json()["memories"]]
        over_mcp = await mcp_ids(mcp, "list_memories", "memories", project=name, limit=200)
        listed[name] = (over_rest, over_mcp)

    exact_rest, exact_mcp = listed["acme-api"]
    assert exact_rest and exact_rest == exact_mcp
    for name in ASKED_AS:
        assert listed[name] == (exact_rest, exact_rest), name


@pytest.mark.usefixtures("acme")
async def test_a_search_in_a_project_named_by_its_folder_finds_what_its_name_finds(
    app_url: str, mcp: Client[Any]
) -> None:
    found = {}
    for name in ("acme-api", PROJECT_PATH.upper()):
        response = await rest(
            app_url,
            "POST",
            "/api/search",
            json={"query": "how is POST /invoices rate limited?", "project": name},
        )
        assert response.status_code == 200, response.text
        over_rest = [hit["id"] for hit in response.json()["hits"]]
        over_mcp = await mcp_ids(
            mcp, "hybrid_search", "hits", query="how is POST /invoices rate limited?", project=name
        )
        found[name] = (over_rest, over_mcp)

    assert found["acme-api"][0] == found["acme-api"][1]
    assert found[PROJECT_PATH.upper()] == found["acme-api"]


@pytest.mark.usefixtures("acme")
async def test_an_unknown_project_is_refused_alike_naming_the_known_ones(
    app_url: str, mcp: Client[Any]
) -> None:
    response = await rest(app_url, "GET", "/api/memories", params={"project": "nosuch"})
    searched = await rest(
        app_url, "POST", "/api/search", json={"query": "rate limits", "project": "nosuch"}
    )
    over_mcp = await mcp.call_tool("list_memories", {"project": "nosuch"}, raise_on_error=False)

    assert response.status_code == 404 and searched.status_code == 404
    message = response.json()["error"]["message"]
    assert "no project 'nosuch'" in message and "acme-api" in message
    assert searched.json()["error"]["message"] == message
    assert over_mcp.is_error
    assert message in str(over_mcp.content)


@pytest.mark.usefixtures("acme")
async def test_a_project_only_lessons_know_is_a_project(
    app_url: str, service: MemoryService
) -> None:
    await service.add_lesson(
        LessonDraft(
            tool="Bash", pattern=r"\bterraform apply\b", message="Plan first.", project="infra-live"
        )
    )

    response = await rest(app_url, "GET", "/api/lessons", params={"project": "INFRA-LIVE"})

    assert response.status_code == 200, response.text
    assert "infra-live" in [lesson["project"] for lesson in response.json()["lessons"]]
    assert await service.resolve_project("Infra-Live") == "infra-live"
    with pytest.raises(NotFound):
        await service.resolve_project("infra-dead")
