"""CLAUDE_MEMORY_TOKEN on every route: no token, a wrong one, or the right one sent the wrong way
is 401 with one fixed body; /health and the UI's files stay open; the token opens the rest.

Other users and processes on the machine can reach 127.0.0.1, so with a token set nothing but
the liveness probe and the static UI may answer them. tests/integration/test_auth.py checks a
sample of routes; this walks every one the app serves.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import replace

import httpx
import httpx2
import pytest
from fastmcp import Client
from mcp.shared.exceptions import MCPError

from server.app import create_app
from server.core.config import Secret, Settings
from server.service.memory import MemoryService
from tests.db_fixtures import serving
from tests.security.surface import OPEN_ROUTES, concrete, every_route, route_id, send

pytestmark = pytest.mark.security

TOKEN = "tok-" + "Q7w8E9r0" * 4
GUARDED = [route for route in every_route() if route not in OPEN_ROUTES]
REFUSAL = {
    "error": {
        "code": "unauthorized",
        "message": "this server needs its token (CLAUDE_MEMORY_TOKEN)",
    }
}

# (id, headers): the token missing, wrong, or sent some other way than the bearer header
WRONG_CREDENTIALS: list[tuple[str, dict[str, str]]] = [
    ("missing", {}),
    ("bare-scheme", {"authorization": "Bearer"}),
    ("wrong", {"authorization": "Bearer " + "x" * len(TOKEN)}),
    ("prefix", {"authorization": f"Bearer {TOKEN[:-1]}"}),
    ("longer", {"authorization": f"Bearer {TOKEN}0"}),
    ("no-scheme", {"authorization": TOKEN}),
    ("basic", {"authorization": f"Basic {TOKEN}"}),
    ("other-header", {"x-api-key": TOKEN}),
    ("cookie", {"cookie": f"token={TOKEN}"}),
]


@pytest.fixture(scope="module")
async def guarded_url(
    module_service: MemoryService, module_settings: Settings
) -> AsyncIterator[str]:
    guarded = replace(module_settings, claude_memory_token=Secret(TOKEN))
    async with serving(create_app(guarded, module_service)) as url:
        yield url


@pytest.fixture(scope="module")
async def http(guarded_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=guarded_url, timeout=10) as client:
        yield client


@pytest.mark.parametrize("route", GUARDED, ids=route_id)
async def test_every_guarded_route_refuses_wrong_credentials_with_one_fixed_body(
    http: httpx.AsyncClient, route: tuple[str, str]
) -> None:
    answers = {name: await send(http, *route, headers) for name, headers in WRONG_CREDENTIALS}
    url = concrete(route[1])
    in_query = await send(http, route[0], f"{url}{'&' if '?' in url else '?'}token={TOKEN}", {})

    for name, (status, body) in [*answers.items(), ("query", in_query)]:
        assert status == 401, name
        assert json.loads(body) == REFUSAL, name
        assert TOKEN.encode() not in body


@pytest.mark.parametrize("route", GUARDED, ids=route_id)
async def test_every_guarded_route_lets_the_token_through(
    http: httpx.AsyncClient, route: tuple[str, str]
) -> None:
    status, _ = await send(http, *route, {"authorization": f"Bearer {TOKEN}"})

    assert status not in (401, 403)


@pytest.mark.parametrize("route", sorted(OPEN_ROUTES), ids=route_id)
async def test_health_and_the_ui_answer_without_the_token(
    http: httpx.AsyncClient, route: tuple[str, str]
) -> None:
    status, body = await send(http, *route, {})

    assert status in (200, 307)
    assert b"unauthorized" not in body


@pytest.mark.parametrize(
    "path",
    [
        "/ui/../api/stats",
        "/ui/%2e%2e/api/stats",
        "/ui/..%2fapi%2fstats",
        "/ui%2f..%2fapi/stats",
        "/health/../api/stats",
        "/health/",
        "/health%2f..%2fapi/stats",
        "//api/stats",
        "/uix/../api/stats",
        "/API/stats",
        "/api/stats/",
        "/favicon.ico/../api/stats",
    ],
)
async def test_paths_dressed_as_open_routes_reveal_nothing_without_the_token(
    http: httpx.AsyncClient, path: str
) -> None:
    """The open-path check and the router read the same decoded path: no way round the token.

    Encoded dots under /ui/ stay inside the UI: they get its index page, never the API.
    """
    request = http.build_request("GET", "/")
    request.url = request.url.copy_with(raw_path=path.encode())
    response = await http.send(request)

    is_ui_page = response.headers.get("content-type", "").startswith("text/html")
    assert response.status_code in (401, 404) or is_ui_page
    assert b"by_project" not in response.content
    assert b'"memories"' not in response.content


@pytest.mark.parametrize(
    ("endpoint", "refusal"), [("/mcp", MCPError), ("/sse", httpx2.HTTPStatusError)]
)
@pytest.mark.parametrize("auth", [None, "x" * len(TOKEN)], ids=["no-token", "wrong-token"])
async def test_mcp_clients_without_the_right_token_cannot_call_a_tool(
    guarded_url: str, endpoint: str, refusal: type[Exception], auth: str | None
) -> None:
    with pytest.raises(refusal) as refused:
        async with Client(f"{guarded_url}{endpoint}", auth=auth, timeout=10) as client:
            await client.call_tool("get_stats", {})

    assert TOKEN not in str(refused.value)


async def test_the_token_is_not_echoed_by_any_route(http: httpx.AsyncClient) -> None:
    """Stats, health and the OpenAPI document describe the server without revealing the token."""
    auth = {"authorization": f"Bearer {TOKEN}"}
    bodies = [
        (await http.get(path, headers=auth)).text
        for path in ("/health", "/api/stats", "/api/openapi.json", "/api/sessions")
    ]

    assert all(TOKEN not in body for body in bodies)
