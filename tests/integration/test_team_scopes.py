"""Users and scopes (#24): two teammates walk every REST operation and every MCP tool.

alice and bob both belong to project "team". Each saves, over HTTP with their own token, a
private preference (`<name>secretmarker`), a shared one (`<name>teammarker`), a trajectory
(`<name>trajectorymarker`) and a memory they then delete (`<name>deletedmarker`); journals a
tool call through the tool hook (`<name>journalmarker`) and imports a session with their own
import, `import --user` (`<name>sessionmarker`). Then each calls every operation of
server/adapters/route_table.OPERATIONS and every tool of build_mcp(): no answer may hold the
other's private text, the ids of their private memories or their session; the listing and
search answers must hold the caller's own private memories and the other's shared one; the
other's shared memory can be read but not changed, their private one is not found.

The MCP cases run over streamable HTTP (/mcp), and the read-only ones over SSE as well.
REST_CASES and MCP_CASES name one case per operation and per tool, and
test_team_scope_cases_cover_every_route_and_tool checks they name exactly those: a route or a
tool added without a case here fails it. Further tests: a revoked token is refused by every
route and tool; bulk deletes touch only the caller's memories; a user outside the project
sees none of its shared memories; journal entries hooked before their session is imported,
and the last user's revocation, keep a user's data to themselves.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastmcp import Client
from mcp.shared.exceptions import MCPError

from server.adapters.mcp import build_mcp
from server.adapters.route_table import OPERATIONS
from server.agents.registry import AGENTS
from server.app import create_app
from server.core.access import acting_as
from server.core.config import Settings
from server.core.models.memories import MemoryFilter
from server.ingest.session_imports import import_session
from server.service.memory import MemoryService
from tests.db_fixtures import serving
from tests.transcripts import SessionWriter

TEAM = "team"
CWD = "/home/dev/team"
OPERATION = {op.operation_id: op for op in OPERATIONS}
# Each user's private memory states this fact with their marker in front: the probe is a near
# copy (>= the write guard's 0.92) of both, and only the caller's own may ever come back for it,
# as the duplicate that stopped a save, a check's target or a search hit.
ROTATION = (
    "the staging database password rotates every Friday at 18:00 UTC, the new one is kept in the"
    " ops vault, and the CI secrets are refreshed by the rotate-staging job right after it."
)
PROBE = ROTATION[0].upper() + ROTATION[1:]
SCRATCH = "{name} scratch note {n}: the {topic} dashboard moved to the new Grafana folder."
# Keys whose values are memory ids in any answer (lessons, which have ids of their own, are
# skipped by `memory_ids`).
MEMORY_ID_KEYS = {"id", "first_id", "second_id", "target_id", "supersedes", "superseded_by"}

TEXTS: dict[str, dict[str, Any]] = {
    "alice": {
        "private": f"Note alicesecretmarker. {ROTATION}",
        "shared": "aliceteammarker: the team squashes pull requests when merging to main, so "
        "main keeps one commit per change.",
        "trajectory": {
            "task": "alicetrajectorymarker: fix the flaky checkout integration test",
            "worked": "freeze the payment sandbox clock in the test fixture",
            "avoid": "retrying the job in CI until it passes",
        },
        "deleted": "alicedeletedmarker: the old billing cron job ran at 02:00 before it moved "
        "to the queue worker.",
        "lesson": ("terraform apply", "Run terraform plan and get a review before applying."),
        "command": "psql -c 'VACUUM ANALYZE alicejournalmarker_orders'",
        "prompt": "alicesessionmarker: why does the nightly invoice export time out?",
        "answer": "The export query scans invoices without an index on created_at; adding the "
        "index brings it under a minute.",
    },
    "bob": {
        "private": f"Note bobsecretmarker. {ROTATION}",
        "shared": "bobteammarker: the team runs database migrations with alembic upgrade head "
        "before the API containers start.",
        "trajectory": {
            "task": "bobtrajectorymarker: speed up the slow docker image build of the API",
            "worked": "cache the pip wheels in a separate build stage and copy them in",
            "avoid": "installing compilers in the final image",
        },
        "deleted": "bobdeletedmarker: the load balancer health check used to call /status "
        "instead of /health.",
        "lesson": ("kubectl delete", "Never delete in the prod namespace; scale to zero instead."),
        "command": "redis-cli -n 3 FLUSHDB bobjournalmarker",
        "prompt": "bobsessionmarker: how do we rotate the TLS certificates of the ingress?",
        "answer": "cert-manager renews them on its own; force a renewal with cmctl renew.",
    },
}
SESSION_IDS = {
    "alice": "5e55a11c-0000-4000-8000-000000000001",
    "bob": "5e55b0b0-0000-4000-8000-000000000002",
}


@dataclass
class Person:
    """A user and what they stored; `turn_ids` are their imported session's raw turns."""

    name: str
    token: str
    transcript: Path
    private_id: int = 0
    shared_id: int = 0
    trajectory_id: int = 0
    deleted_id: int = 0
    lesson_id: int = 0
    turn_ids: set[int] = field(default_factory=set)

    @property
    def session_id(self) -> str:
        return SESSION_IDS[self.name]

    @property
    def secrets(self) -> tuple[str, ...]:
        """Text of theirs no teammate may ever be shown."""
        return (
            f"{self.name}secretmarker",
            f"{self.name}trajectorymarker",
            f"{self.name}deletedmarker",
            f"{self.name}journalmarker",
            f"{self.name}sessionmarker",
            self.session_id,
        )

    @property
    def private_ids(self) -> set[int]:
        return {self.private_id, self.trajectory_id, self.deleted_id, *self.turn_ids}

    @property
    def team_marker(self) -> str:
        return f"{self.name}teammarker"

    @property
    def secret_marker(self) -> str:
        return f"{self.name}secretmarker"


def memory_ids(value: Any) -> set[int]:
    """Every memory id in a JSON answer (lesson objects, lesson_ids and receipts' own ids left
    out)."""
    found: set[int] = set()
    if isinstance(value, dict):
        if "pattern" in value and "strictness" in value:  # a lesson
            return found
        if "hook" in value and "tokens" in value:  # a receipt: its `id` is its own
            return {i for i in value.get("memory_ids", []) if isinstance(i, int)}
        for key, item in value.items():
            if key in MEMORY_ID_KEYS and isinstance(item, int):
                found.add(item)
            elif key == "memory_ids" and isinstance(item, list):
                found.update(i for i in item if isinstance(i, int))
            elif key != "lesson_ids":
                found |= memory_ids(item)
    elif isinstance(value, list):
        for item in value:
            found |= memory_ids(item)
    return found


