"""CLAUDE_MEMORY_TOKEN: every route but /health and the UI's files needs the bearer token."""

from __future__ import annotations

import httpx
import pytest
from fastmcp import Client

from tests.db_fixtures import TOKEN


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/api/stats"),
        ("GET", "/api/memories"),
        ("POST", "/api/search"),
        ("POST", "/cache/invalidate"),
        ("GET", "/api/openapi.json"),
        ("GET", "/sse"),
        ("POST", "/mcp"),
        ("POST", "/messages/?session_id=abc"),
    ],
)
async def test_routes_refuse_a_missing_or_wrong_token_without_detail(
    guarded_url: str, method: str, path: str
) -> None:
    async with httpx.AsyncClient(base_url=guarded_url, timeout=10) as http:
        missing = await http.request(method, path)
        wrong = await http.request(method, path, headers={"authorization": f"Bearer {TOKEN}x"})
        basic = await http.request(method, path, headers={"authorization": f"Basic {TOKEN}"})

    for response in (missing, wrong, basic):
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "unauthorized"
        assert TOKEN not in response.text


async def test_health_and_the_ui_stay_open_and_the_token_opens_the_rest(
    guarded_url: str,
) -> None:
    auth = {"authorization": f"Bearer {TOKEN}"}
    async with httpx.AsyncClient(base_url=guarded_url, timeout=10) as http:
        health = await http.get("/health")
        ui = await http.get("/ui/")
        stats = await http.get("/api/stats", headers=auth)

    assert health.status_code == 200
    assert ui.status_code == 200
    assert stats.status_code == 200


async def test_mcp_clients_with_the_token_work_over_both_transports(guarded_url: str) -> None:
    for endpoint in ("/mcp", "/sse"):
        async with Client(f"{guarded_url}{endpoint}", auth=TOKEN) as client:
            result = await client.call_tool("get_stats", {})
        assert result.structured_content is not None


def test_a_short_token_is_refused_at_start() -> None:
    from server.core.config import load_settings
    from server.core.errors import ConfigError

    with pytest.raises(ConfigError, match="CLAUDE_MEMORY_TOKEN"):
        load_settings({"CLAUDE_MEMORY_TOKEN": "short"}, config_file=None)
