"""`claude-memory promote` (#58) on a real git repository: memories used again and again (their
receipts from the real hook client, their verdicts from the real importer reading Claude Code
transcripts) and rules the user stated become lines of CLAUDE.md; a teammate's private memory,
a secret, a superseded or drifted one never do. `--write` changes only our section and a second
one changes nothing; a supersession proposes the change with its reason; a line the person
deleted is not proposed again; a line they edited comes back as a memory."""

from __future__ import annotations

import json
import stat
import subprocess
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from server.app import create_app
from server.core.access import acting_as
from server.core.config import Settings
from server.core.models.memories import MemoryFilter
from server.domain.instruction_section import BEGIN, END
from server.service.memory import MemoryService
from tests.db_fixtures import serving
from tests.git_history import MEMORIES_WRITTEN, acme_repository, git, write
from tests.integration.processes import cli_env, run_cli
from tests.judged_uses import used_in_sessions

PROJECT = "acme-api"
USERS_OWN = "# Acme API\n\nOur own notes: keep pull requests small.\n"
PNPM = "acme-api installs dependencies with pnpm, never npm: the lockfile is pnpm-lock.yaml."
ERRORS = "Always call `sendProblem()` from src/errors.ts for every error response."
LINT_OLD = "Run the linters with npm run lint before pushing."
LINT_NEW = "Run the linters with pnpm lint before pushing, never npm run lint."
ORDERS = "Orders are paginated with an opaque cursor, fifty per page."
GO = "The Go toolchain is pinned to go 1.22 in `go.mod`."
SECRET = "Deploy from CI with GITHUB_TOKEN=ghp_R2x9KqLm4TnV7wYz8AbC3dEf6GhJ1kLmN0pQ as the token."
PRIVATE = "Prefer tabs over spaces in every file I touch."


@dataclass(frozen=True)
class History:
    repo: Path
    ids: dict[str, int]


async def save(service: MemoryService, repo: Path, text: str, kind: str, **extra: Any) -> int:
    saved = await service.save(
        text, project=PROJECT, project_path=str(repo), kind=kind, force=True, **extra
    )
    return saved.id


