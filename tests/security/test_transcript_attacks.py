"""Someone else's session file through the session-end hook (#54, finding 1).

The session-end hook names a session file by path, and the server used to import whatever
file of the right shape a caller named. On a team's server on the machine where its users'
files live, carol's hook client sends alice's transcript: her turns became carol's memories,
carol owned the session row, and alice's own import then found the file read already. In
single-user mode any local caller could make the server read a file of that shape anywhere,
and the error told them whether a file existed. These tests run the real hook client
(server/hooks.py, as the agents run it) and real HTTP against the real app, database and
files; each failed on the code before the fix. The app is stopped before the database is
checked: stopping it lets every session import it started finish first.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import httpx
import pytest

from server.app import create_app
from server.core.access import acting_as
from server.core.config import Settings
from server.core.models.memories import MemoryFilter
from server.ingest.importer import ImportFilters, SessionImporter
from server.ingest.session_imports import import_session
from server.jobs.hook_install import hook_command
from server.service.memory import MemoryService
from tests.db_fixtures import serving
from tests.security.team import Team, team
from tests.transcripts import SessionWriter

pytestmark = pytest.mark.security

ALICE_SESSION = "a11ce000-5e55-4000-8000-000000000054"
CWD = "/home/dev/acme"
ALICE_PROMPT = "alicetranscriptmarker: why does the acme billing export drop the euro rows?"
ALICE_ANSWER = "alicetranscriptmarker: the export filters currencies by an old allow-list."


async def run_hook(event: str, data: dict[str, Any], url: str, token: str | None) -> int:
    """hooks.py as Claude Code runs it, with `token` as CLAUDE_MEMORY_TOKEN; its exit code."""
    environment = {k: v for k, v in os.environ.items() if k != "CLAUDE_MEMORY_TOKEN"}
    if token:
        environment["CLAUDE_MEMORY_TOKEN"] = token
    process = await asyncio.create_subprocess_shell(
        hook_command(event, url),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=environment,
    )
    out, err = await asyncio.wait_for(process.communicate(json.dumps(data).encode()), 30)
    assert (out, err) == (b"", b""), err.decode()
    return process.returncode or 0


def session_end(transcript: Path, session_id: str = ALICE_SESSION) -> dict[str, Any]:
    return {
        "hook_event_name": "SessionEnd",
        "session_id": session_id,
        "cwd": CWD,
        "transcript_path": str(transcript),
        "reason": "exit",
    }


def alices_transcript(projects: Path) -> Path:
    writer = SessionWriter(ALICE_SESSION, cwd=CWD).prompt(ALICE_PROMPT).say(ALICE_ANSWER)
    return writer.write(projects, "-home-dev-acme")


async def rows(service: MemoryService, sql: str, *params: object) -> list[tuple[Any, ...]]:
    async with service.pool.connection() as conn:
        cur = await conn.execute(sql, params)
        return await cur.fetchall()


async def test_a_teammates_hook_cannot_import_your_transcript_as_theirs(
    service: MemoryService, settings: Settings, tmp_path: Path
) -> None:
    # One machine, the server's account able to read every user's files: alice's transcript
    # where Claude Code keeps it, carol's hook naming it at the end of "her" session.
    transcript = alices_transcript(tmp_path / "alice" / ".claude" / "projects")
    async with team(service, settings) as crew:
        for event in ("stop", "session-end"):
            code = await run_hook(event, session_end(transcript), crew.url, crew.tokens["carol"])
            assert code == 0
        async with crew.http("carol") as carol:
            answer = await carol.post(
                "/api/hooks/session-end",
                json={"session_id": ALICE_SESSION, "transcript_path": str(transcript)},
            )
    # The app has stopped: any import the hooks started has finished.
    assert answer.status_code == 202, answer.text
    assert answer.json()["status"] == "not_read"
    assert await rows(service, "SELECT 1 FROM imported_sessions") == []
    assert await rows(service, "SELECT 1 FROM imported_files") == []
    leaked = "SELECT 1 FROM memories WHERE strpos(content, %s) > 0"
    assert await rows(service, leaked, "alicetranscriptmarker") == []

    # alice's own import (`claude-memory import --user alice`) brings her session, as hers.
    with acting_as(await service.users.viewer_by_name("alice")):
        summary = await import_session(service, transcript)
        mine = await service.list_memories(MemoryFilter(session_id=ALICE_SESSION), limit=10)
    assert summary.turns_imported == 2
    assert {m.owner for m in mine.memories} == {"alice"}
    owners = await rows(
        service,
        "SELECT u.name FROM imported_sessions s JOIN users u ON u.id = s.owner_id"
        " WHERE s.session_id = %s",
        ALICE_SESSION,
    )
    assert owners == [("alice",)]


async def test_single_user_hooks_read_only_the_agents_own_session_files(
    service: MemoryService, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    projects = tmp_path / "claude" / "projects"
    # Files of a transcript's shape outside Claude Code's folder, one reached by a symlink
    # inside it, one by `..`; and names of no file, inside the folder and outside it.
    elsewhere = alices_transcript(tmp_path / "elsewhere" / "projects")
    linked = projects / "-home-dev-link" / f"{ALICE_SESSION}.jsonl"
    linked.parent.mkdir(parents=True)
    linked.symlink_to(elsewhere)
    dotted = projects / ".." / ".." / "elsewhere" / "projects" / "-home-dev-acme" / elsewhere.name
    folder = projects / "-home-dev-folder" / f"{ALICE_SESSION}.jsonl"  # not a file
    folder.mkdir(parents=True)
    refused = [
        elsewhere,
        linked,
        dotted,
        folder,
        projects / "-home-dev-acme" / "no-such-session.jsonl",
        tmp_path / "nowhere" / "projects" / "-home-dev-acme" / "no-such-session.jsonl",
    ]
    async with serving(create_app(settings, service)) as url:
        for path in refused:
            assert await run_hook("session-end", session_end(path), url, None) == 0
        async with httpx.AsyncClient(base_url=url, timeout=30) as http:
            answers = [
                await http.post("/api/hooks/session-end", json={"transcript_path": str(p)})
                for p in refused
            ]
        own = alices_transcript(projects)
        accepted = await run_hook("session-end", session_end(own), url, None)

    assert accepted == 0
    assert [a.status_code for a in answers] == [400] * len(refused)
    # One message whatever the reason: nothing tells a caller which files exist.
    assert len({json.dumps(a.json(), sort_keys=True) for a in answers}) == 1, [
        a.text for a in answers
    ]
    read = await rows(service, "SELECT file_path FROM imported_files")
    assert read == [(str(own),)]


# ----- read positions and session rows are each owner's own ---------------------------------


async def import_as(service: MemoryService, name: str, projects: Path) -> dict[str, Any]:
    """`claude-memory import --user NAME --claude-code PROJECTS`: the importer the CLI runs."""
    with acting_as(await service.users.viewer_by_name(name)):
        summary = await SessionImporter(service, ImportFilters()).run(projects)
    return summary.as_json()


async def owners_of(service: MemoryService, table: str, column: str, value: str) -> list[str]:
    found = await rows(
        service,
        f"SELECT u.name FROM {table} t JOIN users u ON u.id = t.owner_id"
        f" WHERE t.{column} = %s ORDER BY u.name",
        value,
    )
    return [name for (name,) in found]


async def what_alice_sees(crew: Team) -> tuple[list[str], list[str], str]:
    """alice's search for her marker (memory owners), her session list, her session's journal."""
    async with crew.http("alice") as alice:
        found = await alice.post(
            "/api/search", json={"query": "alicetranscriptmarker euro rows", "limit": 10}
        )
        listed = await alice.get("/api/sessions")
        journal = await alice.get("/api/journal", params={"session_id": ALICE_SESSION})
    assert (found.status_code, listed.status_code, journal.status_code) == (200, 200, 200)
    owners = [hit["owner"] for hit in found.json()["hits"]]
    sessions = [s["session_id"] for s in listed.json()["sessions"]]
    return owners, sessions, journal.text


async def test_a_teammates_import_of_your_transcript_leaves_your_own_import_whole(
    service: MemoryService, settings: Settings, tmp_path: Path
) -> None:
    # A folder both can read (a shared machine, a synced folder): carol imports it first with
    # `import --user carol`; alice's own import must still bring her whole session, as hers.
    shared = tmp_path / "shared" / "projects"
    transcript = alices_transcript(shared)
    async with team(service, settings) as crew:
        carols = await import_as(service, "carol", shared)
        alices = await import_as(service, "alice", shared)
        again = await import_as(service, "alice", shared)
        owners, sessions, _ = await what_alice_sees(crew)

    assert carols["turns_imported"] == 2, carols
    assert (alices["turns_imported"], alices["files_unchanged"]) == (2, 0), alices
    # alice's read position is her own: her second run finds nothing new.
    assert (again["turns_imported"], again["files_unchanged"]) == (0, 1), again
    assert owners and set(owners) == {"alice"}
    assert sessions == [ALICE_SESSION]
    assert await owners_of(service, "imported_sessions", "session_id", ALICE_SESSION) == [
        "alice",
        "carol",
    ]
    assert await owners_of(service, "imported_files", "file_path", str(transcript)) == [
        "alice",
        "carol",
    ]


async def test_a_file_named_after_your_session_leaves_your_journal_alone(
    service: MemoryService, settings: Settings, tmp_path: Path
) -> None:
    # alice's hooks journal her prompt and call as she works; carol imports a file of her own
    # named after alice's session id, answering alice's call with a failure.
    crafted = SessionWriter(ALICE_SESSION, cwd=CWD).prompt("carolcraftedmarker: list the files")
    crafted.result("toolu_alice_export_01", "carolcraftedmarker: permission denied")
    crafted.lines[-1]["message"]["content"][0]["is_error"] = True
    carols = crafted.write(tmp_path / "carol" / "projects", "-home-dev-acme")
    async with team(service, settings) as crew:
        async with crew.http("alice") as alice:
            prompted = await alice.post(
                "/api/hooks/prompt",
                json={
                    "session_id": ALICE_SESSION,
                    "cwd": CWD,
                    "prompt": ALICE_PROMPT,
                    "prompt_id": "alice-prompt-1",
                },
            )
            called = await alice.post(
                "/api/hooks/tool",
                json={
                    "hook_event_name": "PostToolUse",
                    "session_id": ALICE_SESSION,
                    "cwd": CWD,
                    "prompt_id": "alice-prompt-1",
                    "tool_name": "Bash",
                    "tool_use_id": "toolu_alice_export_01",
                    "tool_input": {"command": "make export"},
                    "tool_response": {"stdout": "done", "stderr": "", "interrupted": False},
                },
            )
        assert (prompted.status_code, called.status_code) == (200, 202), called.text
        deadline = asyncio.get_running_loop().time() + 30
        while await owners_of(service, "journal_prompts", "session_id", ALICE_SESSION) != ["alice"]:
            assert asyncio.get_running_loop().time() < deadline, "alice's prompt not journaled"
            await asyncio.sleep(0.1)
        imported = await import_as(service, "carol", carols.parent.parent)
        _, _, journal = await what_alice_sees(crew)

    assert imported["sessions"] == 1, imported
    entries = json.loads(journal)["entries"]
    assert [e["prompt"] for e in entries] == [ALICE_PROMPT]
    calls = [(c["tool_use_id"], c["success"]) for e in entries for c in e["calls"]]
    assert calls == [("toolu_alice_export_01", True)]
    assert "carolcraftedmarker" not in journal
    alices_call = "SELECT success FROM session_events e JOIN users u ON u.id = e.owner_id"
    alices_call += " WHERE u.name = 'alice' AND e.tool_use_id = 'toolu_alice_export_01'"
    assert await rows(service, alices_call) == [(True,)]