def strings_in(value: Any) -> set[str]:
    """Every string in a request's parameters or body: an answer may echo what was sent."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set().union(*(strings_in(v) for v in value.values()), set())
    if isinstance(value, list | tuple):
        return set().union(*(strings_in(v) for v in value), set())
    return set()


@dataclass
class Answer:
    status: int
    text: str
    data: Any

    def error_code(self) -> str:
        return str(self.data["error"]["code"])


@dataclass
class Visit:
    """One user calling the server, with every answer checked for the other user's data."""

    me: Person
    other: Person
    http: httpx.AsyncClient
    mcp: Client[Any]
    service: MemoryService
    scratch_count: int = 0

    def check(self, label: str, text: str, data: Any, sent: Any = None) -> None:
        """No secret of the other user in `text` (what the caller `sent` may be echoed)."""
        for echoed in sorted(strings_in(sent), key=len, reverse=True):
            text = text.replace(json.dumps(echoed)[1:-1], "").replace(echoed, "")
        for secret in self.other.secrets:
            assert secret not in text, f"{self.me.name}: {label} shows {self.other.name}'s {secret}"
        leaked = memory_ids(data) & self.other.private_ids
        assert not leaked, f"{self.me.name}: {label} shows {self.other.name}'s private {leaked}"

    async def rest(
        self,
        operation_id: str,
        *,
        status: int = 200,
        params: dict[str, Any] | None = None,
        body: Any = None,
        **path: Any,
    ) -> Answer:
        op = OPERATION[operation_id]
        url = op.path.format(**path)
        response = await self.http.request(op.method, url, params=params, json=body)
        label = f"{op.method} {url} {params or ''}"
        try:
            data = response.json()
        except ValueError:
            data = None
        self.check(label, response.text, data, sent=[params, body])
        assert response.status_code == status, f"{self.me.name}: {label}: {response.text[:500]}"
        return Answer(response.status_code, response.text, data)

    async def refused(self, operation_id: str, status: int, code: str, **kwargs: Any) -> None:
        answer = await self.rest(operation_id, status=status, **kwargs)
        assert answer.error_code() == code, answer.text

    async def tool(self, name: str, error: str | None = None, **arguments: Any) -> Any:
        result = await self.mcp.call_tool(name, arguments, raise_on_error=False)
        texts = " ".join(getattr(block, "text", "") for block in result.content)
        data = result.structured_content
        self.check(f"tool {name}({arguments})", texts + json.dumps(data), data, sent=arguments)
        if error is None:
            assert not result.is_error, f"{self.me.name}: {name}({arguments}): {texts}"
        else:
            assert result.is_error, f"{self.me.name}: {name}({arguments}) should fail: {texts}"
            assert error in texts, texts
        return data

    async def scratch(self, visibility: str = "private") -> int:
        """A fresh memory of the caller's own, to change or delete."""
        self.scratch_count += 1
        topic = "latency" if visibility == "private" else "error budget"
        content = SCRATCH.format(name=self.me.name, n=self.scratch_count, topic=topic)
        created = await self.rest(
            "createMemory",
            status=201,
            body={"content": content, "project": TEAM, "visibility": visibility, "force": True},
        )
        assert created.data["owner"] == self.me.name
        return int(created.data["id"])

    def ids_of(self, answer: Answer) -> set[int]:
        return memory_ids(answer.data)


Case = Callable[[Visit], Awaitable[None]]


# ----- REST: one case per operation of the route table -----------------------------------------


async def rest_health(v: Visit) -> None:
    answer = await v.rest("health")
    assert answer.data["status"] == "ok"


async def rest_invalidate_cache(v: Visit) -> None:
    answer = await v.rest("invalidateCache")
    assert answer.data == {"status": "ok"}


async def rest_openapi(v: Visit) -> None:
    answer = await v.rest("openapi")
    assert "/api/memories" in answer.data["paths"]


async def rest_stats(v: Visit) -> None:
    stats = (await v.rest("stats")).data
    live = await v.rest("listMemories", params={"include_archived": "true", "limit": 1})
    deleted = await v.rest(
        "listMemories", params={"only_deleted": "true", "include_archived": "true", "limit": 1}
    )
    sessions = await v.rest("listSessions")
    assert stats["active"] == live.data["total"]
    assert stats["deleted"] == deleted.data["total"]
    assert sum(stats["by_project"].values()) == stats["active"]
    assert stats["sessions"]["imported"] == sessions.data["total"] == 1


async def rest_agents(v: Visit) -> None:
    agents = (await v.rest("agents")).data
    assert agents == [{"name": a.name, "label": a.label} for a in AGENTS.values()]


async def rest_projects(v: Visit) -> None:
    projects = (await v.rest("projects")).data
    stats = (await v.rest("stats")).data
    assert TEAM in {p["project"] for p in projects}
    assert sum(p["count"] for p in projects) == stats["active"]


async def rest_tags(v: Visit) -> None:
    tags = {t["tag"]: t["count"] for t in (await v.rest("tags")).data}
    assert tags[v.me.secret_marker] == 1
    assert "team-decision" in tags


async def rest_list_memories(v: Visit) -> None:
    page = await v.rest("listMemories", params={"project": TEAM, "limit": 100})
    assert v.me.secret_marker in page.text and v.other.team_marker in page.text
    assert {v.me.private_id, v.other.shared_id} <= v.ids_of(page)
    everything = await v.rest(
        "listMemories",
        params={"include_deleted": "true", "include_archived": "true", "limit": 100},
    )
    assert f"{v.me.name}deletedmarker" in everything.text
    assert v.me.turn_ids <= v.ids_of(everything)
    deleted = await v.rest("listMemories", params={"only_deleted": "true", "limit": 100})
    assert v.me.deleted_id in v.ids_of(deleted)
    for narrowed in (
        {"q": v.other.secret_marker},
        {"tag": v.other.secret_marker},
        {"session_id": v.other.session_id},
    ):
        empty = await v.rest("listMemories", params=narrowed)
        assert empty.data["total"] == 0, narrowed
    own_session = await v.rest("listMemories", params={"session_id": v.me.session_id})
    assert own_session.data["total"] == len(v.me.turn_ids) > 0


async def rest_create_memory(v: Visit) -> None:
    probe = await v.rest("createMemory", status=200, body={"content": PROBE, "project": TEAM})
    assert probe.data["status"] in ("duplicate", "noop")
    assert probe.data["id"] == v.me.private_id  # their own near copy, never the teammate's
    shared = await v.scratch("shared")
    seen = await v.rest("getMemory", memory_id=shared)
    assert seen.data["visibility"] == "shared"


async def rest_bulk_delete_memories(v: Visit) -> None:
    # A preview only; test_bulk_delete_as_a_user_deletes_only_their_own_memories deletes.
    own = await own_ids(v, {"project": TEAM})
    preview = await v.rest("bulkDeleteMemories", params={"project": TEAM})
    assert preview.data["dry_run"] is True and preview.data["matched"] == len(own)
    assert {p["id"] for p in preview.data["preview"]} <= own
    everything = await v.rest("bulkDeleteMemories", params={"all": "true"})
    assert everything.data["matched"] == len(await own_ids(v, {}))
    assert {p["id"] for p in everything.data["preview"]} <= await own_ids(v, {})


async def own_ids(v: Visit, params: dict[str, Any]) -> set[int]:
    """The caller's own live memories (archived turns too), as the list shows them."""
    page = await v.rest("listMemories", params={**params, "include_archived": "true", "limit": 100})
    assert page.data["total"] <= 100
    return {m["id"] for m in page.data["memories"] if m["owner"] == v.me.name}


async def rest_learn_trajectory(v: Visit) -> None:
    theirs = TEXTS[v.other.name]["trajectory"]
    body = {
        "task": theirs["task"].split(": ", 1)[1],
        "worked": theirs["worked"],
        "avoid": theirs["avoid"],
        "project": TEAM,
    }
    learned = await v.rest("learnTrajectory", status=201, body=body)
    assert learned.data["status"] == "saved"  # the teammate's private trajectory is not there
    assert learned.data["memory"]["owner"] == v.me.name


