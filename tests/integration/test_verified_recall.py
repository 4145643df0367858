"""Memories checked against the code (issue #37), on a real git repository made in the test
(tests/git_history.py). Through the prompt and session-start hooks: drifted memories say what
changed and come last, the orphaned one is left out, untouched facts are told as before;
without the tree, or on a team's server, nothing is checked and nothing is lost. Through REST
and MCP searches given a `cwd`: every hit carries its verdict, the same over both. A drifted
memory is superseded in one step by the code's current value, over REST and MCP."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from fastmcp import Client

from server.app import create_app
from server.core.access import Viewer, acting_as
from server.core.config import Settings
from server.core.models.memories import MemoryFilter
from server.recall.working_tree import WorkingTrees
from server.service.memory import MemoryService
from tests.db_fixtures import serving
from tests.git_history import MEMORIES_WRITTEN, acme_repository
from tests.integration.hook_runs import context_of, payload, run_hook

FACTS = {
    "go": "The Go toolchain is pinned to go 1.22 in `go.mod`.",
    "timeout": "`HTTP_TIMEOUT=30s` in `.env.example` bounds every outgoing call.",
    "jwt": "Tokens are verified by VerifyToken() in internal/auth/jwt.go.",
    "runbook": "The on-call steps are written down in docs/runbook.md.",
    "errors": "Call `sendProblem()` from src/errors.ts for every error response.",
}
PROMPT = (
    "Remind me about the Go toolchain pin in go.mod, HTTP_TIMEOUT in .env.example, token "
    "verification in internal/auth/jwt.go, the on-call runbook and sendProblem() errors."
)


async def save_facts(service: MemoryService, repo: Path) -> None:
    """FACTS as distilled memories of acme-api, written when the scripted history says."""
    for fact in FACTS.values():
        await service.save(
            fact,
            project="acme-api",
            project_path=str(repo),
            kind="distilled",
            created_at=MEMORIES_WRITTEN,
        )


@pytest.fixture
async def repo(service: MemoryService, tmp_path: Path) -> Path:
    repo = acme_repository(tmp_path / "acme-api")
    await save_facts(service, repo)
    return repo


@pytest.fixture
async def recall_url(service: MemoryService, settings: Settings) -> AsyncIterator[str]:
    wide = replace(settings, recall_threshold=0.05, recall_max_hits=8, recall_max_chars=6_000)
    async with serving(create_app(wide, service)) as url:
        yield url


async def recall(url: str, cwd: Path, session: str) -> str:
    async with httpx.AsyncClient(base_url=url) as http:
        answer = await http.post(
            "/api/hooks/prompt", json={"session_id": session, "cwd": str(cwd), "prompt": PROMPT}
        )
    assert answer.status_code == 200
    context: str = answer.json()["additionalContext"]
    return context


def line_of(context: str, fact: str) -> str | None:
    return next((line for line in context.splitlines() if fact in line), None)


def assert_go_drifted_runbook_orphaned(context: str) -> None:
    """The go pin drifted (noted, after the fresh errors fact); the runbook's file is gone."""
    go, errors = line_of(context, FACTS["go"]), line_of(context, FACTS["errors"])
    assert go is not None and "(drifted: go is now 1.23 (was 1.22))" in go
    assert errors is not None and "drifted" not in errors
    assert line_of(context, FACTS["runbook"]) is None, "its only file is gone"
    lines = context.splitlines()
    assert lines.index(errors) < lines.index(go), "drifted memories come after fresh ones"


async def test_recall_marks_drift_leaves_out_the_orphaned_and_keeps_the_rest(
    repo: Path, recall_url: str
) -> None:
    context = await recall(recall_url, repo / "internal", "s-checked")

    go, timeout, jwt = (line_of(context, FACTS[k]) for k in ("go", "timeout", "jwt"))
    errors = line_of(context, FACTS["errors"])
    assert go is not None and "(drifted: go is now 1.23 (was 1.22))" in go
    assert timeout is not None and "HTTP_TIMEOUT is now 45s (was 30s)" in timeout
    assert jwt is not None and "internal/auth/jwt.go was renamed to internal/auth/tokens.go" in jwt
    assert errors is not None and "drifted" not in errors
    assert line_of(context, FACTS["runbook"]) is None, "its only file is gone"
    lines = context.splitlines()
    assert lines.index(errors) < min(lines.index(go), lines.index(timeout), lines.index(jwt))


