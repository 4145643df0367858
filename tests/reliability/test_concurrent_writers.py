"""Fifty clients at once over MCP (SSE and streamable HTTP) and REST, saving, updating and
deleting for twenty seconds: every acknowledged write is stored exactly once, nothing answers
5xx, and /health keeps answering."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
from fastmcp import Client

from server.core.models.memories import MemoryFilter
from server.service.memory import MemoryService

pytestmark = [pytest.mark.reliability, pytest.mark.alone]

DURATION_SECONDS = 20
REST_CLIENTS = 30
SSE_CLIENTS = 10
HTTP_CLIENTS = 10

Save = Callable[[str], Awaitable[int]]
Update = Callable[[int, str], Awaitable[None]]
Delete = Callable[[int], Awaitable[None]]


class Ledger:
    """What the clients were told: the server's acknowledgements are the truth to check."""

    def __init__(self) -> None:
        self.contents: dict[int, str] = {}
        self.deleted: set[int] = set()
        self.errors: list[str] = []


async def client_loop(
    name: str, save: Save, update: Update, delete: Delete, ledger: Ledger, stop: asyncio.Event
) -> None:
    n = 0
    mine: list[int] = []
    while not stop.is_set():
        content = f"{name} wrote entry {n}: invoice batch {hash((name, n)) % 100_000} reconciled"
        try:
            memory_id = await save(content)
            ledger.contents[memory_id] = content
            mine.append(memory_id)
            if n % 3 == 1:
                changed = content + " (amended)"
                await update(memory_id, changed)
                ledger.contents[memory_id] = changed
            if n % 5 == 4:
                victim = mine.pop(0)
                await delete(victim)
                ledger.deleted.add(victim)
        except Exception as exc:  # recorded and asserted on below
            ledger.errors.append(f"{name}: {type(exc).__name__}: {exc}")
        n += 1


def rest_client(http: httpx.AsyncClient) -> tuple[Save, Update, Delete]:
    async def save(content: str) -> int:
        response = await http.post("/api/memories", json={"content": content, "force": True})
        assert response.status_code == 201, response.text
        return int(response.json()["id"])

    async def update(memory_id: int, content: str) -> None:
        response = await http.patch(
            f"/api/memories/{memory_id}", json={"content": content, "force": True}
        )
        assert response.status_code == 200, response.text

    async def delete(memory_id: int) -> None:
        response = await http.delete(f"/api/memories/{memory_id}")
        assert response.status_code == 200, response.text

    return save, update, delete


def mcp_client(client: Client[Any]) -> tuple[Save, Update, Delete]:
    async def save(content: str) -> int:
        result = await client.call_tool("save_memory", {"content": content, "force": True})
        assert result.structured_content is not None
        assert result.structured_content["status"] == "saved"
        return int(result.structured_content["id"])

    async def update(memory_id: int, content: str) -> None:
        await client.call_tool(
            "update_memory", {"memory_id": memory_id, "content": content, "force": True}
        )

    async def delete(memory_id: int) -> None:
        await client.call_tool("delete_memory", {"memory_id": memory_id})

    return save, update, delete


async def test_fifty_concurrent_clients_lose_nothing(app_url: str, service: MemoryService) -> None:
    ledger = Ledger()
    stop = asyncio.Event()
    health: list[int] = []

    async def watch_health(http: httpx.AsyncClient) -> None:
        while not stop.is_set():
            health.append((await http.get("/health", timeout=10)).status_code)
            await asyncio.sleep(0.5)

    limits = httpx.Limits(max_connections=REST_CLIENTS + 5)
    async with httpx.AsyncClient(base_url=app_url, timeout=120, limits=limits) as http:
        sse = [Client(f"{app_url}/sse", timeout=120) for _ in range(SSE_CLIENTS)]
        streamable = [Client(f"{app_url}/mcp", timeout=120) for _ in range(HTTP_CLIENTS)]
        for client in (*sse, *streamable):
            await client.__aenter__()
        try:
            tasks = [asyncio.create_task(watch_health(http))]
            tasks += [
                asyncio.create_task(client_loop(f"rest{i}", *rest_client(http), ledger, stop))
                for i in range(REST_CLIENTS)
            ]
            tasks += [
                asyncio.create_task(client_loop(f"sse{i}", *mcp_client(c), ledger, stop))
                for i, c in enumerate(sse)
            ]
            tasks += [
                asyncio.create_task(client_loop(f"http{i}", *mcp_client(c), ledger, stop))
                for i, c in enumerate(streamable)
            ]
            await asyncio.sleep(DURATION_SECONDS)
            stop.set()
            await asyncio.wait_for(asyncio.gather(*tasks), timeout=300)
        finally:
            for client in (*sse, *streamable):
                await client.__aexit__(None, None, None)

    assert ledger.errors == []
    assert len(ledger.contents) >= 50
    assert health and set(health) == {200}
    page = await service.list_memories(MemoryFilter(include_deleted=True), limit=500)
    total = page.total
    stored = {m.id: m for m in page.memories}
    offset = 500
    while offset < total:
        more = await service.list_memories(
            MemoryFilter(include_deleted=True), limit=500, offset=offset
        )
        stored.update({m.id: m for m in more.memories})
        offset += 500
    assert len(stored) == len(ledger.contents)
    for memory_id, content in ledger.contents.items():
        assert stored[memory_id].content == content
        assert (stored[memory_id].deleted_at is not None) == (memory_id in ledger.deleted)
    assert len({m.content_hash for m in stored.values()}) == len(stored)
