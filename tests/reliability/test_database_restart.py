"""The database stops under a write load and comes back: health follows it, writes resume,
nothing acknowledged is lost, and nothing half-written is left."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import anyio
import httpx
import psycopg
import pytest

from server.app import create_app
from server.core.config import Secret, Settings
from server.db.embedded import start_embedded
from server.db.migrate import apply_migrations
from server.db.pool import open_pool
from server.service.embeddings import Embedder
from server.service.memory import MemoryService
from server.service.reembed import ensure_model_recorded
from tests.db_fixtures import serving

pytestmark = pytest.mark.reliability


async def wait_for_health(http: httpx.AsyncClient, status: int, timeout: float = 60) -> float:
    started = asyncio.get_running_loop().time()
    while asyncio.get_running_loop().time() - started < timeout:
        if (await http.get("/health")).status_code == status:
            return asyncio.get_running_loop().time() - started
        await asyncio.sleep(0.2)
    raise AssertionError(f"/health never answered {status}")


async def test_health_and_writes_survive_a_database_restart(
    embedder: Embedder, settings: Settings, tmp_path: Path
) -> None:
    pgdata = tmp_path / "restart-pg"
    embedded = await anyio.to_thread.run_sync(start_embedded, pgdata)
    await apply_migrations(embedded.url)
    pool = await open_pool(embedded.url, min_size=1, max_size=4, open_timeout=10)
    acknowledged: dict[int, str] = {}
    refused: list[int] = []
    try:
        await ensure_model_recorded(pool, embedder)
        own = replace(settings, database_url=Secret(embedded.url), cache_ttl_seconds=0.0)
        service = MemoryService(pool, embedder, own)
        async with (
            serving(create_app(own, service)) as url,
            httpx.AsyncClient(base_url=url, timeout=30) as http,
        ):
            stop = asyncio.Event()

            async def writer(worker: int) -> None:
                n = 0
                while not stop.is_set():
                    content = f"writer {worker} note {n}: restart drill entry {worker * 10_000 + n}"
                    response = await http.post(
                        "/api/memories", json={"content": content, "force": True}
                    )
                    if response.status_code == 201:
                        acknowledged[response.json()["id"]] = content
                    else:
                        assert response.status_code == 503, response.text
                        assert "Traceback" not in response.text
                        refused.append(response.status_code)
                    n += 1
                    await asyncio.sleep(0.05)

            writers = [asyncio.create_task(writer(w)) for w in range(3)]
            await asyncio.sleep(2)
            await anyio.to_thread.run_sync(embedded.stop_now)
            await wait_for_health(http, 503)
            await asyncio.sleep(1)
            embedded = await anyio.to_thread.run_sync(start_embedded, pgdata)
            await wait_for_health(http, 200)
            await asyncio.sleep(2)
            stop.set()
            await asyncio.gather(*writers)
            after = await http.post("/api/memories", json={"content": "written after the restart"})
    finally:
        await pool.close()

    assert after.status_code == 201
    # A write that met the outage either waited for the pool and then succeeded (acknowledged
    # below) or was refused with 503 (checked in the writers); which one depends on timing.
    assert all(status == 503 for status in refused)
    with psycopg.connect(embedded.url) as conn:
        stored = dict(conn.execute("SELECT id, content FROM memories").fetchall())
        halves = conn.execute("SELECT count(*) FROM memories WHERE embedding IS NULL").fetchone()
    await anyio.to_thread.run_sync(embedded.release)
    assert {k: stored.get(k) for k in acknowledged} == acknowledged
    assert halves == (0,)