async def test_session_start_marks_drift_and_leaves_out_the_orphaned_over_the_hook_and_mcp(
    repo: Path, recall_url: str, tmp_path: Path
) -> None:
    async with httpx.AsyncClient(base_url=recall_url) as http:
        start = {"session_id": "s-start", "source": "startup"}
        checked = await http.post("/api/hooks/session-start", json={**start, "cwd": str(repo)})
        elsewhere = await http.post(
            "/api/hooks/session-start", json={**start, "cwd": str(tmp_path / "elsewhere")}
        )
    async with Client(f"{recall_url}/mcp") as mcp:
        tool = await mcp.call_tool("startup_context", {"cwd": str(repo)})
    context = checked.json()["additionalContext"]
    assert tool.structured_content["markdown"] == context  # type: ignore[index]

    assert_go_drifted_runbook_orphaned(context)
    # A folder no project is known by is told only general memories (#68), never this
    # project's, checked or not.
    unchecked = elsewhere.json()["additionalContext"]
    assert not any(line_of(unchecked, fact) for fact in FACTS.values())
    assert "drifted" not in unchecked


async def test_without_the_tree_everything_is_told_unchecked(
    repo: Path, recall_url: str, tmp_path: Path
) -> None:
    context = await recall(recall_url, tmp_path / "elsewhere", "s-unchecked")

    assert all(line_of(context, fact) for fact in FACTS.values())
    assert "drifted" not in context


async def test_a_teams_server_does_not_read_its_own_disk_for_a_hook(
    repo: Path, service: MemoryService
) -> None:
    found = await service.search_hybrid(PROMPT, limit=10)
    teammate = Viewer(user_id=7, name="mallory", projects=None)

    with acting_as(teammate):
        hits, drift = await WorkingTrees().checked(str(repo), found.hits)

    assert [h.id for h in hits] == [h.id for h in found.hits] and drift == {}


async def test_searches_given_a_cwd_carry_each_hits_verdict_over_rest_and_mcp(
    repo: Path, recall_url: str
) -> None:
    question = {"query": PROMPT, "limit": 10, "project": "acme-api"}
    async with httpx.AsyncClient(base_url=recall_url) as http:
        plain = (await http.post("/api/search", json=question)).json()["hits"]
        checked = (await http.post("/api/search", json={**question, "cwd": str(repo)})).json()
    async with Client(f"{recall_url}/mcp") as mcp:
        tool = await mcp.call_tool("hybrid_search", {**question, "cwd": str(repo)})
    over_mcp = tool.structured_content["hits"]  # type: ignore[index]

    verdicts = {hit["content"]: hit["verdict"] for hit in checked["hits"]}
    assert verdicts == {
        FACTS["go"]: "drifted",
        FACTS["timeout"]: "drifted",
        FACTS["jwt"]: "drifted",
        FACTS["runbook"]: "orphaned",
        FACTS["errors"]: "fresh",
    }
    notes = {hit["content"]: hit["verdict_note"] for hit in checked["hits"]}
    assert (
        notes[FACTS["runbook"]]
        == "orphaned: docs/runbook.md was deleted in " + notes[FACTS["runbook"]].rsplit(" ", 1)[-1]
    )
    assert notes[FACTS["errors"]] is None
    assert [h["id"] for h in checked["hits"]] == [h["id"] for h in plain], "the order stays"
    assert {h["verdict"] for h in plain} == {None}
    assert {(h["id"], h["verdict"]) for h in over_mcp} == {
        (h["id"], h["verdict"]) for h in checked["hits"]
    }


