"""A write made by one process is read by every other at once (#11).

Two `claude-memory serve` processes share one data directory, and so one embedded database.
Each test warms the second server's read cache (list, stats, tags, search), writes through
the first server, the CLI or an `mcp-stdio` process, and checks that the second server's very
next request shows the change. All tests share the two servers: each works on its own words
and tag, and compares counts before and after.

servers (module)    `serve` processes A (writer) and B (reader) on one CLAUDE_MEMORY_HOME
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from fastmcp import Client
from fastmcp.client.transports import StdioTransport

from server.db.embedded import start_embedded
from tests.db_fixtures import free_port
from tests.integration.processes import run_cli, start_cli, wait_for_health

pytestmark = pytest.mark.integration


@dataclass(frozen=True, slots=True)
class Servers:
    home: Path
    a: str
    b: str

    @property
    def env(self) -> dict[str, str]:
        return {"CLAUDE_MEMORY_HOME": str(self.home), "CLAUDE_MEMORY_LOG_LEVEL": "WARNING"}


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    home = tmp_path_factory.mktemp("two-servers") / "data"
    env = {"CLAUDE_MEMORY_HOME": str(home), "CLAUDE_MEMORY_LOG_LEVEL": "WARNING"}
    started: list[subprocess.Popen[str]] = []
    urls = []
    try:
        for _ in range(2):
            port = str(free_port())
            process = start_cli("serve", "--port", port, env=env)
            started.append(process)
            url = f"http://127.0.0.1:{port}"
            wait_for_health(f"{url}/health", process)
            urls.append(url)
        yield Servers(home=home, a=urls[0], b=urls[1])
    finally:
        for process in reversed(started):
            process.send_signal(signal.SIGTERM)
        for process in started:
            process.wait(timeout=60)


@pytest.fixture
async def a(servers: Servers) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=servers.a, timeout=60) as client:
        yield client


@pytest.fixture
async def b(servers: Servers) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=servers.b, timeout=60) as client:
        yield client


@dataclass(frozen=True, slots=True)
class Reads:
    """What B answers for one test's word and tag."""

    listed: list[str]
    active: int
    tag_count: int
    found: list[str]


def unique_word() -> str:
    return f"zq{uuid.uuid4().hex[:10]}"


async def read_b(b: httpx.AsyncClient, word: str, tag: str) -> Reads:
    """List (by tag), stats, tags and a keyword search on B: the reads its cache keeps."""
    listed = await b.get("/api/memories", params={"tag": tag, "limit": 100})
    stats = await b.get("/api/stats")
    tags = await b.get("/api/tags")
    search = await b.post("/api/search", json={"query": word, "mode": "hybrid", "limit": 20})
    for response in (listed, stats, tags, search):
        assert response.status_code == 200, response.text
    tag_counts = {item["tag"]: item["count"] for item in tags.json()}
    return Reads(
        listed=[memory["content"] for memory in listed.json()["memories"]],
        active=stats.json()["active"],
        tag_count=tag_counts.get(tag, 0),
        found=[hit["content"] for hit in search.json()["hits"] if word in hit["content"]],
    )


async def warm_b(b: httpx.AsyncClient, word: str, tag: str) -> Reads:
    """Read twice, so B's answers are in its cache; check they are."""
    await read_b(b, word, tag)
    reads = await read_b(b, word, tag)
    cache = (await b.get("/api/stats")).json()["cache"]
    assert cache["size"] > 0, cache
    return reads


async def save(client: httpx.AsyncClient, content: str, tag: str) -> dict[str, Any]:
    """Save through REST; the stored memory (201 means saved, not a duplicate or noop)."""
    response = await client.post("/api/memories", json={"content": content, "tags": [tag]})
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def sentence(word: str, topic: str) -> str:
    return f"The {topic} decision {word} was settled in review: {uuid.uuid4().hex}."


async def test_a_save_on_one_server_is_listed_counted_and_found_on_the_other(
    a: httpx.AsyncClient, b: httpx.AsyncClient
) -> None:
    word, tag = unique_word(), unique_word()
    before = await warm_b(b, word, tag)
    content = sentence(word, "cache")

    await save(a, content, tag)

    after = await read_b(b, word, tag)
    assert after.listed == [content]
    assert after.active == before.active + 1
    assert (before.tag_count, after.tag_count) == (0, 1)
    assert (before.found, after.found) == ([], [content])


