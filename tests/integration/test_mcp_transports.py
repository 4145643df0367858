"""MCP transports: the legacy SSE handshake by hand, concurrency, and stdio."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from fastmcp import Client
from fastmcp.client.transports import StdioTransport

from server.service.memory import MemoryService
from tests.integration.mcp_names import TOOLS


async def test_legacy_sse_handshake_by_hand(app_url: str, service: MemoryService) -> None:
    """What `claude mcp add --transport sse` does: GET /sse, then POST JSON-RPC to the endpoint."""
    saved = await service.save("Conventional Commits, subject under 72 characters.")

    async with (
        httpx.AsyncClient(base_url=app_url, timeout=30) as client,
        client.stream("GET", "/sse") as stream,
    ):
        events = stream.aiter_lines()
        endpoint = await next_data(events, "endpoint")
        requests: list[dict[str, Any]] = [
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "hand-test", "version": "1"},
                },
            },
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "get_memory", "arguments": {"memory_id": saved.id}},
            },
        ]
        accepted = [(await client.post(endpoint, json=r)).status_code for r in requests]
        initialized = json.loads(await next_data(events, "message"))
        answer = json.loads(await next_data(events, "message"))

    assert endpoint.startswith("/messages/?session_id=")
    assert accepted == [202, 202, 202]
    assert initialized["id"] == 1
    assert initialized["result"]["serverInfo"]["name"] == "claude-memory"
    assert answer["id"] == 2
    assert answer["result"]["structuredContent"]["id"] == saved.id


async def next_data(lines: Any, event: str) -> str:
    """The data line of the next SSE event named `event` (skipping pings and others)."""
    current = None
    async for line in lines:
        if line.startswith("event:"):
            current = line.split(":", 1)[1].strip()
        elif line.startswith("data:") and current == event:
            return str(line.split(":", 1)[1].strip())
    raise AssertionError(f"stream ended before a {event!r} event")


async def test_parallel_saves_of_distinct_content_all_land_once(
    app_url: str, service: MemoryService
) -> None:
    contents = [
        f"Fact {i}: the service on port {4000 + i} owns queue q{i * 37}." for i in range(20)
    ]

    async with Client(f"{app_url}/mcp") as client:
        results = await asyncio.gather(
            *(client.call_tool("save_memory", {"content": c, "force": True}) for c in contents)
        )

    assert all(not r.is_error for r in results)
    async with service.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT content, count(*) FROM memories GROUP BY content ORDER BY content"
        )
        rows = await cur.fetchall()
    assert sorted(contents) == [row[0] for row in rows]
    assert all(row[1] == 1 for row in rows)


async def test_health_answers_while_a_long_text_is_embedded(app_url: str) -> None:
    long_text = " ".join(
        f"sentence {i} about caching strategy number {i % 97}." for i in range(2050)
    )
    assert 90_000 < len(long_text) <= 100_000

    async with Client(f"{app_url}/sse") as client, httpx.AsyncClient() as http:
        saving = asyncio.create_task(client.call_tool("save_memory", {"content": long_text}))
        await asyncio.sleep(0.3)
        health = await http.get(f"{app_url}/health")
        still_embedding = not saving.done()
        saved = await saving

    assert health.status_code == 200
    assert still_embedding  # answered while the save was still embedding: the loop was free
    assert not saved.is_error


async def test_stdio_serves_the_same_tools(
    fresh_database: Callable[[], str], tmp_path: Path
) -> None:
    env = {
        **os.environ,
        "CLAUDE_MEMORY_DATABASE_URL": fresh_database(),
        "CLAUDE_MEMORY_HOME": str(tmp_path),
        "CLAUDE_MEMORY_LOG_LEVEL": "WARNING",
    }
    transport = StdioTransport(sys.executable, ["-m", "server.cli", "mcp-stdio"], env=env)

    async with Client(transport, timeout=120) as client:
        names = {tool.name for tool in await client.list_tools()}
        saved = await client.call_tool("save_memory", {"content": "stdio works end to end."})
        found = await client.call_tool("search_memories", {"query": "stdio"})

    assert names == TOOLS  # stdio serves every tool the HTTP transports do
    assert saved.structured_content is not None
    assert saved.structured_content["status"] == "saved"
    assert found.structured_content is not None
    assert found.structured_content["hits"][0]["id"] == saved.structured_content["id"]
