"""Trajectories: learned over MCP, REST and the CLI, found first for a related task, labelled.

The acme fixture sessions are imported first, with distilled facts about the same code, so a
trajectory competes with the raw turns and facts that talk about its task.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastmcp import Client

from server.core.models.memories import MemoryFilter
from server.service.memory import MemoryService
from tests.integration.acme_facts import PAGINATION, PNPM, remember
from tests.integration.hook_runs import context_of, payload, run_hook
from tests.integration.processes import run_cli

CURSOR_FIX = {
    "task": "Fix GET /orders pagination skipping rows that share a created_at timestamp",
    "worked": "Put created_at::text in the keyset cursor instead of a JS Date, which drops "
    "Postgres microseconds; compare (created_at, id) as text-cast tuples.",
    "avoid": "Rounding timestamps to milliseconds in SQL; re-running the flaky vitest case.",
    "tags": ["pagination", "postgres"],
    "project": "acme-api",
}
RELATED_TASK = "the orders list skips some rows when paging with the cursor"


@pytest.fixture
async def acme(imported: Path, service: MemoryService) -> None:
    """The fixture sessions imported, and distilled facts of acme-api beside them."""
    for fact in (PNPM, PAGINATION):
        await remember(service, fact)


@pytest.fixture(params=["sse", "http"])
async def mcp(request: pytest.FixtureRequest, app_url: str) -> AsyncIterator[Client[Any]]:
    path = "/sse" if request.param == "sse" else "/mcp"
    async with Client(f"{app_url}{path}") as client:
        yield client


async def test_learn_then_a_related_query_returns_the_trajectory_first(
    mcp: Client[Any], acme: None, service: MemoryService
) -> None:
    await remember(
        service,
        "Bug root cause: JS Date truncates Postgres microseconds, so the orders cursor skipped "
        "rows that tie on created_at.",
    )
    learned = await mcp.call_tool("learn", CURSOR_FIX)
    outcome = learned.structured_content
    assert outcome is not None and outcome["status"] == "saved"
    memory = outcome["memory"]
    assert memory["kind"] == "trajectory"
    assert memory["content"].splitlines() == [
        f"Task: {CURSOR_FIX['task']}",
        f"What worked: {CURSOR_FIX['worked']}",
        f"What to avoid: {CURSOR_FIX['avoid']}",
    ]
    assert memory["metadata"]["trajectory"]["avoid"] == CURSOR_FIX["avoid"]

    for tool in ("hybrid_search", "semantic_search"):
        found = await mcp.call_tool(tool, {"query": RELATED_TASK, "project": "acme-api"})
        hits = found.structured_content["hits"]  # type: ignore[index]
        assert len(hits) > 1, "the imported sessions compete with the trajectory"
        assert (hits[0]["id"], hits[0]["kind"]) == (outcome["id"], "trajectory"), tool


async def test_prompt_recall_labels_the_trajectory(
    app_url: str, acme: None, service: MemoryService
) -> None:
    outcome = await service.learn(_trajectory(), source="test")

    run = await run_hook(
        "user-prompt-submit", payload("UserPromptSubmit", prompt=RELATED_TASK), app_url
    )

    context = context_of(run, "UserPromptSubmit")
    lines = [line for line in context.splitlines() if line.startswith("- ")]
    assert f"[trajectory #{outcome.id}, acme-api" in lines[0]
    assert "Task: Fix GET /orders pagination" in lines[0]


async def test_rest_learns_once_and_explains_what_is_missing(
    app_url: str, service: MemoryService
) -> None:
    async with httpx.AsyncClient(base_url=app_url) as client:
        first = await client.post("/api/trajectories", json=CURSOR_FIX)
        again = await client.post("/api/trajectories", json=CURSOR_FIX)
        no_fix = await client.post("/api/trajectories", json={**CURSOR_FIX, "worked": "  "})
        no_task = await client.post("/api/trajectories", json={"worked": "x"})

    assert first.status_code == 201
    assert (first.json()["memory"]["kind"], first.json()["memory"]["source"]) == (
        "trajectory",
        "api",
    )
    assert again.status_code == 200
    assert (again.json()["status"], again.json()["id"]) == ("duplicate", first.json()["id"])
    assert no_fix.status_code == 400
    assert "worked is empty" in no_fix.json()["error"]["message"]
    assert no_task.status_code in (400, 422)
    assert "task" in no_task.json()["error"]["message"]
    page = await service.list_memories(MemoryFilter(kind="trajectory"))
    assert [m.id for m in page.memories] == [first.json()["id"]]


async def test_a_trajectory_never_replaces_a_fact(service: MemoryService) -> None:
    fact = await remember(service, "CI runs on Node 20 for acme-api.")
    outcome = await service.learn(
        _trajectory(
            task="Get the acme-api CI green after the Node upgrade",
            worked="CI runs on Node 22 now; pin the pnpm version in package.json.",
            avoid="",
        ),
        source="test",
    )

    assert outcome.memory is not None and outcome.memory.supersedes is None
    assert (await service.get(fact)).superseded_by is None


async def test_the_cli_learns_a_trajectory(
    pg_url: str, tmp_path: Path, service: MemoryService
) -> None:
    env = {
        "CLAUDE_MEMORY_DATABASE_URL": pg_url,
        "CLAUDE_MEMORY_HOME": str(tmp_path),
        "CLAUDE_MEMORY_LOG_LEVEL": "WARNING",
    }
    task, worked = str(CURSOR_FIX["task"]), str(CURSOR_FIX["worked"])

    learned = run_cli("learn", task, "--worked", worked, "--tag", "pagination", env=env)
    empty = run_cli("learn", " ", "--worked", "x", env=env)

    assert learned.returncode == 0, learned.stderr
    saved = json.loads(learned.stdout)
    assert (saved["status"], saved["memory"]["kind"]) == ("saved", "trajectory")
    assert saved["memory"]["tags"] == ["pagination"]
    assert (await service.get(saved["id"])).source == "cli"
    assert (empty.returncode, empty.stdout) == (1, "")
    assert "task is empty" in empty.stderr


def _trajectory(**changes: Any) -> Any:
    from server.domain.trajectories import Trajectory

    fields = {**CURSOR_FIX, **changes}
    return Trajectory(
        fields["task"], fields["worked"], fields["avoid"], fields["tags"], fields["project"]
    )