async def test_an_update_on_one_server_is_read_by_the_other(
    a: httpx.AsyncClient, b: httpx.AsyncClient
) -> None:
    word, tag = unique_word(), unique_word()
    saved = await save(a, sentence(word, "queue"), tag)
    await warm_b(b, word, tag)
    edited = f"Replaced: the queue now retries twice, {word} stays as it was."

    response = await a.patch(f"/api/memories/{saved['id']}", json={"content": edited})
    assert response.status_code == 200, response.text

    after = await read_b(b, word, tag)
    assert after.listed == [edited]
    assert after.found == [edited]


async def test_a_delete_and_a_restore_on_one_server_are_read_by_the_other(
    a: httpx.AsyncClient, b: httpx.AsyncClient
) -> None:
    word, tag = unique_word(), unique_word()
    content = sentence(word, "lockfile")
    saved = await save(a, content, tag)
    before = await warm_b(b, word, tag)

    assert (await a.delete(f"/api/memories/{saved['id']}")).status_code == 200
    deleted = await read_b(b, word, tag)
    assert (await a.post(f"/api/memories/{saved['id']}/restore")).status_code == 200
    restored = await read_b(b, word, tag)

    assert (before.listed, deleted.listed, restored.listed) == ([content], [], [content])
    assert (deleted.active, restored.active) == (before.active - 1, before.active)
    assert (deleted.tag_count, restored.tag_count) == (0, 1)
    assert (deleted.found, restored.found) == ([], [content])


async def test_a_bulk_delete_on_one_server_is_read_by_the_other(
    a: httpx.AsyncClient, b: httpx.AsyncClient
) -> None:
    word, tag = unique_word(), unique_word()
    for topic in ("retry", "timeout", "pool"):
        await save(a, sentence(word, topic), tag)
    before = await warm_b(b, word, tag)

    response = await a.delete("/api/memories", params={"tag": tag, "dry_run": "false"})
    assert response.status_code == 200, response.text

    after = await read_b(b, word, tag)
    assert len(before.listed) == 3 and after.listed == []
    assert after.active == before.active - 3
    assert (before.tag_count, after.tag_count) == (3, 0)
    assert len(before.found) == 3 and after.found == []


async def test_an_import_by_the_cli_is_read_by_a_running_server(
    servers: Servers, b: httpx.AsyncClient, tmp_path: Path
) -> None:
    word = unique_word()
    note = tmp_path / f"{word}.md"
    note.write_text(
        f"---\ntags: [{word}]\n---\n# Deploy notes\n\n"
        f"Deploys go out on Thursdays after the {word} checklist is green.\n",
        encoding="utf-8",
    )
    before = await warm_b(b, word, word)

    result = run_cli("import", "--text", str(note), "--json", env=servers.env)
    assert result.returncode == 0, result.stderr

    after = await read_b(b, word, word)
    assert before.listed == [] and len(after.listed) == 1
    assert after.active == before.active + 1
    assert (before.tag_count, after.tag_count) == (0, 1)
    assert before.found == [] and len(after.found) == 1


async def test_a_save_through_mcp_stdio_is_read_by_a_running_server(
    servers: Servers, b: httpx.AsyncClient
) -> None:
    word, tag = unique_word(), unique_word()
    before = await warm_b(b, word, tag)
    content = sentence(word, "stdio")
    transport = StdioTransport(
        sys.executable, ["-m", "server.cli", "mcp-stdio"], env={**os.environ, **servers.env}
    )

    async with Client(transport, timeout=120) as client:
        saved = await client.call_tool("save_memory", {"content": content, "tags": [tag]})
        assert saved.structured_content is not None
        assert saved.structured_content["status"] == "saved"
        after = await read_b(b, word, tag)

    assert after.listed == [content]
    assert after.active == before.active + 1
    assert (before.found, after.found) == ([], [content])


def terminate_other_connections(home: Path) -> int:
    """pg_terminate_backend for every client connection to our database but this one."""
    embedded = start_embedded(home / "pg")
    try:
        with psycopg.connect(embedded.url, autocommit=True) as conn:
            rows = conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                " AND backend_type = 'client backend'"
            ).fetchall()
            return sum(1 for (done,) in rows if done)
    finally:
        embedded.release()


async def test_reads_stay_fresh_after_the_servers_connections_are_terminated(
    servers: Servers, a: httpx.AsyncClient, b: httpx.AsyncClient
) -> None:
    word, tag = unique_word(), unique_word()
    before = await warm_b(b, word, tag)

    assert terminate_other_connections(servers.home) >= 2
    content = sentence(word, "reconnect")
    await save(a, content, tag)

    after = await read_b(b, word, tag)
    assert after.listed == [content]
    assert after.active == before.active + 1
    assert (before.found, after.found) == ([], [content])