async def _ids_by_content(service: MemoryService) -> dict[str, int]:
    page = await service.list_memories(MemoryFilter(project="acme-api"), limit=50)
    return {memory.content: memory.id for memory in page.memories}


async def test_a_drifted_memory_is_superseded_by_the_current_value_over_rest_and_mcp(
    repo: Path, recall_url: str, service: MemoryService
) -> None:
    ids = await _ids_by_content(service)
    async with httpx.AsyncClient(base_url=recall_url) as http:
        go = await http.patch(f"/api/memories/{ids[FACTS['go']]}", json={"current_from": str(repo)})
        refused = {
            name: await http.patch(f"/api/memories/{ids[FACTS[name]]}", json=body)
            for name, body in (
                ("errors", {"current_from": str(repo)}),
                ("runbook", {"current_from": str(repo)}),
                ("jwt", {"current_from": str(repo), "content": "edited as well"}),
            )
        }
    async with Client(f"{recall_url}/mcp") as mcp:
        timeout = await mcp.call_tool(
            "update_memory", {"memory_id": ids[FACTS["timeout"]], "current_from": str(repo)}
        )
        jwt = await mcp.call_tool(
            "update_memory", {"memory_id": ids[FACTS["jwt"]], "current_from": str(repo)}
        )

    assert go.status_code == 200, go.text
    recorded = go.json()
    assert recorded["status"] == "recorded"
    assert recorded["memory"]["content"] == "The Go toolchain is pinned to go 1.23 in `go.mod`."
    assert recorded["memory"]["supersedes"] == ids[FACTS["go"]]
    timeout_memory = timeout.structured_content["memory"]  # type: ignore[index]
    assert timeout_memory["content"] == FACTS["timeout"].replace("30s", "45s")
    jwt_memory = jwt.structured_content["memory"]  # type: ignore[index]
    assert jwt_memory["content"] == FACTS["jwt"].replace("jwt.go", "tokens.go")
    assert refused["errors"].status_code == 400
    assert "still agrees" in refused["errors"].json()["error"]["message"]
    assert refused["runbook"].status_code == 400
    assert "docs/runbook.md" in refused["runbook"].json()["error"]["message"]
    assert refused["jwt"].status_code == 400
    assert "without other changes" in refused["jwt"].text

    checked = await WorkingTrees().verdicts(
        str(repo),
        [await service.get(recorded["memory"]["id"]), await service.get(jwt_memory["id"])],
    )
    assert checked is not None and [c.verdict for c in checked] == ["fresh", "fresh"]
    versions = await service.versions(ids[FACTS["go"]])
    assert [v.id for v in versions] == [ids[FACTS["go"]], recorded["memory"]["id"]]  # oldest first


async def test_one_memory_is_checked_against_its_projects_folder_for_the_ui(
    repo: Path, recall_url: str, service: MemoryService, tmp_path: Path
) -> None:
    ids = await _ids_by_content(service)
    async with httpx.AsyncClient(base_url=recall_url) as http:
        checks = {
            name: (await http.get(f"/api/memories/{ids[FACTS[name]]}/check")).json()
            for name in ("go", "runbook", "errors")
        }
        elsewhere = await http.get(
            f"/api/memories/{ids[FACTS['go']]}/check", params={"cwd": str(tmp_path / "gone")}
        )

    go = checks["go"]
    assert (go["verdict"], go["cwd"], go["can_record"]) == ("drifted", str(repo), True)
    assert go["note"] == "drifted: go is now 1.23 (was 1.22)"
    assert {"kind": "version", "name": "go", "value": "1.22"} in go["anchors"]
    assert (checks["runbook"]["verdict"], checks["runbook"]["can_record"]) == ("orphaned", False)
    assert (checks["errors"]["verdict"], checks["errors"]["note"]) == ("fresh", None)
    assert elsewhere.json()["verdict"] == "unchecked"
    assert "could not be checked here" in elsewhere.json()["note"]