@pytest.fixture
async def history(service: MemoryService, settings: Settings, tmp_path: Path) -> History:
    repo = acme_repository(tmp_path / "acme-api")
    write(repo, "CLAUDE.md", USERS_OWN)
    write(repo, "pnpm-lock.yaml", "lockfileVersion: '9.0'\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "instructions")
    ids = {
        "pnpm": await save(service, repo, PNPM, "distilled"),
        "errors": await save(service, repo, ERRORS, "preference"),
        "orders": await save(service, repo, ORDERS, "distilled"),
        "go": await save(service, repo, GO, "preference", created_at=MEMORIES_WRITTEN),
        "secret": await save(service, repo, SECRET, "preference"),
        "lint_old": await save(service, repo, LINT_OLD, "preference"),
    }
    ids["lint_new"] = await save(service, repo, LINT_NEW, "preference", supersedes=ids["lint_old"])
    await used_in_sessions(service, settings, repo, tmp_path / "projects", range(3))
    return History(repo, ids)


def changes(proposal: dict[str, Any], name: str = "CLAUDE.md") -> dict[str, list[dict[str, Any]]]:
    [file] = [f for f in proposal["files"] if f["name"] == name]
    by_action: dict[str, list[dict[str, Any]]] = {}
    for change in file["changes"]:
        by_action.setdefault(change["action"], []).append(change)
    return by_action


def section_of(text: str) -> str:
    return text[text.index(BEGIN) : text.index(END) + len(END)]


async def get_proposal(http: httpx.AsyncClient) -> dict[str, Any]:
    answer = await http.get("/api/promote", params={"project": PROJECT})
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


async def test_the_proposal_picks_used_fresh_current_memories_and_nothing_private_secret_or_stale(
    service: MemoryService, history: History, pg_url: str, tmp_path: Path
) -> None:
    # A team's store: bob's private memory is in it; the CLI acts for nobody in particular.
    bob, _ = await service.users.add("bob")
    with acting_as(service.users.viewer(bob.user)):
        private = await save(service, history.repo, PRIVATE, "preference", visibility="private")
    env = cli_env(pg_url, tmp_path / "home")
    done = run_cli("promote", "--project", PROJECT, "--cwd", str(history.repo), "--json", env=env)
    assert done.returncode == 0, done.stderr
    proposal = json.loads(done.stdout)

    ids = history.ids
    assert proposal["project"] == PROJECT and proposal["root"] == str(history.repo)
    [file] = proposal["files"]
    assert (file["name"], file["exists"], file["creates"]) == ("CLAUDE.md", True, False)
    added = {c["memory_id"]: c for c in changes(proposal)["add"]}
    assert set(added) == {ids["pnpm"], ids["errors"], ids["lint_new"]}, added
    assert private not in added
    assert added[ids["pnpm"]]["reason"] == "used in 3 injections, none corrected"
    assert added[ids["pnpm"]]["text"] == PNPM
    assert added[ids["errors"]]["reason"] == "a rule the user stated"
    assert f"+- {PNPM} <!-- memory:{ids['pnpm']} -->\n" in file["diff"]
    assert file["diff"].startswith("--- a/CLAUDE.md\n+++ b/CLAUDE.md\n")
    assert proposal["left_out"] == 0


async def test_write_edits_only_our_section_keeps_a_backup_and_a_second_write_changes_nothing(
    history: History, pg_url: str, tmp_path: Path
) -> None:
    env = cli_env(pg_url, tmp_path / "home")
    commits = subprocess.run(
        ["git", "rev-list", "--count", "HEAD"], cwd=history.repo, capture_output=True, text=True
    ).stdout

    shown = run_cli("promote", "--cwd", str(history.repo), env=env)
    assert shown.returncode == 0, shown.stderr
    assert (history.repo / "CLAUDE.md").read_text() == USERS_OWN, "no write without --write"
    first = run_cli("promote", "--cwd", str(history.repo), "--write", env=env)
    assert first.returncode == 0, first.stderr
    written = (history.repo / "CLAUDE.md").read_text()
    kept = tmp_path / "home" / "backups" / "instructions"
    backups = list(kept.glob("*CLAUDE.md.bak-*"))
    second = run_cli("promote", "--cwd", str(history.repo), "--write", env=env)
    assert second.returncode == 0, second.stderr

    assert "--- a/CLAUDE.md" in shown.stdout and "run again with --write" in shown.stdout
    assert f"add #{history.ids['pnpm']}: used in 3 injections, none corrected" in shown.stdout
    assert written.startswith(USERS_OWN + "\n" + BEGIN), "the user's text is untouched"
    assert f"- {PNPM} <!-- memory:{history.ids['pnpm']} -->" in section_of(written)
    assert [b.read_text() for b in backups] == [USERS_OWN]
    assert "nothing to write" in second.stdout
    assert (history.repo / "CLAUDE.md").read_text() == written
    assert len(list(kept.glob("*CLAUDE.md.bak-*"))) == 1
    assert stat.S_IMODE(kept.stat().st_mode) == 0o700
    assert not list(history.repo.glob("*.bak-*")), "no backup left in the repository"
    after = subprocess.run(
        ["git", "rev-list", "--count", "HEAD"], cwd=history.repo, capture_output=True, text=True
    ).stdout
    assert after == commits, "nothing is committed"


async def test_a_supersession_proposes_the_change_with_its_reason(
    service: MemoryService, settings: Settings, history: History
) -> None:
    ids = history.ids
    async with (
        serving(create_app(settings, service)) as url,
        httpx.AsyncClient(base_url=url) as http,
    ):
        await http.post("/api/promote", json={"project": PROJECT, "accept": [ids["pnpm"]]})
        corepack = "Install dependencies through corepack with pnpm, never with npm or yarn."
        successor = await save(
            service, history.repo, corepack, "preference", supersedes=ids["pnpm"]
        )
        proposal = await get_proposal(http)
        outside = await http.get("/api/promote", params={"project": PROJECT, "cwd": "/tmp"})
        unknown = await http.get("/api/promote", params={"project": "no-such-project"})
        result = await http.post(
            "/api/promote", json={"project": PROJECT, "accept": [successor], "reject": []}
        )

    [change] = changes(proposal)["change"]
    day = datetime.now(UTC)
    assert change["memory_id"] == successor and change["old_memory_id"] == ids["pnpm"]
    assert change["old_text"] == PNPM and change["text"] == corepack
    assert change["reason"] == f"superseded on {day.day} {day:%b %Y} by #{successor}: {corepack}"
    assert outside.status_code == 400 and "inside the project's folder" in outside.text
    assert unknown.status_code == 404
    assert result.status_code == 200, result.text
    [written] = result.json()["written"]
    text = Path(written["path"]).read_text()
    assert f"<!-- memory:{successor} -->" in text and PNPM not in text
    assert Path(written["backup"]).read_text().count(PNPM) == 1


async def test_a_line_the_person_deleted_or_rejected_is_not_proposed_again(
    service: MemoryService, settings: Settings, history: History
) -> None:
    ids = history.ids
    claude_md = history.repo / "CLAUDE.md"
    async with (
        serving(create_app(settings, service)) as url,
        httpx.AsyncClient(base_url=url) as http,
    ):
        first = await http.post(
            "/api/promote",
            json={
                "project": PROJECT,
                "accept": [ids["pnpm"], ids["errors"]],
                "reject": [ids["lint_new"]],
            },
        )
        assert first.status_code == 200, first.text
        text = claude_md.read_text()
        claude_md.write_text(
            "".join(line for line in text.splitlines(keepends=True) if ERRORS not in line)
        )
        again = await get_proposal(http)
        await http.post("/api/promote", json={"project": PROJECT, "accept": [], "reject": []})
        later = await get_proposal(http)

    after_reject = {c["memory_id"] for c in changes(first.json())["keep"]}
    assert after_reject == {ids["pnpm"], ids["errors"]}
    for proposal in (again, later):
        proposed = {c["memory_id"] for c in changes(proposal).get("add", [])}
        assert ids["errors"] not in proposed, "the deleted line stays deleted"
        assert ids["lint_new"] not in proposed, "the rejected line is not proposed again"
        assert proposal["files"][0]["diff"] == ""


async def test_a_hand_edit_in_our_section_comes_back_as_a_memory_superseding_its_own(
    service: MemoryService, settings: Settings, history: History
) -> None:
    ids = history.ids
    claude_md = history.repo / "CLAUDE.md"
    edited = "Use pnpm 9 for everything, never npm or yarn."
    own_rule = "Never force-push to main."
    async with (
        serving(create_app(settings, service)) as url,
        httpx.AsyncClient(base_url=url) as http,
    ):
        await http.post("/api/promote", json={"project": PROJECT, "accept": [ids["pnpm"]]})
        text = claude_md.read_text().replace(PNPM, edited)
        claude_md.write_text(text.replace(END, f"- {own_rule}\n{END}"))
        memories_before = (await service.list_memories(MemoryFilter(), limit=1)).total
        proposal = await get_proposal(http)
        memories_after_get = (await service.list_memories(MemoryFilter(), limit=1)).total
        written = await http.post("/api/promote", json={"project": PROJECT, "accept": []})
        settled = await get_proposal(http)

    # The proposal (a GET) only shows the edits; the write the user asked for saves them.
    by_text = {c["old_text"]: c for c in changes(proposal)["change"]}
    assert by_text[edited]["memory_id"] is None and by_text[edited]["source"] == "the user"
    assert by_text[edited]["reason"] == (
        f"edited by hand in CLAUDE.md: saved as a new memory on a write, superseding #{ids['pnpm']}"
    )
    assert memories_after_get == memories_before, "the GET saved nothing"
    assert written.status_code == 200, written.text
    final = claude_md.read_text()
    came_back_id = next(
        int(line.rsplit("memory:", 1)[1].split()[0])
        for line in final.splitlines()
        if edited in line
    )
    came_back = await service.get(came_back_id)
    assert came_back.content == edited and came_back.supersedes == ids["pnpm"]
    assert (await service.get(ids["pnpm"])).superseded_by == came_back.id
    new_rule_id = next(
        int(line.rsplit("memory:", 1)[1].split()[0])
        for line in final.splitlines()
        if own_rule in line
    )
    new_rule = await service.get(new_rule_id)
    assert new_rule.content == own_rule and new_rule.project == PROJECT
    assert f"- {edited} <!-- memory:{came_back.id} -->" in final
    assert f"- {own_rule} <!-- memory:{new_rule.id} -->" in final
    kept = {c["memory_id"]: c for c in changes(settled)["keep"]}
    assert {came_back.id, new_rule.id} <= set(kept) and "change" not in changes(settled)
    assert kept[came_back.id]["reason"] == "written by hand in CLAUDE.md"


async def test_a_repository_without_instruction_files_gets_its_agents_file_and_says_so(
    service: MemoryService, settings: Settings, history: History
) -> None:
    """The project's sessions are all Claude Code's: promote creates CLAUDE.md, the one file
    that agent reads (AGENTS.md is for projects whose agents differ)."""
    (history.repo / "CLAUDE.md").unlink()
    (history.repo / "GEMINI.md").symlink_to(history.repo / "AGENTS.md")  # dangling: not a file
    async with (
        serving(create_app(settings, service)) as url,
        httpx.AsyncClient(base_url=url) as http,
    ):
        proposal = await get_proposal(http)
        ids = [c["memory_id"] for c in changes(proposal, "CLAUDE.md")["add"]]
        result = await http.post("/api/promote", json={"project": PROJECT, "accept": ids})
        (history.repo / "AGENTS.md").symlink_to(history.repo / "CLAUDE.md")
        linked = await get_proposal(http)

    [file] = proposal["files"]
    assert (file["name"], file["exists"], file["creates"]) == ("CLAUDE.md", False, True)
    assert file["diff"].startswith("--- /dev/null\n+++ b/CLAUDE.md\n")
    [written] = result.json()["written"]
    assert written == {"path": str(history.repo / "CLAUDE.md"), "backup": None}
    assert (history.repo / "CLAUDE.md").read_text().startswith(BEGIN)
    assert [f["name"] for f in linked["files"]] == ["CLAUDE.md"], "a link is read once"
    assert linked["files"][0]["diff"] == ""


async def test_a_line_whose_memory_was_corrected_after_use_is_proposed_for_removal(
    service: MemoryService, settings: Settings, history: History, tmp_path: Path
) -> None:
    pnpm = history.ids["pnpm"]
    async with (
        serving(create_app(settings, service)) as url,
        httpx.AsyncClient(base_url=url) as http,
    ):
        await http.post("/api/promote", json={"project": PROJECT, "accept": [pnpm]})
        correction = "No, that's wrong: we install with bun since last week."
        await used_in_sessions(
            service, settings, history.repo, tmp_path / "projects", range(3, 4), correction
        )
        proposal = await get_proposal(http)

    [record] = (await service.use_records([pnpm])).values()
    assert record.corrected_at is not None and record.uses == 0
    removed = {c["memory_id"]: c for c in changes(proposal)["remove"]}
    day = record.corrected_at
    assert removed[pnpm]["reason"] == f"corrected after use on {day.day} {day:%b %Y}"
    assert removed[pnpm]["old_text"] == PNPM


async def test_what_does_not_fit_the_section_s_budget_is_left_out_most_used_first_in(
    service: MemoryService, settings: Settings, history: History
) -> None:
    small = replace(settings, promote_max_lines=2)
    capped = MemoryService(service.pool, service.embedder, small)
    async with serving(create_app(small, capped)) as url, httpx.AsyncClient(base_url=url) as http:
        proposal = await get_proposal(http)

    added = [c["memory_id"] for c in changes(proposal)["add"]]
    assert len(added) == 2 and added[0] == history.ids["pnpm"], "the used one comes first"
    assert proposal["left_out"] == 1