async def rest_create_memories(v: Visit) -> None:
    bulk = await v.rest(
        "createMemories",
        body={
            "memories": [
                {"content": PROBE, "project": TEAM},
                {
                    "content": f"{v.me.name} bulk note: the release train leaves every Tuesday.",
                    "project": TEAM,
                    "visibility": "shared",
                },
            ]
        },
    )
    first, second = bulk.data["items"]
    assert first["status"] in ("duplicate", "noop") and first["id"] == v.me.private_id
    assert second["status"] == "saved"


async def rest_get_memory(v: Visit) -> None:
    for hidden in (v.other.private_id, v.other.deleted_id, min(v.other.turn_ids)):
        await v.refused("getMemory", 404, "not_found", memory_id=hidden)
    shared = await v.rest("getMemory", memory_id=v.other.shared_id)
    assert shared.data["owner"] == v.other.name and shared.data["visibility"] == "shared"
    assert v.other.team_marker in shared.data["content"]
    own = await v.rest("getMemory", memory_id=v.me.private_id)
    assert own.data["visibility"] == "private" and own.data["owner"] == v.me.name


async def rest_update_memory(v: Visit) -> None:
    change = {"tags": ["rewritten"]}
    for hidden in (v.other.private_id, v.other.deleted_id):
        await v.refused("updateMemory", 404, "not_found", memory_id=hidden, body=change)
    await v.refused("updateMemory", 403, "forbidden", memory_id=v.other.shared_id, body=change)
    await v.refused(
        "updateMemory",
        404,
        "not_found",
        memory_id=v.me.shared_id,
        body={"supersedes": v.other.private_id},
    )
    own = await v.rest("updateMemory", memory_id=v.me.shared_id, body={"tags": ["team-decision"]})
    assert own.data["memory"]["tags"] == ["team-decision"]
    after = await v.rest("getMemory", memory_id=v.other.shared_id)
    assert after.data["tags"] == ["team-decision"]


async def rest_delete_memory(v: Visit) -> None:
    for purge in ("false", "true"):
        for hidden in (v.other.private_id, v.other.deleted_id):
            await v.refused(
                "deleteMemory", 404, "not_found", memory_id=hidden, params={"purge": purge}
            )
        await v.refused(
            "deleteMemory", 403, "forbidden", memory_id=v.other.shared_id, params={"purge": purge}
        )
    scratch = await v.scratch()
    deleted = await v.rest("deleteMemory", memory_id=scratch)
    assert deleted.data["deleted_at"] is not None
    purged = await v.rest("deleteMemory", memory_id=scratch, params={"purge": "true"})
    assert purged.data == {"purged_id": scratch}
    still = await v.rest("getMemory", memory_id=v.other.shared_id)
    assert still.data["deleted_at"] is None


async def rest_restore_memory(v: Visit) -> None:
    for hidden in (v.other.private_id, v.other.deleted_id):
        await v.refused("restoreMemory", 404, "not_found", memory_id=hidden)
    await v.refused("restoreMemory", 403, "forbidden", memory_id=v.other.shared_id)
    scratch = await v.scratch()
    await v.rest("deleteMemory", memory_id=scratch)
    restored = await v.rest("restoreMemory", memory_id=scratch)
    assert restored.data["deleted_at"] is None


async def rest_related_memories(v: Visit) -> None:
    for hidden in (v.other.private_id, v.other.deleted_id):
        await v.refused("relatedMemories", 404, "not_found", memory_id=hidden)
    near = await v.rest("relatedMemories", memory_id=v.me.private_id, params={"limit": 100})
    assert v.other.shared_id in v.ids_of(near)  # the teammate's private twin is left out
    await v.rest("relatedMemories", memory_id=v.other.shared_id, params={"limit": 100})


async def rest_memory_versions(v: Visit) -> None:
    for hidden in (v.other.private_id, v.other.deleted_id):
        await v.refused("memoryVersions", 404, "not_found", memory_id=hidden)
    shared = await v.rest("memoryVersions", memory_id=v.other.shared_id)
    assert [version["id"] for version in shared.data] == [v.other.shared_id]


async def rest_check_memory(v: Visit) -> None:
    for hidden in (v.other.private_id, v.other.deleted_id, min(v.other.turn_ids)):
        await v.refused("checkMemory", 404, "not_found", memory_id=hidden)
    # A team's server never reads its own disk for a user: nothing is checked, nothing read.
    mine = await v.rest("checkMemory", memory_id=v.me.private_id, params={"cwd": "/etc"})
    assert (mine.data["verdict"], mine.data["can_record"]) == ("unchecked", False)
    await v.refused(
        "updateMemory",
        400,
        "invalid_input",
        memory_id=v.me.private_id,
        body={"current_from": "/etc"},
    )


async def rest_drifted_memories(v: Visit) -> None:
    drifted = await v.rest("driftedMemories", params={"project": TEAM, "cwd": "/etc"})
    assert (drifted.data["folders"], drifted.data["memories"]) == ([], [])


async def rest_promote_proposal(v: Visit) -> None:
    # Promote reads the repository on the server's disk: a team's server refuses it to users.
    await v.refused("promoteProposal", 400, "invalid_input", params={"project": TEAM})


async def rest_promote_write(v: Visit) -> None:
    body = {"project": TEAM, "accept": [v.other.shared_id], "reject": []}
    await v.refused("promoteWrite", 400, "invalid_input", body=body)


async def rest_recall(v: Visit) -> None:
    recalled = await v.rest("recall", body={"query": PROBE, "limit": 50, "threshold": 0.0})
    assert v.me.secret_marker in recalled.text
    assert v.me.private_id in v.ids_of(recalled)


async def rest_search(v: Visit) -> None:
    for mode in ("semantic", "keyword", "hybrid"):
        found = await v.rest(
            "search", body={"query": PROBE, "mode": mode, "limit": 50, "include_archived": True}
        )
        assert v.me.private_id in v.ids_of(found), mode
        for word in (v.other.secret_marker, f"{v.other.name}sessionmarker"):
            missing = await v.rest("search", body={"query": word, "mode": mode, "limit": 50})
            assert v.ids_of(missing).isdisjoint(v.other.private_ids)
    shared = await v.rest("search", body={"query": v.other.team_marker, "mode": "keyword"})
    assert v.other.shared_id in v.ids_of(shared)
    keyword = await v.rest("search", body={"query": v.other.secret_marker, "mode": "keyword"})
    assert keyword.data["hits"] == []


async def rest_export(v: Visit) -> None:
    for fmt in ("json", "jsonl", "markdown"):
        exported = await v.rest("export", params={"format": fmt, "include_deleted": "true"})
        assert v.me.secret_marker in exported.text, fmt
        assert v.other.team_marker in exported.text, fmt
        assert f"{v.me.name}sessionmarker" in exported.text, fmt


async def rest_timeline(v: Visit) -> None:
    timeline = await v.rest("timeline")
    points = {p["id"] for p in timeline.data["points"]}
    assert {v.me.private_id, v.other.shared_id} <= points
    assert timeline.data["total"] == sum(d["count"] for d in timeline.data["days"])


async def rest_preferences(v: Visit) -> None:
    for params in ({}, {"project": TEAM}):
        tiers = await v.rest("preferences", params=params)
        explicit = {p["memory"]["id"] for p in tiers.data["explicit"]}
        assert {v.me.private_id, v.other.shared_id} <= explicit, params


