"""`claude-memory users`, tokens and owners (#24): the CLI against the test database, a real
server checking tokens on every request, and jobs that act for a session's owner.

The walk over every REST operation and MCP tool as two users is tests/integration/
test_team_scopes.py; this file covers how users come and go and whose rows jobs write.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from fastmcp import Client

from server.app import create_app
from server.core.access import acting_as
from server.core.config import Secret, Settings
from server.core.models.journal import JournalFilter, JournalPrompt, SessionEvent
from server.core.models.memories import MemoryFilter
from server.ingest.importer import ImportFilters, SessionImporter
from server.service.memory import MemoryService
from tests.db_fixtures import serving
from tests.fixture_sessions import CLAUDE_PROJECTS
from tests.integration.distilling import distill, lesson_model
from tests.integration.processes import run_cli
from tests.llm_stub import ScriptedLLM

LEGACY_TOKEN = "the-single-user-token-0123456789"


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    with lesson_model() as server:
        yield server


def users_cli(pg_url: str, home: Path, *args: str) -> tuple[int, str, str]:
    result = run_cli(
        "users",
        *args,
        env={
            "CLAUDE_MEMORY_DATABASE_URL": pg_url,
            "CLAUDE_MEMORY_HOME": str(home),
            "CLAUDE_MEMORY_LOG_LEVEL": "WARNING",
        },
    )
    return result.returncode, result.stdout, result.stderr


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


async def test_users_add_prints_a_token_once_and_stores_only_its_digest(
    service: MemoryService, pg_url: str, tmp_path: Path
) -> None:
    code, out, err = users_cli(pg_url, tmp_path, "add", "Alice", "--project", "infra")
    listed_code, listed, _ = users_cli(pg_url, tmp_path, "list")
    again, _, again_err = users_cli(pg_url, tmp_path, "add", "alice")
    bad, _, bad_err = users_cli(pg_url, tmp_path, "add", "no spaces allowed")

    assert code == 0, err
    added = json.loads(out)
    token = added["token"]
    assert token.startswith("cmu_") and len(token) > 40
    assert added["user"]["name"] == "alice" and added["user"]["projects"] == ["infra"]
    async with service.pool.connection() as conn:
        cur = await conn.execute("SELECT token_hash FROM users")
        stored = [row[0] for row in await cur.fetchall()]
    assert stored == [hashlib.sha256(token.encode()).hexdigest()]
    assert listed_code == 0
    [alice] = json.loads(listed)["users"]
    assert alice["name"] == "alice" and alice["revoked_at"] is None
    assert token not in listed
    assert again == 1 and "exists already" in again_err
    assert bad == 1 and "user names are" in bad_err


async def test_the_first_user_closes_the_server_to_everything_but_user_tokens(
    service: MemoryService, settings: Settings, pg_url: str, tmp_path: Path
) -> None:
    guarded = replace(settings, claude_memory_token=Secret(LEGACY_TOKEN))
    async with serving(create_app(guarded, service)) as url:
        async with httpx.AsyncClient(base_url=url, timeout=30) as http:
            single_user = await http.get("/api/stats", headers=bearer(LEGACY_TOKEN))
            code, out, err = users_cli(pg_url, tmp_path, "add", "alice")
            assert code == 0, err
            token = json.loads(out)["token"]
            legacy = await http.get("/api/stats", headers=bearer(LEGACY_TOKEN))
            anonymous = await http.get("/api/stats")
            as_alice = await http.get("/api/stats", headers=bearer(token))
            health = await http.get("/health")
        async with Client(f"{url}/mcp", auth=token) as client:
            tool = await client.call_tool("get_stats", {})

    assert single_user.status_code == 200
    assert legacy.status_code == 401 and anonymous.status_code == 401
    assert legacy.json()["error"]["code"] == "unauthorized"
    assert as_alice.status_code == 200
    assert health.status_code == 200
    assert tool.structured_content is not None


async def test_users_revoke_refuses_the_token_at_once_on_a_running_server(
    service: MemoryService, settings: Settings, pg_url: str, tmp_path: Path
) -> None:
    new, _ = await service.users.add("bob")
    async with (
        serving(create_app(settings, service)) as url,
        httpx.AsyncClient(base_url=url, timeout=30) as http,
    ):
        before = await http.get("/api/memories", headers=bearer(new.token))
        code, _, err = users_cli(pg_url, tmp_path, "revoke", "bob")
        assert code == 0, err
        after = [
            await http.get("/api/memories", headers=bearer(new.token)),
            await http.post("/api/search", json={"query": "x"}, headers=bearer(new.token)),
            await http.post(
                "/api/hooks/prompt",
                json={"session_id": "s", "cwd": "/tmp", "prompt": "hello there"},
                headers=bearer(new.token),
            ),
            await http.post("/mcp", json={}, headers=bearer(new.token)),
            await http.get("/sse", headers=bearer(new.token)),
        ]
    again, _, again_err = users_cli(pg_url, tmp_path, "revoke", "bob")

    assert before.status_code == 200
    assert [response.status_code for response in after] == [401] * len(after)
    assert again == 1 and "no active user" in again_err


async def test_claiming_makes_a_single_user_store_the_first_users_private_memories(
    service: MemoryService, pg_url: str, tmp_path: Path
) -> None:
    saved = await service.save("The deploy pipeline runs terraform plan on every pull request.")
    code, out, err = users_cli(pg_url, tmp_path, "add", "alice", "--claim-unowned")
    assert code == 0, err
    claimed = json.loads(out)["claimed"]
    bob, _ = await service.users.add("bob")
    alice_viewer = await service.users.viewer_by_id(1)

    with acting_as(alice_viewer):
        alices = await service.get(saved.id)
    with acting_as(service.users.viewer(bob.user)):
        bobs = await service.list_memories(MemoryFilter(), limit=10)

    assert claimed == {"memories": 1, "sessions": 0}
    assert alices.owner == "alice" and alices.visibility == "private"
    assert bobs.total == 0


async def test_claiming_gives_the_journal_too_so_the_users_hooks_complete_its_rows(
    service: MemoryService,
) -> None:
    # Journaled before users: ownerless rows, keyed per owner since migration 017.
    at = datetime.now(UTC)
    call = SessionEvent(
        "s-claimed", None, "r-1", "toolu_claimed", "Bash", "make", None, at, "", prompt_key="p-1"
    )
    await service.record_calls([call])
    await service.record_prompts([JournalPrompt("s-claimed", "p-1", "run make", at, "")])
    alice, _ = await service.users.add("alice", claim_unowned=True)

    with acting_as(service.users.viewer(alice.user)):
        await service.record_calls([replace(call, record_uuid=None, success=True, error=None)])
        await service.record_prompts([JournalPrompt("s-claimed", "p-1", "run make", at, "")])
        page = await service.journal(JournalFilter(session_id="s-claimed"))
    async with service.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT 'call', owner_id FROM session_events UNION ALL"
            " SELECT 'prompt', owner_id FROM journal_prompts ORDER BY 1"
        )
        owners = await cur.fetchall()

    assert owners == [("call", alice.user.id), ("prompt", alice.user.id)]
    assert [(e.prompt, [c.success for c in e.calls]) for e in page.entries] == [
        ("run make", [True])
    ]


async def test_an_import_as_a_user_and_its_distillation_belong_to_that_user(
    service: MemoryService,
    llm: ScriptedLLM,
    tmp_path: Path,
) -> None:
    alice, _ = await service.users.add("alice")
    bob, _ = await service.users.add("bob")
    alice_viewer = service.users.viewer(alice.user)
    projects = tmp_path / "projects"
    shutil.copytree(CLAUDE_PROJECTS, projects)

    with acting_as(alice_viewer):
        await SessionImporter(service, ImportFilters()).run(projects)
    summary = await distill(service, llm)  # as nobody: each session is distilled as its owner
    with acting_as(alice_viewer):
        page = await service.list_memories(MemoryFilter(), limit=200)
        alice_sessions = await service.sessions(limit=50)
    with acting_as(service.users.viewer(bob.user)):
        bobs = await service.list_memories(MemoryFilter(include_archived=True), limit=50)
        bob_sessions = await service.sessions(limit=50)
        bob_journal = await service.journal()
    with acting_as(alice_viewer):
        alice_journal = await service.journal()

    assert summary.distilled >= 1 and summary.memories_saved >= 1
    learned = [m for m in page.memories if m.kind != "raw"]
    assert len(learned) == summary.memories_saved
    assert {(m.owner, m.visibility) for m in page.memories} == {("alice", "private")}
    assert alice_sessions.total >= 1
    assert bobs.total == 0
    assert bob_sessions.total == 0
    assert alice_journal.entries
    assert bob_journal.entries == []


@pytest.mark.parametrize("transport", ["/mcp", "/sse"])
async def test_an_mcp_save_records_its_user_and_the_visibility_asked_for(
    service: MemoryService, settings: Settings, transport: str
) -> None:
    alice, _ = await service.users.add("alice")
    async with (
        serving(create_app(settings, service)) as url,
        Client(f"{url}{transport}", auth=alice.token) as client,
    ):
        private = await client.call_tool(
            "save_memory", {"content": "Alice keeps her scratch notes under ~/notes/acme."}
        )
        shared = await client.call_tool(
            "save_memory",
            {
                "content": "The acme team moved the Terraform lock to a lockfile in S3.",
                "project": "acme",
                "visibility": "shared",
            },
        )

    assert private.structured_content is not None and shared.structured_content is not None
    first = private.structured_content["memory"]
    second = shared.structured_content["memory"]
    assert (first["owner"], first["visibility"]) == ("alice", "private")
    assert (second["owner"], second["visibility"]) == ("alice", "shared")


async def test_import_as_a_user_files_the_sessions_under_that_user(
    service: MemoryService, pg_url: str, tmp_path: Path
) -> None:
    alice, _ = await service.users.add("alice")
    projects = tmp_path / "projects"
    shutil.copytree(CLAUDE_PROJECTS, projects)
    env = {
        "CLAUDE_MEMORY_DATABASE_URL": pg_url,
        "CLAUDE_MEMORY_HOME": str(tmp_path),
        "CLAUDE_MEMORY_LOG_LEVEL": "WARNING",
    }

    unknown = run_cli("import", "--claude-code", str(projects), "--user", "carol", env=env)
    imported = run_cli("import", "--claude-code", str(projects), "--user", "alice", env=env)
    async with service.pool.connection() as conn:
        cur = await conn.execute("SELECT DISTINCT owner_id FROM imported_sessions")
        owners = [row[0] for row in await cur.fetchall()]

    assert unknown.returncode == 1 and "no active user named 'carol'" in unknown.stderr
    assert imported.returncode == 0, imported.stderr
    assert owners == [alice.user.id]