async def test_a_projects_drifted_list_holds_what_the_code_no_longer_agrees_with(
    repo: Path, recall_url: str
) -> None:
    async with httpx.AsyncClient(base_url=recall_url) as http:
        listed = (await http.get("/api/drifted", params={"project": "ACME-API"})).json()
        unnamed = await http.get("/api/drifted")

    found = {item["memory"]["content"]: item for item in listed["memories"]}
    assert (listed["project"], listed["folders"], listed["checked"]) == ("acme-api", [str(repo)], 5)
    assert (listed["unchecked"], listed["complete"]) == (0, True)
    assert {item["cwd"] for item in listed["memories"]} == {str(repo)}
    assert {content: item["verdict"] for content, item in found.items()} == {
        FACTS["go"]: "drifted",
        FACTS["timeout"]: "drifted",
        FACTS["jwt"]: "drifted",
        FACTS["runbook"]: "orphaned",
    }
    assert found[FACTS["timeout"]]["note"] == "drifted: HTTP_TIMEOUT is now 45s (was 30s)"
    assert found[FACTS["go"]]["can_record"] is True
    assert found[FACTS["runbook"]]["can_record"] is False
    assert unnamed.status_code == 400


async def test_on_a_teams_server_the_hook_process_checks_what_it_is_sent(
    service: MemoryService, settings: Settings, tmp_path: Path
) -> None:
    """A team's server never reads its users' files: it sends the anchors of what it shows, and
    the hook client, run as the agent runs it in the session's folder, checks them there."""
    repo = acme_repository(tmp_path / "acme-api")
    alice, _ = await service.users.add("alice", ["acme-api"])
    with acting_as(service.users.viewer(alice.user)):
        await save_facts(service, repo)
    wide = replace(settings, recall_threshold=0.05, recall_max_hits=8, recall_max_chars=6_000)
    token = {"CLAUDE_MEMORY_TOKEN": alice.token}
    async with serving(create_app(wide, service)) as url:
        async with httpx.AsyncClient(base_url=url) as http:
            sent = await http.post(
                "/api/hooks/prompt",
                json={"session_id": "s-team-raw", "cwd": str(repo), "prompt": PROMPT},
                headers={"Authorization": f"Bearer {alice.token}"},
            )
        prompt = {"session_id": "s-team", "cwd": str(repo / "internal"), "prompt": PROMPT}
        recalled = await run_hook(
            "user-prompt-submit", {**payload("UserPromptSubmit"), **prompt}, url, token
        )
        start = {"session_id": "s-team", "cwd": str(repo), "source": "startup"}
        started = await run_hook("session-start", {**payload("SessionStart"), **start}, url, token)

    unchecked = sent.json()
    assert "drifted" not in unchecked["additionalContext"], "the server checked nothing"
    sent_anchors = {item["id"]: item["anchors"] for item in unchecked["check"]}
    assert ["version", "go", "1.22"] in [a for anchors in sent_anchors.values() for a in anchors]
    for context in (context_of(recalled, "UserPromptSubmit"), context_of(started, "SessionStart")):
        assert_go_drifted_runbook_orphaned(context)
    prompt_context = context_of(recalled, "UserPromptSubmit")
    jwt, timeout = line_of(prompt_context, FACTS["jwt"]), line_of(prompt_context, FACTS["timeout"])
    assert jwt is not None and "internal/auth/jwt.go was renamed to internal/auth/tokens.go" in jwt
    assert timeout is not None and "HTTP_TIMEOUT is now 45s (was 30s)" in timeout


async def test_a_check_past_its_budget_lets_every_memory_through_unchecked(
    repo: Path, service: MemoryService
) -> None:
    found = await service.search_hybrid(PROMPT, limit=10)
    trees = WorkingTrees()

    assert await trees.verdicts(str(repo), found.hits, budget=0.0) is None
    missing = await trees.with_verdicts(found, str(repo / "no-such-folder"))
    assert {hit.verdict for hit in missing.hits} == {"unchecked"}
