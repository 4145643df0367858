"""`claude-memory lessons` as a real child process against the test database."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from server.core.models.lessons import LessonChange, LessonDraft
from server.service.memory import MemoryService
from tests.integration.lesson_sessions import import_sessions
from tests.integration.processes import run_cli


@pytest.fixture
async def lessons_service(service: MemoryService) -> MemoryService:
    """The service over an empty lessons table (the shared fixture leaves lessons alone)."""
    async with service.pool.connection() as conn:
        await conn.execute("TRUNCATE lessons RESTART IDENTITY")
    return service


def lessons_cli(pg_url: str, home: Path, *args: str) -> tuple[int, str, str]:
    result = run_cli(
        "lessons",
        *args,
        # WARNING keeps the model-loading INFO line off stderr, so errors can be checked whole.
        env={
            "CLAUDE_MEMORY_DATABASE_URL": pg_url,
            "CLAUDE_MEMORY_HOME": str(home),
            "CLAUDE_MEMORY_LOG_LEVEL": "WARNING",
        },
    )
    return result.returncode, result.stdout, result.stderr


async def test_lessons_add_stores_user_lessons_and_prints_each_one(
    lessons_service: MemoryService, pg_url: str, tmp_path: Path
) -> None:
    code, out, err = lessons_cli(
        pg_url,
        tmp_path,
        "add",
        "staging",
        "Run load tests against the local stack, never staging",
        "--tool",
        "Bash",
        "--ask",
    )
    plain_code, plain_out, plain_err = lessons_cli(
        pg_url, tmp_path, "add", r"rm\s+-rf", "Check the path first", "--project", "acme", "--plain"
    )

    assert code == 0, err
    added = json.loads(out)
    assert {k: added[k] for k in ("id", "tool", "pattern", "project", "strictness", "origin")} == {
        "id": 1,
        "tool": "Bash",
        "pattern": "staging",
        "project": "",
        "strictness": "ask",
        "origin": "user",
    }
    assert added["active"] is True
    assert plain_code == 0, plain_err
    assert plain_out == "#2 [warn] any tool /rm\\s+-rf/ [acme] Check the path first\n"
    stored = await lessons_service.lessons()
    assert [(lesson.id, lesson.strictness, lesson.project) for lesson in stored] == [
        (2, "warn", "acme"),
        (1, "ask", ""),
    ]


async def test_lessons_list_prints_json_and_one_plain_line_per_lesson(
    lessons_service: MemoryService, pg_url: str, tmp_path: Path
) -> None:
    first = await lessons_service.add_lesson(
        LessonDraft(pattern="staging", message="Use the local stack", tool="Bash", strictness="ask")
    )
    await lessons_service.add_lesson(
        LessonDraft(pattern="migrations/", message="Add a new migration", project="acme")
    )
    await lessons_service.update_lesson(first.id, LessonChange(active=False))

    code, out, err = lessons_cli(pg_url, tmp_path, "list", "--project", "acme", "--active-only")
    plain_code, plain_out, plain_err = lessons_cli(pg_url, tmp_path, "list", "--plain")

    assert code == 0, err
    [listed] = json.loads(out)["lessons"]
    assert (listed["id"], listed["project"], listed["active"]) == (2, "acme", True)
    assert listed["created_at"].endswith("+00:00")
    assert plain_code == 0, plain_err
    assert plain_out.splitlines() == [
        "#2 [warn] any tool /migrations// [acme] Add a new migration",
        "#1 [ask] Bash /staging/ [all projects] Use the local stack (disabled)",
    ]


async def test_lessons_edit_changes_only_the_fields_given(
    lessons_service: MemoryService, pg_url: str, tmp_path: Path
) -> None:
    lesson = await lessons_service.add_lesson(
        LessonDraft(pattern="staging", message="Use the local stack", tool="Bash")
    )

    code, out, err = lessons_cli(
        pg_url, tmp_path, "edit", str(lesson.id), "--pattern", "prod|staging", "--strictness", "ask"
    )

    assert code == 0, err
    edited = json.loads(out)
    assert (edited["pattern"], edited["strictness"], edited["tool"]) == (
        "prod|staging",
        "ask",
        "Bash",
    )
    [stored] = await lessons_service.lessons()
    assert (stored.pattern, stored.strictness, stored.message) == (
        "prod|staging",
        "ask",
        "Use the local stack",
    )


async def test_lessons_disable_then_enable_switches_the_lesson_off_and_on(
    lessons_service: MemoryService, pg_url: str, tmp_path: Path
) -> None:
    lesson = await lessons_service.add_lesson(LessonDraft(pattern="staging", message="Use local"))

    off_code, off_out, off_err = lessons_cli(pg_url, tmp_path, "disable", str(lesson.id))
    assert off_code == 0, off_err
    assert json.loads(off_out)["active"] is False
    assert await lessons_service.lessons(include_inactive=False) == []

    on_code, on_out, on_err = lessons_cli(pg_url, tmp_path, "enable", str(lesson.id), "--plain")
    assert on_code == 0, on_err
    assert on_out == f"#{lesson.id} [warn] any tool /staging/ [all projects] Use local\n"
    assert [found.id for found in await lessons_service.lessons(include_inactive=False)] == [
        lesson.id
    ]


async def test_lessons_add_refuses_an_invalid_pattern_with_one_line(
    lessons_service: MemoryService, pg_url: str, tmp_path: Path
) -> None:
    code, out, err = lessons_cli(pg_url, tmp_path, "add", "(", "Never mind")

    assert code == 1
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("claude-memory: error: pattern is not a valid regular expression")
    assert await lessons_service.lessons() == []


async def test_lessons_edit_of_an_unknown_id_fails_with_one_line(
    lessons_service: MemoryService, pg_url: str, tmp_path: Path
) -> None:
    code, out, err = lessons_cli(pg_url, tmp_path, "edit", "999", "--message", "Anything")

    assert code == 1
    assert out == ""
    assert err.strip() == "claude-memory: error: no lesson with id 999"


async def test_lessons_propose_stores_proposals_and_a_dry_run_only_prints_them(
    service: MemoryService, pg_url: str, tmp_path: Path
) -> None:
    await import_sessions(service)

    dry_code, dry_out, dry_err = lessons_cli(
        pg_url, tmp_path, "propose", "--project", "acme-api", "--dry-run"
    )
    code, out, err = lessons_cli(pg_url, tmp_path, "propose", "--project", "acme-api", "--plain")
    again_code, again_out, again_err = lessons_cli(pg_url, tmp_path, "propose", "--plain")
    list_code, list_out, list_err = lessons_cli(pg_url, tmp_path, "list", "--plain")

    assert dry_code == 0, dry_err
    dry = json.loads(dry_out)
    assert (dry["dry_run"], dry["sessions"], dry["proposed"], dry["known"]) == (True, 3, 3, 0)
    assert {lesson["pattern"] for lesson in dry["lessons"]} == {
        r"\bnpm\b",
        r"\bgit\s+commit\b",
        r"\bstaging\b",
    }
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "3 sessions read; proposed 3 lessons (0 already known)"
    assert r"#1 Bash /\bnpm\b/ [acme-api] Don't use npm, this repo uses pnpm" in out
    assert again_code == 0, again_err
    assert again_out.startswith("6 sessions read; proposed 9 lessons"), "only the other projects"
    assert list_code == 0, list_err
    assert r"#1 [warn] Bash /\bnpm\b/ [acme-api] Don't use npm" in list_out
    assert "(proposed, from journal:3f6c2a1e-8b4d-4c9e-a1f7-2d5e9b0c7a41)" in list_out
    assert all(not lesson.active for lesson in await service.lessons())