async def rest_lock_memory(v: Visit) -> None:
    for hidden in (v.other.private_id, v.other.deleted_id):
        await v.refused("lockMemory", 404, "not_found", memory_id=hidden, body={"locked": True})
    await v.refused(
        "lockMemory", 403, "forbidden", memory_id=v.other.shared_id, body={"locked": True}
    )
    theirs = await v.rest("getMemory", memory_id=v.other.shared_id)
    assert not theirs.data["metadata"].get("locked")
    locked = await v.rest("lockMemory", memory_id=v.me.private_id, body={"locked": True})
    assert locked.data["metadata"]["locked"] is True
    await v.rest("lockMemory", memory_id=v.me.private_id, body={"locked": False})


async def rest_reset_distill_failures(v: Visit) -> None:
    await fail_sessions(v.service)
    await v.refused("resetDistillFailures", 404, "not_found", body={"session": v.other.session_id})
    common = await v.rest("resetDistillFailures", body={"session": "5e55"})
    assert common.data == {"reset": 1}
    again = await v.rest("resetDistillFailures", body={})
    assert again.data == {"reset": 0}
    assert await distill_state(v.service, v.other.session_id) == "failed"
    assert await distill_state(v.service, v.me.session_id) == "pending"


async def rest_list_sessions(v: Visit) -> None:
    page = await v.rest("listSessions")
    assert [s["session_id"] for s in page.data["sessions"]] == [v.me.session_id]
    assert page.data["total"] == sum(page.data["by_source"].values()) == 1
    in_team = await v.rest("listSessions", params={"project": TEAM})
    assert in_team.data["total"] == 1


async def rest_journal(v: Visit) -> None:
    journal = await v.rest("journal", params={"limit": 100})
    assert f"{v.me.name}journalmarker" in journal.text
    assert {e["session_id"] for e in journal.data["entries"]} == {v.me.session_id}
    for params in (
        {"session_id": v.other.session_id},
        {"query": f"{v.other.name}journalmarker"},
        {"session_id": "5e55"},
    ):
        narrowed = await v.rest("journal", params=params)
        assert {e["session_id"] for e in narrowed.data["entries"]} <= {v.me.session_id}


async def rest_receipts(v: Visit) -> None:
    session = f"receipts-{v.me.name}"
    await v.rest(
        "hookPrompt", body={"session_id": session, "cwd": CWD, "prompt": PROBE, "prompt_id": ""}
    )
    deadline = time.monotonic() + 30
    while True:  # the receipt is written after the hook's answer is sent
        mine = await v.rest("receipts", params={"session_id": session})
        if mine.data["receipts"] or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.1)
    [receipt] = mine.data["receipts"]
    assert v.me.private_id in receipt["memory_ids"] and receipt["hook"] == "prompt"
    everything = await v.rest("receipts", params={"limit": 100})
    others = {f"receipts-{v.other.name}", f"prompt-{v.other.name}", v.other.session_id}
    assert everything.data["totals"]["injections"] >= 1
    assert not {r["session_id"] for r in everything.data["receipts"]} & others
    for other_session in others:
        theirs = await v.rest("receipts", params={"session_id": other_session})
        assert theirs.data["totals"]["injections"] == 0, "a teammate's receipts are their own"


async def rest_context(v: Visit) -> None:
    session = f"context-{v.me.name}"
    await v.rest(
        "hookPrompt", body={"session_id": session, "cwd": CWD, "prompt": PROBE, "prompt_id": ""}
    )
    report = await v.rest("context", params={"days": 1, "top": 100})  # receipts come first
    injected = {m["id"] for m in report.data["most_injected"]}
    assert v.me.private_id in injected, "my own injection is in my report"
    assert v.other.private_id not in injected, "a teammate's injections are not"
    assert report.data["totals"]["injections"] >= 1


async def rest_list_lessons(v: Visit) -> None:
    lessons = await v.rest("listLessons")
    ids = {lesson["id"] for lesson in lessons.data["lessons"]}
    assert {v.me.lesson_id, v.other.lesson_id} <= ids  # lessons are the team's


async def rest_create_lesson(v: Visit) -> None:
    created = await v.rest(
        "createLesson",
        status=201,
        body={"pattern": "docker push", "message": "Tag images with the git sha.", "tool": "Bash"},
    )
    assert created.data["active"] is True


async def rest_update_lesson(v: Visit) -> None:
    edited = await v.rest(
        "updateLesson", lesson_id=v.me.lesson_id, body={"strictness": "ask", "active": True}
    )
    assert edited.data["strictness"] == "ask"
    # The other's lesson (for every project) is theirs to change (#34).
    await v.refused(
        "updateLesson", 403, "forbidden", lesson_id=v.other.lesson_id, body={"active": False}
    )


async def rest_hook_pre_tool_use(v: Visit) -> None:
    mine, theirs = TEXTS[v.me.name]["lesson"][0], TEXTS[v.other.name]["lesson"][0]
    answer = await v.rest(
        "hookPreToolUse",
        body={"cwd": CWD, "tool_name": "Bash", "tool_input": {"command": f"{mine}; {theirs}"}},
    )
    # Each lesson is for every project: it applies to its author's calls only (#54).
    assert answer.data["lesson_ids"] == [v.me.lesson_id]


async def rest_hook_session_start(v: Visit) -> None:
    answer = await v.rest(
        "hookSessionStart", body={"session_id": "fresh", "cwd": CWD, "source": "startup"}
    )
    assert answer.data["project"] == TEAM
    context = answer.data["additionalContext"]
    assert v.me.secret_marker in context and v.other.team_marker in context


async def rest_hook_prompt(v: Visit) -> None:
    answer = await v.rest(
        "hookPrompt",
        body={"session_id": f"prompt-{v.me.name}", "cwd": CWD, "prompt": PROBE, "prompt_id": ""},
    )
    assert v.me.private_id in answer.data["memory_ids"]


async def rest_hook_tool_call(v: Visit) -> None:
    answer = await v.rest(
        "hookToolCall",
        status=202,
        body=tool_hook(v.me.session_id, f"toolu_{v.me.name}_second", "git status --short"),
    )
    assert answer.data == {"recorded": True}


async def rest_hook_session_end(v: Visit) -> None:
    answer = await v.rest(
        "hookSessionEnd",
        status=202,
        body={"session_id": v.me.session_id, "cwd": CWD, "transcript_path": str(v.me.transcript)},
    )
    assert answer.data["status"] == "not_read"  # a team's server opens no path it is sent


