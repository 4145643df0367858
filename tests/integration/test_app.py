"""The app over real HTTP: /health, /cache/invalidate, the Host/Origin guard, /ui, MCP mounts."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from fastmcp import Client
from psycopg import sql

from server.app import create_app
from server.core.config import Secret, Settings
from server.db.migrate import apply_migrations
from server.db.pool import open_pool
from server.service.embeddings import Embedder
from server.service.memory import MemoryService
from server.service.reembed import ensure_model_recorded
from server.store.tx import Pool
from tests.db_fixtures import serving


async def test_health_reports_ok_with_database_and_model(app_url: str) -> None:
    async with httpx.AsyncClient() as client:
        response = await client.get(f"{app_url}/health")

    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"] == "ok"
    assert body["embedding_model"] == "all-MiniLM-L6-v2"
    assert body["embedding_dimension"] == 384


@asynccontextmanager
async def served_alone(
    url: str, embedder: Embedder, settings: Settings, *, connections: int
) -> AsyncIterator[tuple[str, Pool]]:
    """The app served over a database of its own (`url`, migrated here) and a pool of
    `connections`: its URL and the pool."""
    await apply_migrations(url)
    pool = await open_pool(url, min_size=1, max_size=connections)
    try:
        await ensure_model_recorded(pool, embedder)
        async with serving(create_app(settings, MemoryService(pool, embedder, settings))) as app:
            yield app, pool
    finally:
        await pool.close(timeout=1)


async def test_health_is_503_degraded_without_leaking_errors_when_database_is_gone(
    fresh_database: Callable[[], str], embedder: Embedder, settings: Settings
) -> None:
    url = fresh_database()
    async with (
        served_alone(url, embedder, settings, connections=2) as (app_url, _),
        httpx.AsyncClient() as client,
    ):
        assert (await client.get(f"{app_url}/health")).status_code == 200
        await drop_database(url)
        response = await client.get(f"{app_url}/health")

    assert response.status_code == 503
    assert response.json()["status"] == "degraded"
    assert "does not exist" not in response.text
    assert "FATAL" not in response.text


async def test_health_stays_200_while_every_pooled_connection_is_busy(
    fresh_database: Callable[[], str], embedder: Embedder, settings: Settings
) -> None:
    """A pool with all its connections out is busy, not down: a supervisor reading 503 would
    restart a working server."""
    async with (
        served_alone(fresh_database(), embedder, settings, connections=1) as (app_url, pool),
        httpx.AsyncClient(timeout=30) as client,
        pool.connection(),
    ):
        response = await client.get(f"{app_url}/health")

    assert response.status_code == 200, response.text
    assert response.json()["database"] == "ok"


async def drop_database(url: str) -> None:
    import psycopg

    name = url.split("?")[0].rsplit("/", 1)[1]
    admin = url.replace(f"/{name}?", "/postgres?")
    async with await psycopg.AsyncConnection.connect(admin, autocommit=True) as conn:
        await conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


async def test_cache_invalidate_still_empties_the_read_cache(
    app_url: str, service: MemoryService
) -> None:
    await service.save("Deploys go out on Tuesdays and Thursdays only.")
    assert (await service.list_memories()).total == 1
    assert service.cache.stats().size > 0

    async with httpx.AsyncClient() as client:
        response = await client.post(f"{app_url}/cache/invalidate")

    assert response.status_code == 200
    assert service.cache.stats().size == 0


@pytest.mark.parametrize("path", ["/health", "/ui/", "/sse", "/mcp", "/cache/invalidate"])
async def test_foreign_host_is_refused_on_every_route(app_url: str, path: str) -> None:
    async with httpx.AsyncClient() as client:
        response = await client.get(f"{app_url}{path}", headers={"Host": "evil.example:3333"})

    assert response.status_code == 403
    assert response.json()["error"]["code"] == "forbidden_host"


@pytest.mark.parametrize("origin", ["http://evil.example", "null", "file://"])
async def test_foreign_origin_is_refused(app_url: str, origin: str) -> None:
    async with httpx.AsyncClient() as client:
        response = await client.get(f"{app_url}/health", headers={"Origin": origin})

    assert response.status_code == 403
    assert response.json()["error"]["code"] == "forbidden_origin"


@pytest.mark.parametrize("host", ["localhost:3333", "127.0.0.1", "[::1]:3333"])
async def test_loopback_host_and_origin_are_allowed(app_url: str, host: str) -> None:
    name = host.rsplit(":", 1)[0] if not host.endswith("]") and ":" in host else host
    async with httpx.AsyncClient() as client:
        response = await client.get(
            f"{app_url}/health", headers={"Host": host, "Origin": f"http://{name}:3333"}
        )

    assert response.status_code == 200


async def test_unknown_route_is_json_404(app_url: str) -> None:
    async with httpx.AsyncClient() as client:
        response = await client.post(f"{app_url}/nowhere")

    assert response.status_code in (404, 405)
    assert "error" in response.json()


async def test_ui_without_build_explains_how_to_build(
    service: MemoryService, settings: Settings, tmp_path: Path
) -> None:
    app = create_app(settings, service, ui_dist=tmp_path / "missing")
    async with serving(app) as url, httpx.AsyncClient() as client:
        response = await client.get(f"{url}/ui/")

    assert response.status_code == 200
    assert "npm run build" in response.text


async def test_ui_serves_build_and_falls_back_to_index_for_client_routes(
    service: MemoryService, settings: Settings, tmp_path: Path
) -> None:
    dist = tmp_path / "dist"
    (dist / "assets").mkdir(parents=True)
    (dist / "index.html").write_text("<!doctype html><div id=root>app</div>")
    (dist / "assets" / "app.js").write_text("console.log('ok')")
    app = create_app(settings, service, ui_dist=dist)
    async with serving(app) as url, httpx.AsyncClient(follow_redirects=True) as client:
        index = await client.get(f"{url}/ui/")
        asset = await client.get(f"{url}/ui/assets/app.js")
        deep_link = await client.get(f"{url}/ui/memories/42")
        root = await client.get(f"{url}/")

    assert "id=root" in index.text
    assert asset.text == "console.log('ok')"
    assert "id=root" in deep_link.text
    assert "id=root" in root.text


@pytest.mark.parametrize("transport_path", ["/sse", "/mcp"])
async def test_mcp_transports_answer_a_real_client(app_url: str, transport_path: str) -> None:
    async with Client(f"{app_url}{transport_path}") as client:
        tools = await client.list_tools()

    assert isinstance(tools, list)


async def test_sse_stream_announces_message_endpoint(app_url: str) -> None:
    async with httpx.AsyncClient() as client, client.stream("GET", f"{app_url}/sse") as stream:
        lines = []
        async for line in stream.aiter_lines():
            lines.append(line)
            if line.startswith("data:"):
                break

    assert "event: endpoint" in lines
    assert lines[-1].startswith("data: /messages/?session_id=")


def test_settings_secret_never_prints() -> None:
    secret = Secret("postgresql://u:pw@h/db")
    assert "pw" not in repr(Settings(database_url=secret))
