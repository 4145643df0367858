"""POST /api/search over real HTTP: each mode, filters, and the error shapes."""

from __future__ import annotations

import httpx
import pytest

from server.service.memory import MemoryService


@pytest.mark.parametrize("mode", ["semantic", "keyword", "hybrid"])
async def test_search_returns_hits_with_scores_in_each_mode(
    app_url: str, service: MemoryService, mode: str
) -> None:
    saved = await service.save("This repository uses pnpm, never npm.", project="acme-api")
    await service.save("The office plants need water on Mondays.", project="office")

    async with httpx.AsyncClient() as client:
        response = await client.post(
            f"{app_url}/api/search",
            json={"query": "pnpm", "mode": mode, "limit": 5, "project": "acme-api"},
        )

    assert response.status_code == 200
    body = response.json()
    assert body["mode"] == mode
    assert isinstance(body["took_ms"], float)
    assert [hit["id"] for hit in body["hits"]] == [saved.id]
    hit = body["hits"][0]
    assert isinstance(hit["score"], float)
    assert hit["created_at"].endswith("+00:00")


@pytest.mark.parametrize(
    ("payload", "status", "code"),
    [
        ({"query": "x", "mode": "fuzzy"}, 400, "invalid_input"),
        ({"query": ""}, 400, "invalid_input"),
        ({"query": "x", "limit": "ten"}, 422, "unprocessable"),
        ({"query": "x", "limit": 1000}, 400, "invalid_input"),
        ({"query": "x", "since": "last tuesday"}, 400, "invalid_input"),
        ([1, 2], 422, "unprocessable"),
    ],
    ids=["mode", "empty", "type", "limit", "date", "not-object"],
)
async def test_search_rejects_bad_input_with_json_error(
    app_url: str, payload: object, status: int, code: str
) -> None:
    async with httpx.AsyncClient() as client:
        response = await client.post(f"{app_url}/api/search", json=payload)

    assert response.status_code == status
    assert response.json()["error"]["code"] == code


async def test_search_rejects_malformed_json(app_url: str) -> None:
    async with httpx.AsyncClient() as client:
        response = await client.post(
            f"{app_url}/api/search",
            content=b"{not json",
            headers={"content-type": "application/json"},
        )

    assert response.status_code == 400
    assert response.json()["error"]["message"] == "the request body is not valid JSON"