REST_CASES: dict[str, Case] = {
    "health": rest_health,
    "promoteProposal": rest_promote_proposal,
    "promoteWrite": rest_promote_write,
    "invalidateCache": rest_invalidate_cache,
    "openapi": rest_openapi,
    "stats": rest_stats,
    "agents": rest_agents,
    "projects": rest_projects,
    "tags": rest_tags,
    "listMemories": rest_list_memories,
    "recall": rest_recall,
    "search": rest_search,
    "export": rest_export,
    "timeline": rest_timeline,
    "preferences": rest_preferences,
    "listSessions": rest_list_sessions,
    "journal": rest_journal,
    "receipts": rest_receipts,
    "context": rest_context,
    "listLessons": rest_list_lessons,
    "getMemory": rest_get_memory,
    "relatedMemories": rest_related_memories,
    "memoryVersions": rest_memory_versions,
    "checkMemory": rest_check_memory,
    "driftedMemories": rest_drifted_memories,
    "hookPreToolUse": rest_hook_pre_tool_use,
    "hookSessionStart": rest_hook_session_start,
    "hookPrompt": rest_hook_prompt,
    "createMemory": rest_create_memory,
    "createMemories": rest_create_memories,
    "learnTrajectory": rest_learn_trajectory,
    "updateMemory": rest_update_memory,
    "lockMemory": rest_lock_memory,
    "deleteMemory": rest_delete_memory,
    "restoreMemory": rest_restore_memory,
    "bulkDeleteMemories": rest_bulk_delete_memories,
    "resetDistillFailures": rest_reset_distill_failures,
    "createLesson": rest_create_lesson,
    "updateLesson": rest_update_lesson,
    "hookToolCall": rest_hook_tool_call,
    "hookSessionEnd": rest_hook_session_end,
}


# ----- MCP: one case per tool ----------------------------------------------------------------


async def mcp_startup_context(v: Visit) -> None:
    for arguments in ({}, {"project": TEAM}):
        context = await v.tool("startup_context", **arguments)
        assert v.me.secret_marker in context["markdown"], arguments
        assert v.other.team_marker in context["markdown"], arguments


async def mcp_save_memory(v: Visit) -> None:
    probe = await v.tool("save_memory", content=PROBE, project=TEAM)
    assert probe["status"] in ("duplicate", "noop") and probe["id"] == v.me.private_id
    note = f"{v.me.name} mcp note: the on-call handover happens at 09:30 on Mondays."
    saved = await v.tool("save_memory", content=note, project=TEAM, visibility="shared")
    assert saved["memory"]["owner"] == v.me.name and saved["memory"]["visibility"] == "shared"


async def mcp_learn(v: Visit) -> None:
    theirs = TEXTS[v.other.name]["trajectory"]
    learned = await v.tool(
        "learn",
        task=theirs["task"].split(": ", 1)[1] + " again",
        worked=theirs["worked"],
        project=TEAM,
    )
    assert learned["memory"]["owner"] == v.me.name


async def mcp_check_memory(v: Visit) -> None:
    checked = await v.tool("check_memory", content=PROBE)
    assert checked["target_id"] == v.me.private_id


async def mcp_semantic_search(v: Visit) -> None:
    found = await v.tool("semantic_search", query=PROBE, limit=50, min_similarity=0.0)
    assert v.me.private_id in memory_ids(found)
    await v.tool("semantic_search", query=v.other.secret_marker, project=TEAM, min_similarity=0.0)


async def mcp_search_memories(v: Visit) -> None:
    hidden = await v.tool("search_memories", query=v.other.secret_marker)
    assert hidden["hits"] == []
    shared = await v.tool("search_memories", query=v.other.team_marker, project=TEAM)
    assert v.other.shared_id in memory_ids(shared)


async def mcp_hybrid_search(v: Visit) -> None:
    found = await v.tool("hybrid_search", query=PROBE, limit=50, include_archived=True)
    assert v.me.private_id in memory_ids(found)
    await v.tool("hybrid_search", query=f"{v.other.name}sessionmarker invoice export TLS")


async def mcp_list_memories(v: Visit) -> None:
    page = await v.tool("list_memories", project=TEAM, limit=100)
    assert {v.me.private_id, v.other.shared_id} <= memory_ids(page)
    tagged = await v.tool("list_memories", tag=v.other.secret_marker)
    assert tagged["total"] == 0


async def mcp_get_memory(v: Visit) -> None:
    for hidden in (v.other.private_id, v.other.deleted_id, min(v.other.turn_ids)):
        await v.tool("get_memory", error=f"no memory with id {hidden}", memory_id=hidden)
    shared = await v.tool("get_memory", memory_id=v.other.shared_id)
    assert shared["owner"] == v.other.name


async def mcp_recent_context(v: Visit) -> None:
    recent = await v.tool("recent_context", project=TEAM, limit=100)
    assert {v.me.private_id, v.other.shared_id} <= memory_ids(recent)


async def mcp_update_memory(v: Visit) -> None:
    for hidden in (v.other.private_id, v.other.deleted_id):
        await v.tool("update_memory", error="no memory", memory_id=hidden, tags=["x"])
    await v.tool("update_memory", error="belongs to", memory_id=v.other.shared_id, tags=["x"])
    own = await v.tool("update_memory", memory_id=v.me.shared_id, tags=["team-decision"])
    assert own["memory"]["id"] == v.me.shared_id


async def mcp_delete_memory(v: Visit) -> None:
    for hidden in (v.other.private_id, v.other.deleted_id):
        await v.tool("delete_memory", error="no memory", memory_id=hidden)
    await v.tool("delete_memory", error="belongs to", memory_id=v.other.shared_id)
    deleted = await v.tool("delete_memory", memory_id=await v.scratch())
    assert deleted["deleted_at"] is not None


async def mcp_restore_memory(v: Visit) -> None:
    for hidden in (v.other.private_id, v.other.deleted_id):
        await v.tool("restore_memory", error="no memory", memory_id=hidden)
    await v.tool("restore_memory", error="belongs to", memory_id=v.other.shared_id)
    scratch = await v.scratch()
    await v.tool("delete_memory", memory_id=scratch)
    restored = await v.tool("restore_memory", memory_id=scratch)
    assert restored["deleted_at"] is None


async def mcp_purge_memory(v: Visit) -> None:
    for hidden in (v.other.private_id, v.other.deleted_id):
        await v.tool("purge_memory", error="no memory", memory_id=hidden)
    await v.tool("purge_memory", error="belongs to", memory_id=v.other.shared_id)
    scratch = await v.scratch()
    await v.tool("delete_memory", memory_id=scratch)
    purged = await v.tool("purge_memory", memory_id=scratch)
    assert purged == {"purged_id": scratch}


async def mcp_find_duplicates(v: Visit) -> None:
    pairs = await v.tool("find_duplicates", threshold=0.1, limit=100)
    assert pairs["pairs"], "the caller's own memories pair up at so low a threshold"


async def mcp_bulk_delete(v: Visit) -> None:
    own = await own_ids(v, {"project": TEAM})
    preview = await v.tool("bulk_delete", project=TEAM, dry_run=True)
    assert preview["matched"] == len(own)
    assert {p["id"] for p in preview["preview"]} <= own


async def mcp_list_tags(v: Visit) -> None:
    tags = {t["tag"] for t in (await v.tool("list_tags"))["tags"]}
    assert v.me.secret_marker in tags


async def mcp_get_stats(v: Visit) -> None:
    stats = await v.tool("get_stats")
    page = await v.tool("list_memories", limit=1)
    assert stats["sessions"]["imported"] == 1
    assert stats["active"] == page["total"]


async def mcp_export_memories(v: Visit) -> None:
    for output_format in ("json", "markdown"):
        exported = await v.tool("export_memories", project=TEAM, output_format=output_format)
        assert v.me.secret_marker in exported["content"]
        assert v.other.team_marker in exported["content"]


async def mcp_journal(v: Visit) -> None:
    journal = await v.tool("journal", limit=100)
    assert {e["session_id"] for e in journal["entries"]} == {v.me.session_id}
    narrowed = await v.tool("journal", session_id=v.other.session_id)
    assert narrowed["entries"] == []


