"""The low findings of #54, each written as the attack over the real app and database: a
page framing the UI, a teammate's private link steering supersession, MCP exports piling up
files on the server, one user's MCP sessions crowding out another's, and connections held open
by requests that never finish their headers; and one of #65's: bodies trickled a byte at a time
with a valid token.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import httpx
import pytest

from server.adapters.mcp.memories import INLINE_EXPORT_LIMIT
from server.adapters.mcp_sessions import MAX_SESSIONS_PER_USER
from server.core.config import Settings
from server.core.models.memories import MemoryDraft
from server.service.memory import MemoryService
from tests.db_fixtures import TOKEN, free_port
from tests.integration.processes import run_cli
from tests.security.raw_http import PROTOCOL_VERSION
from tests.security.team import Team, team

pytestmark = pytest.mark.security

NODE = [
    "The minimum Node version for the build is 18.",
    "We bumped the minimum Node version for the build to 20.",
    "The minimum Node version for the build is now 22.",
]


async def test_no_page_of_ours_can_be_framed_by_another_site(app_url: str) -> None:
    async with httpx.AsyncClient(base_url=app_url, timeout=60) as client:
        answers = [
            await client.get("/ui/"),
            await client.get("/ui/memories/12"),
            await client.get("/api/stats"),
            await client.get("/health"),
            await client.get("/api/stats", headers={"host": "attacker.example"}),
            await client.post("/mcp", json={}),
        ]

    for answer in answers:
        assert answer.headers.get("x-frame-options") == "DENY", answer.request.url
        policy = answer.headers.get("content-security-policy", "")
        assert "frame-ancestors 'none'" in policy, answer.request.url


async def test_a_teammates_private_link_does_not_stop_my_fact_being_superseded(
    service: MemoryService, settings: Settings
) -> None:
    async with (
        team(service, settings) as crew,
        crew.http("alice") as alice,
        crew.http("bob") as bob,
    ):
        first = await alice.post(
            "/api/memories",
            json={"content": NODE[0], "project": "acme", "visibility": "shared"},
        )
        # bob links his private version to alice's shared fact: only he can see it.
        hidden = await bob.post(
            "/api/memories",
            json={"content": NODE[1], "project": "acme", "visibility": "private"},
        )
        latest = await alice.post(
            "/api/memories",
            json={"content": NODE[2], "project": "acme", "visibility": "shared"},
        )
        bobs = await bob.get(f"/api/memories/{hidden.json()['id']}")
        alices = await alice.get(f"/api/memories/{latest.json()['id']}")

    assert bobs.json()["supersedes"] == first.json()["id"], bobs.text
    assert alices.status_code == 200, alices.text
    assert alices.json()["supersedes"] == first.json()["id"], alices.text


async def test_repeated_mcp_exports_do_not_pile_up_files_on_the_server(
    service: MemoryService, settings: Settings
) -> None:
    drafts = [
        MemoryDraft(f"Inventory line {n}: bin {n % 17} holds {n * 3} parts.", project="acme")
        for n in range(INLINE_EXPORT_LIMIT + 1)
    ]
    await service.save_many(drafts, force=True)
    paths: dict[str, list[str]] = {"alice": [], "bob": []}
    async with team(service, settings) as crew:
        for name, written in paths.items():
            async with crew.mcp(name) as mcp:
                for _ in range(3):
                    result = await mcp.call_tool("export_memories", {"project": "acme"})
                    assert result.structured_content is not None
                    written.append(result.structured_content["path"])

    exports = settings.claude_memory_home / "exports"
    assert sorted(p.name for p in exports.iterdir()) == sorted(
        {Path(paths["alice"][0]).name, Path(paths["bob"][0]).name}
    )
    assert len(set(paths["alice"])) == 1 and len(set(paths["bob"])) == 1
    assert paths["alice"][0] != paths["bob"][0]
    assert len(json.loads(Path(paths["alice"][0]).read_text())) == INLINE_EXPORT_LIMIT + 1


def test_the_server_closes_connections_that_never_finish_their_headers(
    pg_url: str, tmp_path: Path
) -> None:
    env = {
        "CLAUDE_MEMORY_DATABASE_URL": pg_url,
        "CLAUDE_MEMORY_HOME": str(tmp_path),
        "CLAUDE_MEMORY_LOG_LEVEL": "WARNING",
    }
    port = free_port()
    started = run_cli("serve", "--port", str(port), "--detach", env=env)
    assert started.returncode == 0, started.stderr
    held: list[socket.socket] = []
    try:
        for _ in range(20):
            held.append(socket.create_connection(("127.0.0.1", port), timeout=120))
            held[-1].sendall(b"GET /api/stats HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        # Far longer than the server's deadline, so a loaded machine cannot fail the test.
        answers = [connection.recv(1024) for connection in held]
        healthy = httpx.get(f"http://127.0.0.1:{port}/health", timeout=30)
    finally:
        for connection in held:
            connection.close()
        run_cli("stop", env=env)

    assert answers == [b""] * len(held)
    assert healthy.status_code == 200


def trickle_until_closed(connection: socket.socket, body_bytes: int) -> bytes:
    """Send a body one byte each half second until the server closes the connection (b"") or
    answers (what it answered), or the whole body has gone (then its answer)."""
    connection.settimeout(0.5)
    for _ in range(body_bytes):
        try:
            return connection.recv(1024)
        except TimeoutError:
            pass
        try:
            connection.sendall(b" ")
        except (BrokenPipeError, ConnectionResetError):
            return b""
    connection.settimeout(60)
    return connection.recv(1024)


def test_the_server_closes_connections_whose_body_trickles_in_with_a_valid_token(
    pg_url: str, service: MemoryService, tmp_path: Path
) -> None:
    """`service` empties the tables first: a user left by an earlier test would make this a
    team's server, where the test's token is no user's."""
    env = {
        "CLAUDE_MEMORY_DATABASE_URL": pg_url,
        "CLAUDE_MEMORY_HOME": str(tmp_path),
        "CLAUDE_MEMORY_LOG_LEVEL": "WARNING",
        "CLAUDE_MEMORY_TOKEN": TOKEN,
        "CLAUDE_MEMORY_REQUEST_BODY_DEADLINE_SECONDS": "2",
    }
    port = free_port()
    started = run_cli("serve", "--port", str(port), "--detach", env=env)
    assert started.returncode == 0, started.stderr
    body_bytes = 200  # a hundred seconds at the trickle's pace
    held: list[socket.socket] = []
    try:
        for _ in range(5):
            held.append(socket.create_connection(("127.0.0.1", port), timeout=120))
            held[-1].sendall(
                b"POST /api/memories HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + f"Authorization: Bearer {TOKEN}\r\n".encode()
                + b"Content-Type: application/json\r\n"
                + f"Content-Length: {body_bytes}\r\n\r\n".encode()
            )
        answers = [trickle_until_closed(connection, body_bytes) for connection in held]
        healthy = httpx.get(f"http://127.0.0.1:{port}/health", timeout=30)
    finally:
        for connection in held:
            connection.close()
        run_cli("stop", env=env)

    assert answers == [b""] * len(held)
    assert healthy.status_code == 200


