"""DNS rebinding and cross-site requests: a foreign Host or Origin is refused on every route.

A web page the user opens can make the browser send requests to 127.0.0.1 under a hostname the
attacker controls (rebinding), or send them cross-site from its own origin. Either way the
request carries a Host or an Origin that is not this machine, and must stop at the guard, before
any MCP, REST or UI handler runs. Every route of the app is walked; a control run shows the same
requests with loopback names get past the guard.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

import httpx
import pytest
from starlette.routing import Route

from server.app import create_app
from server.core.config import Settings
from server.service.memory import MemoryService
from tests.db_fixtures import serving
from tests.security.surface import every_route, route_id, send

pytestmark = pytest.mark.security

ROUTES = every_route()


@pytest.fixture(scope="module")
async def http(module_app_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=module_app_url, timeout=10) as client:
        yield client


@pytest.mark.parametrize("route", ROUTES, ids=route_id)
async def test_a_foreign_host_is_refused_on_every_route(
    http: httpx.AsyncClient, route: tuple[str, str]
) -> None:
    status, body = await send(http, *route, {"host": "attacker.example:3333"})

    assert status == 403
    assert b'"forbidden_host"' in body


@pytest.mark.parametrize("route", ROUTES, ids=route_id)
async def test_a_foreign_origin_is_refused_on_every_route(
    http: httpx.AsyncClient, route: tuple[str, str]
) -> None:
    status, body = await send(http, *route, {"origin": "http://attacker.example"})

    assert status == 403
    assert b'"forbidden_origin"' in body


@pytest.mark.parametrize("route", ROUTES, ids=route_id)
async def test_loopback_host_and_origin_get_past_the_guard_on_every_route(
    http: httpx.AsyncClient, route: tuple[str, str]
) -> None:
    port = http.base_url.port
    headers = {"host": f"localhost:{port}", "origin": f"http://localhost:{port}"}

    status, _ = await send(http, *route, headers)

    assert status != 403


@pytest.mark.parametrize(
    "host",
    [
        "attacker.example",
        "127.0.0.1.attacker.example",
        "localhost.attacker.example:3333",
        "127.0.0.1@attacker.example",
        "attacker.example:80@127.0.0.1",
        "0.0.0.0:3333",
    ],
)
async def test_host_spellings_that_merely_contain_a_loopback_name_are_refused(
    http: httpx.AsyncClient, host: str
) -> None:
    status, body = await send(http, "GET", "/api/stats", {"host": host})

    assert status == 403
    assert b'"forbidden_host"' in body


@pytest.mark.parametrize(
    "origin",
    [
        "null",  # sandboxed iframes and file:// pages
        "https://attacker.example",
        "http://127.0.0.1.attacker.example:3333",
        "http://localhost.attacker.example",
        "file://",
        "chrome-extension://abcdefghijklmnopabcdefghijklmnop",
        "http://[::ffff:7f00:1].attacker.example",
    ],
)
async def test_origins_that_are_not_this_machine_are_refused(
    http: httpx.AsyncClient, origin: str
) -> None:
    status, body = await send(http, "POST", "/api/memories", {"origin": origin})

    assert status == 403
    assert b'"forbidden_origin"' in body


async def test_a_refused_write_changes_nothing(
    http: httpx.AsyncClient, module_service: MemoryService
) -> None:
    before = (await module_service.stats()).total

    refused = await http.post(
        "/api/memories",
        json={"content": "planted by a web page through DNS rebinding"},
        headers={"host": "attacker.example"},
    )

    assert refused.status_code == 403
    module_service.invalidate_cache()
    assert (await module_service.stats()).total == before


async def test_every_app_route_is_walked(
    module_service: MemoryService, module_settings: Settings
) -> None:
    """A route added to the app but neither to the OpenAPI document nor EXTRA_ROUTES fails here."""
    app = create_app(module_settings, module_service)
    served = {
        (method, route.path)
        for route in app.routes
        if isinstance(route, Route)
        for method in route.methods or ()
        if method != "HEAD"
    }

    assert served - set(ROUTES) == set()


async def test_names_in_allowed_hosts_pass_and_others_still_do_not(
    module_service: MemoryService, module_settings: Settings
) -> None:
    """A server bound to every address and reached as `mybox.lan` (ALLOWED_HOSTS=mybox.lan)."""
    settings = replace(module_settings, host="0.0.0.0", allowed_hosts=("mybox.lan",))
    async with (
        serving(create_app(settings, module_service)) as url,
        httpx.AsyncClient(base_url=url, timeout=10) as client,
    ):
        named = await send(
            client, "GET", "/api/stats", {"host": "mybox.lan:3333", "origin": "http://mybox.lan"}
        )
        other_host = await send(client, "GET", "/api/stats", {"host": "otherbox.lan:3333"})
        other_origin = await send(
            client, "GET", "/api/stats", {"origin": "http://mybox.lan.attacker.example"}
        )
        bind_all = await send(client, "GET", "/api/stats", {"host": "0.0.0.0:3333"})

    assert named[0] == 200
    assert other_host[0] == 403 and b'"forbidden_host"' in other_host[1]
    assert other_origin[0] == 403 and b'"forbidden_origin"' in other_origin[1]
    assert bind_all[0] == 403