async def mcp_list_lessons(v: Visit) -> None:
    lessons = await v.tool("list_lessons")
    assert {v.me.lesson_id, v.other.lesson_id} <= {lesson["id"] for lesson in lessons["lessons"]}


async def mcp_save_lesson(v: Visit) -> None:
    added = await v.tool(
        "save_lesson", pattern="npm publish", message="Publish from CI only.", tool="Bash"
    )
    disabled = await v.tool("save_lesson", lesson_id=added["id"], active=False)
    assert disabled["active"] is False
    await v.tool(
        "save_lesson",
        f"only {v.other.name} can change it",
        lesson_id=v.other.lesson_id,
        active=False,
    )


MCP_CASES: dict[str, Case] = {
    "startup_context": mcp_startup_context,
    "check_memory": mcp_check_memory,
    "semantic_search": mcp_semantic_search,
    "search_memories": mcp_search_memories,
    "hybrid_search": mcp_hybrid_search,
    "list_memories": mcp_list_memories,
    "get_memory": mcp_get_memory,
    "recent_context": mcp_recent_context,
    "find_duplicates": mcp_find_duplicates,
    "list_tags": mcp_list_tags,
    "get_stats": mcp_get_stats,
    "export_memories": mcp_export_memories,
    "journal": mcp_journal,
    "list_lessons": mcp_list_lessons,
    "save_memory": mcp_save_memory,
    "learn": mcp_learn,
    "update_memory": mcp_update_memory,
    "delete_memory": mcp_delete_memory,
    "restore_memory": mcp_restore_memory,
    "purge_memory": mcp_purge_memory,
    "bulk_delete": mcp_bulk_delete,
    "save_lesson": mcp_save_lesson,
}


# ----- the team: two users and what they stored ----------------------------------------------


def tool_hook(session_id: str, tool_use_id: str, command: str) -> dict[str, Any]:
    return {
        "hook_event_name": "PostToolUse",
        "session_id": session_id,
        "cwd": CWD,
        "tool_name": "Bash",
        "tool_use_id": tool_use_id,
        "tool_input": {"command": command},
        "tool_response": {"stdout": "done", "stderr": "", "interrupted": False},
    }


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


async def fail_sessions(service: MemoryService) -> None:
    """Mark both sessions failed for distillation, as after three failed attempts."""
    async with service.pool.connection() as conn:
        await conn.execute(
            "UPDATE imported_sessions SET distill_state = 'failed', distill_failures = 3"
        )


async def distill_state(service: MemoryService, session_id: str) -> str:
    async with service.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT distill_state FROM imported_sessions WHERE session_id = %s", (session_id,)
        )
        row = await cur.fetchone()
    assert row is not None
    return str(row[0])


async def store_as(person: Person, url: str) -> None:
    """What `person` stores over HTTP with their token, before the walk."""
    text = TEXTS[person.name]
    async with httpx.AsyncClient(base_url=url, headers=bearer(person.token), timeout=120) as http:

        async def save(body: dict[str, Any]) -> int:
            response = await http.post("/api/memories", json={"project": TEAM, **body})
            assert response.status_code == 201, response.text
            assert response.json()["owner"] == person.name
            return int(response.json()["id"])

        person.private_id = await save(
            {
                "content": text["private"],
                "kind": "preference",
                "tags": [person.secret_marker, "ops"],
                "visibility": "private",
            }
        )
        person.shared_id = await save(
            {
                "content": text["shared"],
                "kind": "preference",
                "tags": ["team-decision"],
                "visibility": "shared",
            }
        )
        person.deleted_id = await save({"content": text["deleted"]})  # private by default
        deleted = await http.delete(f"/api/memories/{person.deleted_id}")
        assert deleted.status_code == 200, deleted.text
        learned = await http.post("/api/trajectories", json={**text["trajectory"], "project": TEAM})
        assert learned.status_code == 201, learned.text
        assert learned.json()["memory"]["visibility"] == "private"
        person.trajectory_id = int(learned.json()["id"])
        pattern, message = text["lesson"]
        lesson = await http.post(
            "/api/lessons", json={"pattern": pattern, "message": message, "tool": "Bash"}
        )
        assert lesson.status_code == 201, lesson.text
        person.lesson_id = int(lesson.json()["id"])
        # The call is journaled while the session runs; the transcript arrives at its end.
        hooked = await http.post(
            "/api/hooks/tool",
            json=tool_hook(person.session_id, f"toolu_{person.name}_first", text["command"]),
        )
        assert hooked.status_code == 202, hooked.text
        SessionWriter(person.session_id, cwd=CWD).prompt(text["prompt"]).say(text["answer"]).write(
            person.transcript.parent.parent, person.transcript.parent.name
        )


async def import_as(service: MemoryService, person: Person) -> None:
    """`claude-memory import --user <person>` of their session (a team's server opens no path
    a session-end hook sends, #54)."""
    with acting_as(await service.users.viewer_by_name(person.name)):
        summary = await import_session(service, person.transcript)
    assert summary.sessions == 1, summary


async def wait_for_turns(service: MemoryService, person: Person, timeout: float = 120) -> None:
    """Until the import of `person`'s session stored its turns (as theirs)."""
    deadline = time.monotonic() + timeout
    while True:
        page = await service.list_memories(MemoryFilter(session_id=person.session_id), limit=100)
        if page.total >= 2:
            assert {m.owner for m in page.memories} == {person.name}
            assert {m.visibility for m in page.memories} == {"private"}
            person.turn_ids = {m.id for m in page.memories}
            return
        assert time.monotonic() < deadline, f"{person.name}'s session was not imported"
        await asyncio.sleep(0.2)


@asynccontextmanager
async def team_server(
    service: MemoryService, settings: Settings, tmp_path: Path
) -> AsyncIterator[tuple[str, Person, Person]]:
    """The real app with users alice and bob (both in "team"), each with their data stored."""
    people = []
    for name in ("alice", "bob"):
        added, _ = await service.users.add(name, [TEAM])
        folder = tmp_path / name / "projects" / "-home-dev-team"
        people.append(Person(name, added.token, folder / f"{SESSION_IDS[name]}.jsonl"))
    alice, bob = people
    async with serving(create_app(settings, service)) as url:
        for person in people:
            await store_as(person, url)
        for person in people:
            await import_as(service, person)
            await wait_for_turns(service, person)
        yield url, alice, bob


@asynccontextmanager
async def visiting(
    url: str, me: Person, other: Person, service: MemoryService, transport: str = "/mcp"
) -> AsyncIterator[Visit]:
    async with (
        httpx.AsyncClient(base_url=url, headers=bearer(me.token), timeout=120) as http,
        Client(f"{url}{transport}", auth=me.token, timeout=120) as mcp,
    ):
        yield Visit(me=me, other=other, http=http, mcp=mcp, service=service)


async def read_only_tools() -> set[str]:
    return {
        tool.name
        for tool in await build_mcp().list_tools()
        if tool.annotations is not None and tool.annotations.read_only_hint
    }


# ----- the tests -----------------------------------------------------------------------------


async def test_team_scope_cases_cover_every_route_and_tool() -> None:
    operations = {op.operation_id for op in OPERATIONS}
    tools = {tool.name for tool in await build_mcp().list_tools()}

    assert set(REST_CASES) == operations, (
        f"REST operations without a team-scope case: {sorted(operations - set(REST_CASES))};"
        f" cases for no operation: {sorted(set(REST_CASES) - operations)}"
    )
    assert set(MCP_CASES) == tools, (
        f"MCP tools without a team-scope case: {sorted(tools - set(MCP_CASES))};"
        f" cases for no tool: {sorted(set(MCP_CASES) - tools)}"
    )