async def _open_session(crew: Team, name: str) -> httpx.Response:
    """An MCP session opened with `name`'s token and left open, as a careless script would."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "security-tests", "version": "1"},
        },
    }
    headers = {"accept": "application/json, text/event-stream"}
    async with crew.http(name) as client:
        return await client.post("/mcp", json=initialize, headers=headers)


async def test_one_users_mcp_sessions_cannot_crowd_out_anothers(
    service: MemoryService, settings: Settings
) -> None:
    async with team(service, settings) as crew:
        opened = [await _open_session(crew, "alice") for _ in range(MAX_SESSIONS_PER_USER)]
        refused = await _open_session(crew, "alice")
        bobs = await _open_session(crew, "bob")
        async with crew.http("bob") as bob:
            borrowed = await bob.post(
                "/mcp",
                json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                headers={
                    "accept": "application/json, text/event-stream",
                    "mcp-session-id": opened[0].headers["mcp-session-id"],
                    "mcp-protocol-version": PROTOCOL_VERSION,
                },
            )

    assert all(answer.status_code == 200 for answer in opened)
    assert refused.status_code == 503, refused.text
    assert "too many open MCP sessions" in refused.text
    assert bobs.status_code == 200, bobs.text
    assert borrowed.status_code == 404, borrowed.text
