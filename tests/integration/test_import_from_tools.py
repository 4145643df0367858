"""`claude-memory import --from NAME`: other tools' memories into the real database.

Each source's fixture (tests/fixtures/other_tools/, its README naming the format read) imports
once and then adds nothing; a malformed file is named with its reason while the rest of the
source is imported; a dry run stores nothing; secrets are redacted; trajectories are stored as
`learn` stores them.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from server.core.models.memories import Memory, MemoryFilter
from server.domain.trajectories import Trajectory
from server.ingest.from_tools import import_from_tool
from server.ingest.importer import ImportFilters
from server.service.memory import MemoryService
from tests.integration.processes import cli_env, run_cli
from tests.other_tools import (
    CLAUDE_MD,
    MARKDOWN,
    MARKDOWN_FOLDERS,
    MEM0,
    TRAJECTORY_FILES,
    claude_mem_database,
    openmemory_backup,
)

Paths = Callable[[Path], list[Path]]
SOURCES: dict[str, tuple[Paths, int]] = {
    # name: (the fixture's paths, memories it holds)
    "claude-mem": (lambda tmp: [claude_mem_database(tmp)], 6),
    "claude-md": (lambda tmp: [CLAUDE_MD / "home" / ".claude", CLAUDE_MD / "acme-web"], 8),
    "mem0": (
        lambda tmp: [
            openmemory_backup(tmp),
            MEM0 / "mem0-get-all.json",
            MEM0 / "mem0-platform-list.json",
        ],
        8,
    ),
    "markdown": (lambda tmp: MARKDOWN_FOLDERS, 4),
    "trajectories": (lambda tmp: TRAJECTORY_FILES, 6),
}


def broken_claude_mem(tmp: Path) -> tuple[list[Path], Path]:
    bad = tmp / "old-machine.db"
    bad.write_text("SQLite format? no: a text file\n")
    return [bad, claude_mem_database(tmp)], bad


def broken_claude_md(tmp: Path) -> tuple[list[Path], Path]:
    config = Path(shutil.copytree(CLAUDE_MD / "home" / ".claude", tmp / ".claude"))
    bad = config / "projects" / "-home-dev-work-acme-api" / "memory" / "feedback_half.md"
    bad.write_text("---\nname: half written\ntype: feedback\n")
    return [config, CLAUDE_MD / "acme-web"], bad


def broken_mem0(tmp: Path) -> tuple[list[Path], Path]:
    bad = tmp / "truncated.json"
    bad.write_text('{"results": [{"memory": "cut off')
    return [bad, *SOURCES["mem0"][0](tmp)], bad


def broken_markdown(tmp: Path) -> tuple[list[Path], Path]:
    vault = Path(shutil.copytree(MARKDOWN / "obsidian-vault", tmp / "vault"))
    bad = vault / "cp1252.md"
    bad.write_bytes("# R\xe9sum\xe9 of the outage\n".encode("cp1252"))
    return [MARKDOWN / "basic-memory", vault], bad


def broken_trajectories(tmp: Path) -> tuple[list[Path], Path]:
    bad = tmp / "half.json"
    bad.write_text('[{"task": "deploy", "worked": ')
    return [bad, *TRAJECTORY_FILES], bad


BROKEN: dict[str, Callable[[Path], tuple[list[Path], Path]]] = {
    "claude-mem": broken_claude_mem,
    "claude-md": broken_claude_md,
    "mem0": broken_mem0,
    "markdown": broken_markdown,
    "trajectories": broken_trajectories,
}


async def stored(service: MemoryService, where: MemoryFilter | None = None) -> list[Memory]:
    page = await service.list_memories(where or MemoryFilter(), limit=500)
    return sorted(page.memories, key=lambda m: (m.created_at, m.id))


@pytest.mark.parametrize("name", list(SOURCES))
async def test_each_source_imports_once_and_a_second_run_adds_nothing(
    service: MemoryService, tmp_path: Path, name: str
) -> None:
    paths, count = SOURCES[name][0](tmp_path), SOURCES[name][1]

    first = await import_from_tool(service, name, paths)
    again = await import_from_tool(service, name, paths)

    assert first.errors == []
    assert (first.source, first.turns_imported) == (name, count)
    assert (again.turns_imported, again.turns_duplicate) == (0, count)
    assert len(await stored(service, MemoryFilter(source=name))) == count


@pytest.mark.parametrize("name", list(BROKEN))
async def test_a_malformed_file_is_named_and_the_rest_is_imported(
    service: MemoryService, tmp_path: Path, name: str
) -> None:
    paths, bad = BROKEN[name](tmp_path)

    summary = await import_from_tool(service, name, paths)

    assert len(summary.errors) == 1
    assert summary.errors[0].startswith(f"{bad}: ")
    assert summary.files_failed == 1
    assert summary.turns_imported == SOURCES[name][1]
    assert len(await stored(service, MemoryFilter(source=name))) == SOURCES[name][1]


async def test_a_dry_run_shows_what_would_be_stored_and_stores_nothing(
    service: MemoryService, tmp_path: Path
) -> None:
    paths = SOURCES["mem0"][0](tmp_path)

    summary = await import_from_tool(service, "mem0", paths, dry_run=True)

    assert (await service.stats()).total == 0
    assert summary.turns_imported == 8
    assert summary.redactions == 1  # the deploy token, counted as it would be redacted
    preview = summary.as_json()["preview"]
    assert isinstance(preview, dict)
    assert preview["by_kind"] == {"distilled": 8}
    assert preview["by_project"] == {"": 4, "acme-api": 4}
    samples = preview["samples"]
    assert len(samples) == 5
    assert samples[0]["content"] == "Prefers pnpm over npm in every JavaScript project"
    assert "ghp_" not in json.dumps(samples)
    assert "[REDACTED:github-token]" in samples[1]["content"]


async def test_secrets_in_other_tools_memories_are_redacted_before_storing(
    service: MemoryService, tmp_path: Path
) -> None:
    from_claude_mem = await import_from_tool(service, "claude-mem", [claude_mem_database(tmp_path)])
    from_mem0 = await import_from_tool(service, "mem0", [openmemory_backup(tmp_path)])

    everything = "\n".join(m.content for m in await stored(service))
    assert (from_claude_mem.redactions, from_mem0.redactions) == (1, 1)
    assert "AKIA2E0A8F3B244C9986" not in everything
    assert "ghp_4Rb8TqLm2Xw9Zc1Vn6Jd3Hk7Py5Gs0Fa8Ue2" not in everything
    assert "the staging key [REDACTED:aws-access-key] was used" in everything
    assert "the deploy token is [REDACTED:github-token]" in everything


async def test_claude_mem_memories_keep_their_dates_projects_sessions_and_ids(
    service: MemoryService, tmp_path: Path
) -> None:
    await import_from_tool(service, "claude-mem", [claude_mem_database(tmp_path)])

    memories = await stored(service, MemoryFilter(source="claude-mem"))
    first = memories[0]
    assert first.created_at == datetime(2026, 3, 2, 9, 14, 5, tzinfo=UTC)
    assert (first.kind, first.project) == ("distilled", "acme-api")
    assert first.session_id == "5f0c2a9e-3b1d-4c55-9a57-2d8e6b1f4c10"
    assert first.metadata["original_id"] == "observation:1"
    assert "discovery" in first.tags
    assert {m.project for m in memories} == {"acme-api", "acme-web"}


async def test_trajectories_are_stored_as_learn_stores_them(
    service: MemoryService, tmp_path: Path
) -> None:
    learned = await service.learn(
        Trajectory(
            "Get `orders.pagination.test.ts` to stop failing one run in five on CI.",
            "Compared `created_at` as text in the keyset cursor instead of a JavaScript Date; "
            "Added `id` as the tie-breaker in the ORDER BY and in the cursor",
            "Rounding timestamps to milliseconds (rows created in the same millisecond still "
            "collide); Retrying the test in CI: it hides the bug",
            project="acme-api",
        ),
        source="cli",
    )

    summary = await import_from_tool(service, "trajectories", TRAJECTORY_FILES)

    assert (summary.turns_imported, summary.turns_duplicate) == (5, 1)  # learned already
    trajectories = await stored(service, MemoryFilter(kind="trajectory"))
    assert len(trajectories) == 6
    assert {m.kind for m in await stored(service)} == {"trajectory"}
    assert learned.id in {m.id for m in trajectories}
    cached = next(m for m in trajectories if m.metadata.get("original_id") == "traj_k3x9m2p7q1w8")
    assert cached.content.startswith("Task: Cache the pnpm store in CI\nWhat worked: ")


async def test_claude_code_feedback_memories_become_preferences_of_their_project(
    service: MemoryService,
) -> None:
    await import_from_tool(service, "claude-md", [CLAUDE_MD / "home" / ".claude"])

    preferences = await stored(service, MemoryFilter(kind="preference"))
    assert {m.metadata["original_id"] for m in preferences} == {"feedback_testing", "user_role"}
    assert {m.project for m in preferences} == {"acme-api"}
    user_wide = await stored(service, MemoryFilter(tag="claude-md"))
    assert [m.project for m in user_wide] == [""]


async def test_an_edited_instruction_file_supersedes_what_its_last_import_stored(
    service: MemoryService, tmp_path: Path
) -> None:
    repo = tmp_path / "acme-cli"
    shutil.copytree(CLAUDE_MD / "acme-cli", repo)
    agents = repo / "AGENTS.md"
    await import_from_tool(service, "instructions", [repo])
    (before,) = await stored(service, MemoryFilter(tag="agents-md"))
    agents.write_text(agents.read_text().replace("`make test`", "`make check`"))

    again = await import_from_tool(service, "instructions", [repo])

    assert (again.turns_imported, again.turns_duplicate, again.links_restored) == (1, 2, 1)
    first, after = await stored(service, MemoryFilter(tag="agents-md"))
    assert first.id == before.id
    assert "Run `make check` before every commit" in after.content
    assert after.supersedes == before.id
    assert after.supersede_reason == "AGENTS.md was edited since its last import"
    assert (await service.get(before.id)).superseded_by == after.id
    unchanged = await import_from_tool(service, "claude-md", [repo])
    assert (unchanged.turns_imported, unchanged.links_restored) == (0, 0)


async def test_project_and_since_filters_leave_other_memories_out(
    service: MemoryService, tmp_path: Path
) -> None:
    database = claude_mem_database(tmp_path)

    summary = await import_from_tool(
        service,
        "claude-mem",
        [database],
        filters=ImportFilters(project="acme-web", since=datetime(2026, 3, 3, 17, tzinfo=UTC)),
    )

    assert summary.turns_imported == 1  # the acme-web summary; its observation is older
    assert summary.as_json()["turns_skipped"] == {
        "before_since": 1,
        "empty": 1,
        "other_project": 4,
    }


def test_the_cli_imports_from_two_tools_and_prints_json(
    service: MemoryService, pg_url: str, tmp_path: Path
) -> None:
    database = claude_mem_database(tmp_path)

    preview = run_cli(
        "import", "--from", "claude-mem", str(database), "--dry-run", env=cli_env(pg_url, tmp_path)
    )
    result = run_cli(
        "import",
        "--from",
        "claude-mem",
        str(database),
        "--from",
        "trajectories",
        *(str(path) for path in TRAJECTORY_FILES),
        "--json",
        env=cli_env(pg_url, tmp_path),
    )

    assert preview.returncode == 0, preview.stderr
    assert "claude-mem: would import 6 memories" in preview.stdout
    assert "by kind: distilled 6" in preview.stdout
    assert "by project: acme-api 4, acme-web 2" in preview.stdout
    assert result.returncode == 0, result.stderr
    claude_mem, trajectories = json.loads(result.stdout)
    assert (claude_mem["source"], claude_mem["turns_imported"]) == ("claude-mem", 6)
    assert (trajectories["source"], trajectories["turns_imported"]) == ("trajectories", 6)
    assert "preview" not in claude_mem


async def test_the_cli_imports_a_repositorys_instruction_files_and_an_edit_replaces_its_memory(
    service: MemoryService, pg_url: str, tmp_path: Path
) -> None:
    repo = tmp_path / "acme-cli"
    shutil.copytree(CLAUDE_MD / "acme-cli", repo)
    gemini = repo / "GEMINI.md"

    env = cli_env(pg_url, tmp_path)

    first = run_cli("import", "--from", "instructions", str(repo), "--json", env=env)
    gemini.write_text("# Gemini notes for acme-cli\n\nPrefer fuzz tests for the flag parser.\n")
    second = run_cli("import", "--from", "claude-md", str(repo), "--json", env=env)

    assert first.returncode == 0, first.stderr
    (summary,) = json.loads(first.stdout)
    assert (summary["source"], summary["turns_imported"]) == ("instructions", 3)
    assert second.returncode == 0, second.stderr
    (again,) = json.loads(second.stdout)
    assert (again["turns_imported"], again["links_restored"]) == (1, 1)
    old, new = await stored(service, MemoryFilter(tag="gemini-md"))
    assert "Prefer table-driven tests" in old.content
    assert (new.supersedes, old.superseded_by) == (old.id, new.id)
    assert {m.project for m in await stored(service, MemoryFilter(source="claude-md"))} == {
        "acme-cli"
    }


def test_the_cli_refuses_an_unknown_tool_in_one_line(
    service: MemoryService, pg_url: str, tmp_path: Path
) -> None:
    result = run_cli("import", "--from", "evernote", "x.enex", env=cli_env(pg_url, tmp_path))

    assert result.returncode == 1
    known = "use one of: claude-mem, claude-md, instructions, mem0"
    assert f"'evernote' is not known; {known}" in result.stderr
    assert "Traceback" not in result.stderr