async def test_teammates_see_their_own_private_and_the_teams_shared_memories_everywhere(
    service: MemoryService, settings: Settings, tmp_path: Path
) -> None:
    async with team_server(service, settings, tmp_path) as (url, alice, bob):
        tools_served = set()
        for me, other in ((bob, alice), (alice, bob)):
            async with visiting(url, me, other, service) as visit:
                tools_served |= {tool.name for tool in await visit.mcp.list_tools()}
                for case in REST_CASES.values():
                    await case(visit)
                for case in MCP_CASES.values():
                    await case(visit)
            readers = await read_only_tools()
            async with visiting(url, me, other, service, "/sse") as visit:
                for name, case in MCP_CASES.items():
                    if name in readers:
                        await case(visit)

    assert tools_served == set(MCP_CASES)
    for person in (alice, bob):
        kept = await service.get(person.private_id)
        assert kept.owner == person.name and kept.deleted_at is None
        assert (await service.get(person.shared_id)).tags == ["team-decision"]


async def test_a_revoked_token_is_refused_by_every_route_and_tool(
    service: MemoryService, settings: Settings, tmp_path: Path
) -> None:
    alice, _ = await service.users.add("alice", [TEAM])
    bob, _ = await service.users.add("bob", [TEAM])
    async with serving(create_app(settings, service)) as url:
        async with (
            httpx.AsyncClient(base_url=url, headers=bearer(bob.token), timeout=60) as http,
            Client(f"{url}/mcp", auth=bob.token, timeout=60) as open_http,
            Client(f"{url}/sse", auth=bob.token, timeout=60) as open_sse,
        ):
            saved = await http.post("/api/memories", json={"content": TEXTS["bob"]["private"]})
            assert saved.status_code == 201, saved.text
            for client in (open_http, open_sse):
                assert not (await client.call_tool("get_stats", {})).is_error
            await service.users.revoke("bob")

            answers = {
                op.operation_id: await http.request(
                    op.method,
                    op.path.format(memory_id=saved.json()["id"], lesson_id=1),
                    json={} if op.body is not None else None,
                )
                for op in OPERATIONS
            }
            # An MCP session opened before the revocation: its next call is refused too (the
            # client reports an error over /mcp; over SSE the refused POST leaves it waiting).
            for client in (open_http, open_sse):
                with pytest.raises(MCPError):
                    await client.call_tool("list_memories", {}, timeout=5)
            raw = [
                await http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}),
                await http.get("/sse"),
                await http.post("/messages/?session_id=abc", json={}),
            ]
        # A new session: refused at once (over SSE, the GET /sse in `raw` is already refused).
        with pytest.raises(MCPError):
            async with Client(f"{url}/mcp", auth=bob.token, timeout=30) as fresh:
                await fresh.call_tool("get_stats", {})
        async with httpx.AsyncClient(base_url=url, headers=bearer(alice.token)) as still:
            alice_stats = await still.get("/api/stats")

    assert answers.pop("health").status_code == 200
    for operation_id, answer in answers.items():
        assert answer.status_code == 401, (operation_id, answer.text)
        assert answer.json()["error"]["code"] == "unauthorized", operation_id
    for answer in raw:
        assert answer.status_code == 401 and answer.json()["error"]["code"] == "unauthorized"
    assert alice_stats.status_code == 200 and alice_stats.json()["active"] == 0


async def test_bulk_delete_as_a_user_deletes_only_their_own_memories(
    service: MemoryService, settings: Settings
) -> None:
    alice, _ = await service.users.add("alice", [TEAM])
    bob, _ = await service.users.add("bob", [TEAM])
    async with serving(create_app(settings, service)) as url:
        ids: dict[str, dict[str, int]] = {}
        for name, user in (("alice", alice), ("bob", bob)):
            async with httpx.AsyncClient(
                base_url=url, headers=bearer(user.token), timeout=60
            ) as http:
                ids[name] = {}
                for key in ("private", "shared"):
                    response = await http.post(
                        "/api/memories",
                        json={"content": TEXTS[name][key], "project": TEAM, "visibility": key},
                    )
                    assert response.status_code == 201, response.text
                    ids[name][key] = int(response.json()["id"])
        async with httpx.AsyncClient(base_url=url, headers=bearer(bob.token), timeout=60) as http:
            preview = await http.delete("/api/memories", params={"project": TEAM})
            deleted = await http.delete(
                "/api/memories", params={"project": TEAM, "dry_run": "false"}
            )
            everything = await http.delete(
                "/api/memories", params={"all": "true", "dry_run": "false"}
            )
            alice_shared = await http.get(f"/api/memories/{ids['alice']['shared']}")
        async with Client(f"{url}/mcp", auth=alice.token, timeout=60) as mcp:
            by_tool = await mcp.call_tool("bulk_delete", {"project": TEAM, "dry_run": False})

    assert preview.json()["matched"] == 2
    assert {p["id"] for p in preview.json()["preview"]} == set(ids["bob"].values())
    assert deleted.json()["deleted"] == 2
    assert everything.json()["deleted"] == 0
    assert alice_shared.status_code == 200 and alice_shared.json()["deleted_at"] is None
    assert by_tool.structured_content is not None
    assert by_tool.structured_content["deleted"] == 2
    for name in ("alice", "bob"):
        for memory_id in ids[name].values():
            memory = await service.get(memory_id)
            assert memory.owner == name and memory.deleted_at is not None


async def test_a_call_and_prompt_hooked_before_their_session_is_imported_stay_with_their_user(
    service: MemoryService, settings: Settings
) -> None:
    alice, _ = await service.users.add("alice", [TEAM])
    bob, _ = await service.users.add("bob", [TEAM])
    async with serving(create_app(settings, service)) as url:
        async with httpx.AsyncClient(base_url=url, headers=bearer(alice.token), timeout=60) as http:
            # While alice's session runs, before its transcript is imported at its end.
            prompted = await http.post(
                "/api/hooks/prompt",
                json={
                    "session_id": SESSION_IDS["alice"],
                    "cwd": CWD,
                    "prompt": TEXTS["alice"]["prompt"],
                    "prompt_id": "prompt-live",
                },
            )
            hooked = await http.post(
                "/api/hooks/tool",
                json=tool_hook(SESSION_IDS["alice"], "toolu_live", TEXTS["alice"]["command"]),
            )
            own = await journal_with(http, "alicesessionmarker")
        async with httpx.AsyncClient(base_url=url, headers=bearer(bob.token), timeout=60) as http:
            journal = await http.get("/api/journal")
        async with Client(f"{url}/mcp", auth=bob.token, timeout=60) as mcp:
            tool = await mcp.call_tool("journal", {})

    assert prompted.status_code == 200 and hooked.status_code == 202
    assert "alicejournalmarker" in own
    for secret in ("alicejournalmarker", "alicesessionmarker", SESSION_IDS["alice"]):
        assert secret not in journal.text, f"bob's journal shows alice's {secret}"
    assert journal.json()["entries"] == []
    assert tool.structured_content is not None and tool.structured_content["entries"] == []


async def journal_with(http: httpx.AsyncClient, text: str, timeout: float = 30) -> str:
    """The caller's journal once it shows `text` (prompts are journaled after the answer)."""
    deadline = time.monotonic() + timeout
    while True:
        journal = await http.get("/api/journal")
        if text in journal.text:
            return journal.text
        assert time.monotonic() < deadline, journal.text
        await asyncio.sleep(0.1)


async def test_revoking_the_last_user_neither_accepts_their_token_nor_opens_their_memories(
    service: MemoryService, settings: Settings
) -> None:
    bob, _ = await service.users.add("bob", [TEAM])
    async with (
        serving(create_app(settings, service)) as url,
        httpx.AsyncClient(base_url=url, timeout=60) as http,
    ):
        saved = await http.post(
            "/api/memories",
            headers=bearer(bob.token),
            json={"content": TEXTS["bob"]["private"], "project": TEAM},
        )
        await service.users.revoke("bob")
        with_token = await http.get("/api/memories", headers=bearer(bob.token))
        anonymous = await http.get("/api/memories")

    assert saved.status_code == 201 and saved.json()["visibility"] == "private"
    assert with_token.status_code == 401, with_token.text
    assert "bobsecretmarker" not in anonymous.text


async def test_a_user_outside_the_team_project_sees_none_of_its_shared_memories(
    service: MemoryService, settings: Settings
) -> None:
    alice, _ = await service.users.add("alice", [TEAM])
    carol, _ = await service.users.add("carol", ["elsewhere"])
    async with serving(create_app(settings, service)) as url:
        async with httpx.AsyncClient(base_url=url, headers=bearer(alice.token), timeout=60) as http:
            shared = await http.post(
                "/api/memories",
                json={"content": TEXTS["alice"]["shared"], "project": TEAM, "visibility": "shared"},
            )
        async with httpx.AsyncClient(base_url=url, headers=bearer(carol.token), timeout=60) as http:
            listed = await http.get("/api/memories")
            found = await http.post("/api/search", json={"query": "aliceteammarker squash merges"})
            read = await http.get(f"/api/memories/{shared.json()['id']}")
            projects = await http.get("/api/projects")
        async with Client(f"{url}/mcp", auth=carol.token, timeout=60) as mcp:
            by_tool = await mcp.call_tool("hybrid_search", {"query": "squash merges to main"})

    assert shared.status_code == 201
    assert listed.json()["total"] == 0
    assert found.json()["hits"] == []
    assert read.status_code == 404 and read.json()["error"]["code"] == "not_found"
    assert projects.json() == []
    assert by_tool.structured_content is not None and by_tool.structured_content["hits"] == []


async def test_a_third_user_outside_the_project_walks_the_journal_and_lesson_routes(
    service: MemoryService, settings: Settings, tmp_path: Path
) -> None:
    """carol (project "elsewhere") beside alice and bob (project "team"), on every journal and
    lesson route and tool (#34): she sees none of their journal, cannot change their calls by
    naming their ids, sees their lessons for every project but not the team's own (which is
    not found for her), and can change none of them."""
    async with team_server(service, settings, tmp_path) as (url, alice, bob):
        added, _ = await service.users.add("carol", ["elsewhere"])
        async with httpx.AsyncClient(base_url=url, headers=bearer(alice.token), timeout=60) as http:
            team_lesson = await http.post(
                "/api/lessons",
                json={"pattern": "helm rollback", "message": "Ask in #ops first.", "project": TEAM},
            )
        assert team_lesson.status_code == 201, team_lesson.text
        answers: list[str] = []
        async with httpx.AsyncClient(base_url=url, headers=bearer(added.token), timeout=60) as http:

            async def rest(method: str, path: str, status: int, **kwargs: Any) -> Any:
                response = await http.request(method, path, **kwargs)
                answers.append(response.text)
                assert response.status_code == status, f"{method} {path}: {response.text}"
                return response.json() if response.content else None

            forged = tool_hook(alice.session_id, f"toolu_{alice.name}_first", "carolforged")
            forged.update(hook_event_name="PostToolUseFailure", error="carolerror")
            await rest("POST", "/api/hooks/tool", 202, json=forged)
            journal = await rest("GET", "/api/journal", 200, params={"limit": 100})
            for params in (
                {"session_id": alice.session_id},
                {"query": "alicejournalmarker"},
                {"query": "bobsessionmarker"},
            ):
                narrowed = await rest("GET", "/api/journal", 200, params=params)
                assert {e["session_id"] for e in narrowed["entries"]} <= {alice.session_id}
                assert "alicejournalmarker" not in json.dumps(narrowed)
            lessons = await rest("GET", "/api/lessons", 200)
            for lesson_id in (alice.lesson_id, bob.lesson_id):
                await rest("PATCH", f"/api/lessons/{lesson_id}", 403, json={"active": False})
            # the team's own, which she cannot see, is not found (#54)
            unseen = f"/api/lessons/{team_lesson.json()['id']}"
            await rest("PATCH", unseen, 404, json={"active": False})
            await rest(
                "POST",
                "/api/lessons",
                403,
                json={"pattern": "git push -f", "message": "planted", "project": TEAM},
            )
            pre_tool = await rest(
                "POST",
                "/api/hooks/pre-tool",
                200,
                json={"cwd": CWD, "tool_name": "Bash", "tool_input": {"command": "helm rollback"}},
            )
        async with Client(f"{url}/mcp", auth=added.token, timeout=60) as mcp:
            by_tool = await mcp.call_tool("journal", {"limit": 100})
            listed = await mcp.call_tool("list_lessons", {})
            changed = await mcp.call_tool(
                "save_lesson", {"lesson_id": alice.lesson_id, "active": False}, raise_on_error=False
            )
            answers += [
                json.dumps(by_tool.structured_content),
                json.dumps(listed.structured_content),
            ]
        async with httpx.AsyncClient(base_url=url, headers=bearer(alice.token), timeout=60) as http:
            alices = (await http.get("/api/journal", params={"limit": 100})).json()
            alices_lessons = (await http.get("/api/lessons")).json()["lessons"]

    # Her forged row is hers and only hers to see (#54: a user's own rows are shown whoever
    # else holds a session of that id); it carries alice's session id because carol sent it.
    for listing in (journal, by_tool.structured_content):
        assert listing is not None
        own = [(e["session_id"], c["target"]) for e in listing["entries"] for c in e["calls"]]
        assert own == [(alice.session_id, "carolforged")]
    sent = alice.session_id
    for text in answers:
        for person in (alice, bob):
            for secret in person.secrets:
                if secret != sent:
                    assert secret not in text, f"carol is shown {person.name}'s {secret}"
    seen = {lesson["id"] for lesson in lessons["lessons"]}
    assert {alice.lesson_id, bob.lesson_id} <= seen  # for every project: everyone's
    assert team_lesson.json()["id"] not in seen  # the team's own: members only
    assert by_tool.structured_content is not None and listed.structured_content is not None
    assert {lesson["id"] for lesson in listed.structured_content["lessons"]} == seen
    assert changed.is_error
    assert team_lesson.json()["id"] not in pre_tool["lesson_ids"]
    # alice's call keeps its own outcome, and her lessons are as she left them.
    assert "carolerror" not in json.dumps(alices) and "carolforged" not in json.dumps(alices)
    assert "alicejournalmarker" in json.dumps(alices)
    assert all(lesson["active"] for lesson in alices_lessons)
