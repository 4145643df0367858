"""A hostile teammate and lessons (#34): patterns that stall the server (ReDoS), lessons changed
or read across projects, secrets written as patterns.

alice and bob belong to project acme, carol to project other, dave has no project list (every
project). Each test is written as the attack, over real HTTP and MCP against the real app and
database, and failed on the code before #34's fixes for lessons.
"""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from server.core.access import acting_as
from server.core.config import Settings
from server.core.errors import InvalidInput
from server.core.models.lessons import LessonDraft
from server.db.migrate import MIGRATIONS_DIR, apply_migrations
from server.domain.lessons import MAX_PATTERN_PROGRAM, compiled
from server.service.memory import MemoryService
from tests.security.team import Team, team
from tests.security.worst_patterns import WORST_INPUTS, WORST_PATTERNS, while_polled

pytestmark = pytest.mark.security

ACME = "/home/dev/acme"
GITHUB_TOKEN = "ghp_" + "R8vKq2Lm9Xw4Tz7Pb3Nd6Hf1Js5Gc0Ya8Ue2"
AWS_KEY_ID = "AKIAQ7XW2LMN4PRS6TUV"
ANTHROPIC_KEY = "sk-ant-api03-" + "Zq4Rt8Wm2Xn6Yp0Vb3Kc7Lf1Hd5Gs9Je" * 3


async def save_in_acme(crew: Team, name: str, content: str, visibility: str) -> None:
    """A memory of `name`'s in project acme at ACME, so that hooks from there are in acme."""
    with acting_as(await crew.service.users.viewer_by_name(name)):
        await crew.service.save(
            content, project="acme", project_path=ACME, visibility=visibility, force=True
        )


def error_text(result: Any) -> str:
    """The text of an MCP tool result that must be an error."""
    assert result.is_error, result.structured_content
    return " ".join(getattr(block, "text", "") for block in result.content)


async def lesson_row(service: MemoryService, lesson_id: int) -> dict[str, Any]:
    async with service.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT message, active, project, pattern, tool FROM lessons WHERE id = %s",
            (lesson_id,),
        )
        row = await cur.fetchone()
    assert row is not None
    return dict(zip(("message", "active", "project", "pattern", "tool"), row, strict=True))


async def every_lesson_text(service: MemoryService) -> str:
    """Every text field of every lesson, as stored, backslashes dropped (so an escaped secret,
    `sk\\-ant\\-...`, reads as itself)."""
    async with service.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT coalesce(string_agg(concat_ws(' ', tool, pattern, project, message, origin,"
            " proposal_key), ' '), '') FROM lessons"
        )
        row = await cur.fetchone()
    assert row is not None
    return str(row[0]).replace("\\", "")


async def lessons_with_pattern(service: MemoryService, pattern: str) -> int:
    async with service.pool.connection() as conn:
        cur = await conn.execute("SELECT count(*) FROM lessons WHERE pattern = %s", (pattern,))
        row = await cur.fetchone()
    assert row is not None
    return int(row[0])


def pre_tool(command: str, cwd: str = "/home/dev/scratch") -> dict[str, Any]:
    return {"cwd": cwd, "tool_name": "Bash", "tool_input": {"command": command}}


# ----- 1. ReDoS: a pattern that stalls the hook and everything else -------------------------


async def attack(
    crew: Team, commands: tuple[str, ...], rounds: int
) -> tuple[int, list[tuple[str, httpx.Response]]]:
    """Bob's hook calls in acme with `commands`, three at a time, `rounds` each, while /health
    is polled (at least once, and until the hooks are done); how many health checks answered
    200, and each command's answer. How long they took is bench/lesson_patterns.py's to say."""
    answers: list[tuple[str, httpx.Response]] = []
    checks = 0

    async def hooks(bob: httpx.AsyncClient) -> None:
        for _ in range(rounds):
            for command in commands:
                answer = await bob.post("/api/hooks/pre-tool", json=pre_tool(command, ACME))
                answers.append((command, answer))

    async def health(probe: httpx.AsyncClient, done: asyncio.Event) -> None:
        nonlocal checks
        while True:
            answer = await probe.get("/health")
            assert answer.status_code == 200, answer.text
            checks += 1
            if done.is_set():
                return
            await asyncio.sleep(0.01)  # paces the probe; nothing waits on it

    async with crew.http("bob") as bob, crew.http() as probe:
        await bob.post("/api/hooks/pre-tool", json=pre_tool("echo warm-up", ACME))
        await while_polled(lambda done: health(probe, done), [hooks(bob) for _ in range(3)])
    return checks, answers


async def stored_patterns(service: MemoryService) -> list[str]:
    async with service.pool.connection() as conn:
        cur = await conn.execute("SELECT pattern FROM lessons WHERE pattern IS NOT NULL")
        return [str(row[0]) for row in await cur.fetchall()]


def re2_verdict(pattern: str) -> int:
    """The status the lesson API must answer for `pattern`: 201 when RE2 compiles it within
    MAX_PATTERN_PROGRAM instructions (a search then takes time linear in the input), else 400."""
    try:
        matcher = compiled(pattern)
    except InvalidInput:
        return 400
    assert matcher.programsize <= MAX_PATTERN_PROGRAM, pattern
    return 201


async def test_catastrophic_patterns_stall_neither_the_hook_nor_health(
    service: MemoryService, settings: Settings
) -> None:
    """Without a clock: every pattern stored is one RE2 runs in linear time (the rest are
    refused), /health answers while the hooks run against the worst inputs, and the hooks'
    answers are right. The seconds they take are measured by bench/lesson_patterns.py."""
    async with team(service, settings) as crew:
        # alice's lessons of acme, which bob works in (a teammate's lesson for every project
        # applies to her calls only, #54)
        await save_in_acme(crew, "bob", "acme builds with make.", "private")
        async with crew.http("alice") as alice:
            planted = await alice.post(
                "/api/lessons",
                json={"pattern": "(a+)+$", "message": "Mind the a's.", "tool": "Bash",
                      "project": "acme"},
            )  # fmt: skip
        assert planted.status_code == 201, planted.text

        # The attack of the report: 25 a's and a "!" took 2.5 s, and /health waited as long.
        checks, answers = await attack(crew, ("a" * 25 + "!",), rounds=1)
        assert [answer.status_code for _, answer in answers] == [200] * 3
        assert checks >= 1, "/health never answered while the hooks ran"
        assert all(planted.json()["id"] not in a.json()["lesson_ids"] for _, a in answers)

        # Then the worst patterns found, each stored or refused, against the longest inputs.
        async with crew.http("alice") as alice:
            written = [
                await alice.post(
                    "/api/lessons",
                    json={"pattern": pattern, "message": "No.", "tool": "Bash", "project": "acme"},
                )
                for pattern in WORST_PATTERNS
            ]
        for pattern, answer in zip(WORST_PATTERNS, written, strict=True):
            assert answer.status_code == re2_verdict(pattern), (pattern, answer.text)
            if answer.status_code == 400:
                assert answer.json()["error"]["code"] == "invalid_input", answer.text
        assert {201, 400} <= {answer.status_code for answer in written}
        # Nothing reached the table that RE2 would not run in linear time.
        assert all(re2_verdict(pattern) == 201 for pattern in await stored_patterns(service))
        checks, answers = await attack(crew, WORST_INPUTS, rounds=2)

    assert {answer.status_code for _, answer in answers} == {200}
    assert len(answers) == 3 * 2 * len(WORST_INPUTS)
    assert checks >= 1, "/health never answered while the hooks ran"
    # The lessons still work: `(a+)+$` applies to a command that ends in a's, and only to it.
    for command, answer in answers:
        applies = planted.json()["id"] in answer.json()["lesson_ids"]
        assert applies == (command == "a" * 8_000), command[:20]


@pytest.mark.parametrize(
    ("pattern", "lacking"),
    [
        (r"(a+)\1", "backreferences"),
        (r"deploy(?=.*prod)", "lookahead"),
        (r"(?<!dry-)run", "lookbehind"),
        (r"secrets\.env\Z", r"\z (not \Z)"),
        (r"a{1001}", "repetition counts up to 1000"),
        (r"(.*){100}", "too costly to match"),
    ],
)
async def test_a_pattern_re2_cannot_run_cheaply_is_refused_saying_why(
    service: MemoryService, settings: Settings, pattern: str, lacking: str
) -> None:
    async with team(service, settings) as crew:
        async with crew.http("alice") as alice:
            posted = await alice.post(
                "/api/lessons", json={"pattern": pattern, "message": "No.", "tool": "Bash"}
            )
            kept = await alice.post("/api/lessons", json={"pattern": "deploy", "message": "No."})
            edited = await alice.patch(
                f"/api/lessons/{kept.json()['id']}", json={"pattern": pattern}
            )
        async with crew.mcp("alice") as mcp:
            tool = await mcp.call_tool(
                "save_lesson", {"pattern": pattern, "message": "No."}, raise_on_error=False
            )

    for answer in (posted, edited):
        assert answer.status_code == 400, answer.text
        assert answer.json()["error"]["code"] == "invalid_input"
        assert lacking in answer.json()["error"]["message"]
    assert lacking in error_text(tool)
    assert (await lesson_row(service, kept.json()["id"]))["pattern"] == "deploy"
    assert await lessons_with_pattern(service, pattern) == 0


async def test_a_stored_pattern_re2_cannot_compile_is_skipped_with_one_warning(
    service: MemoryService, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """A lesson written before RE2 (lookahead was fine then) must not break the hook."""
    marker = uuid.uuid4().hex[:8]
    async with service.pool.connection() as conn:
        cur = await conn.execute(
            "INSERT INTO lessons (tool, pattern, message) VALUES"
            " ('Bash', %s, 'Old lesson.'), ('Bash', 'deploy', 'Deploy from CI.') RETURNING id",
            (f"deploy(?=.*{marker})",),
        )
        old_id, good_id = [row[0] for row in await cur.fetchall()]
    caplog.set_level(logging.WARNING, logger="server.service.lessons")
    async with team(service, settings) as crew, crew.http("bob") as bob:
        answers = [
            await bob.post("/api/hooks/pre-tool", json=pre_tool(f"deploy {marker}"))
            for _ in range(3)
        ]

    assert [answer.status_code for answer in answers] == [200] * 3
    assert all(answer.json()["lesson_ids"] == [good_id] for answer in answers)
    skipped = [r for r in caplog.records if f"lesson {old_id} skipped" in r.getMessage()]
    assert len(skipped) == 1 and skipped[0].levelno == logging.WARNING
    assert marker not in caplog.text  # the log names the lesson, never its pattern


async def test_path_lessons_proposed_before_re2_keep_matching_after_migration_018(
    fresh_database: Callable[[], str], tmp_path: Path
) -> None:
    """The proposer wrote path boundaries as lookarounds; 018 rewrites them for RE2."""
    before = tmp_path / "before"
    before.mkdir()
    for script in sorted(MIGRATIONS_DIR.glob("0*.sql")):
        if int(script.name[:3]) <= 16:
            shutil.copy(script, before)
    url = fresh_database()
    await apply_migrations(url, before)
    old = {
        "read": r"(?<![\w.-])\.env(?![\w.-])",
        "dir": r"(?<![\w.-])src/generated/",
        "copy": r"\bcp\b.*(?<![\w.-])\.env(?![\w.-]).*(?<![\w.-])\.env\.bak(?![\w.-])",
        "after dir": r"\brm\b.*(?<![\w.-])src/.*(?<![\w.-])\.env(?![\w.-])",
    }
    with psycopg.connect(url, autocommit=True) as conn:
        for name, pattern in old.items():
            conn.execute(
                "INSERT INTO lessons (tool, pattern, message, proposal_key)"
                " VALUES ('Bash', %s, %s, %s)",
                (pattern, name, f"bash\n\n{pattern}"),
            )
    shutil.copy(MIGRATIONS_DIR / "018_lesson_owners.sql", before)
    await apply_migrations(url, before)
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT message, pattern, proposal_key FROM lessons").fetchall()
    now = {name: (pattern, key) for name, pattern, key in rows}

    calls = {
        "read": (["cat .env", ".env", "x\n.env"], ["cat .env.example", "cat my.env", "a-.env"]),
        "dir": (["vim src/generated/a.ts", "src/generated/"], ["vim foo-src/generated/a.ts"]),
        "copy": (["cp .env .env.bak", "cp -a .env x .env.bak"], ["cp .env\n.env.bak", "cp .env"]),
        "after dir": (["rm src/.env", "rm -r src/ x .env"], ["rm src/x.env", "rm src\n.env"]),
    }
    for name, (matched, unmatched) in calls.items():
        pattern, key = now[name]
        assert key == f"bash\n\n{pattern}"
        matcher = compiled(pattern)  # RE2 accepts it
        assert all(matcher.search(text.encode()) for text in matched), (name, pattern)
        assert not any(matcher.search(text.encode()) for text in unmatched), (name, pattern)


# ----- 6. Lessons changed and read across projects -------------------------------------------


async def test_a_non_member_cannot_edit_or_switch_off_a_projects_lesson(
    service: MemoryService, settings: Settings
) -> None:
    async with team(service, settings) as crew:
        async with crew.http("alice") as alice:
            created = await alice.post(
                "/api/lessons",
                json={"pattern": "terraform apply", "message": "Plan first.", "project": "acme"},
            )
        lesson_id = created.json()["id"]
        async with crew.http("carol") as carol:
            patched = await carol.patch(
                f"/api/lessons/{lesson_id}", json={"message": "Apply straight away."}
            )
            switched = await carol.patch(f"/api/lessons/{lesson_id}", json={"active": False})
        async with crew.mcp("carol") as mcp:
            tool = await mcp.call_tool(
                "save_lesson", {"lesson_id": lesson_id, "active": False}, raise_on_error=False
            )
        after_carol = await lesson_row(service, lesson_id)
        async with crew.http("bob") as bob:  # a member of acme may
            by_member = await bob.patch(f"/api/lessons/{lesson_id}", json={"strictness": "ask"})
        async with crew.http("dave") as dave:  # and so may a user of every project
            by_dave = await dave.patch(f"/api/lessons/{lesson_id}", json={"active": False})

    assert created.status_code == 201, created.text
    for answer in (patched, switched):  # a lesson carol cannot see is not found (#54)
        assert answer.status_code == 404, answer.text
        assert answer.json()["error"]["code"] == "not_found"
        message = answer.json()["error"]["message"]
        assert message == f"no lesson with id {lesson_id}"
    assert f"no lesson with id {lesson_id}" in error_text(tool)
    assert (after_carol["message"], after_carol["active"]) == ("Plan first.", True)
    assert by_member.status_code == 200, by_member.text
    assert by_dave.status_code == 200, by_dave.text
    assert (await lesson_row(service, lesson_id))["active"] is False


async def test_only_its_author_changes_a_lesson_for_every_project(
    service: MemoryService, settings: Settings
) -> None:
    async with team(service, settings) as crew, crew.http("alice") as alice:
        created = await alice.post(
            "/api/lessons", json={"pattern": "git push", "message": "Open a pull request."}
        )
        lesson_id = created.json()["id"]
        refused = {}
        for name in ("bob", "carol", "dave"):
            async with crew.http(name) as other:
                refused[name] = await other.patch(
                    f"/api/lessons/{lesson_id}", json={"message": "Push to main."}
                )
        async with crew.mcp("bob") as mcp:
            tool = await mcp.call_tool(
                "save_lesson",
                {"lesson_id": lesson_id, "message": "Push to main."},
                raise_on_error=False,
            )
        own = await alice.patch(f"/api/lessons/{lesson_id}", json={"strictness": "ask"})

    for name, answer in refused.items():
        assert answer.status_code == 403, (name, answer.text)
        assert answer.json()["error"]["code"] == "forbidden"
        assert "is alice's, for every project: only alice can change it" in answer.text
    assert "only alice can change it" in error_text(tool)
    assert own.status_code == 200, own.text
    stored = await lesson_row(service, lesson_id)
    assert (stored["message"], stored["active"]) == ("Open a pull request.", True)


async def test_an_ownerless_lesson_is_changed_only_by_its_projects_members(
    service: MemoryService, settings: Settings
) -> None:
    """Lessons from before users, the command line or the proposer have no owner."""
    acme = await service.add_lesson(
        LessonDraft(pattern="kubectl delete", message="No.", project="acme")
    )
    general = await service.add_lesson(LessonDraft(pattern="rm -rf", message="Think twice."))
    async with team(service, settings) as crew:
        async with crew.http("carol") as carol:
            outsider = await carol.patch(f"/api/lessons/{acme.id}", json={"active": False})
            anyone = await carol.patch(f"/api/lessons/{general.id}", json={"strictness": "ask"})
        async with crew.http("bob") as bob:
            member = await bob.patch(f"/api/lessons/{acme.id}", json={"strictness": "ask"})

    assert outsider.status_code == 404, outsider.text  # carol cannot see it (#54)
    assert outsider.json()["error"]["message"] == f"no lesson with id {acme.id}"
    assert anyone.status_code == 200, anyone.text
    assert member.status_code == 200, member.text
    assert (await lesson_row(service, acme.id))["active"] is True


async def test_a_lesson_for_a_project_one_is_not_in_is_refused(
    service: MemoryService, settings: Settings
) -> None:
    async with team(service, settings) as crew:
        async with crew.http("carol") as carol:
            posted = await carol.post(
                "/api/lessons",
                json={"pattern": "deploy", "message": "Deploy on Fridays.", "project": "acme"},
            )
            own = await carol.post("/api/lessons", json={"pattern": "deploy", "message": "Mine."})
            moved = await carol.patch(f"/api/lessons/{own.json()['id']}", json={"project": "acme"})
        async with crew.mcp("carol") as mcp:
            tool = await mcp.call_tool(
                "save_lesson",
                {"pattern": "deploy", "message": "Deploy on Fridays.", "project": "acme"},
                raise_on_error=False,
            )
        async with crew.http("dave") as dave:
            anywhere = await dave.post(
                "/api/lessons", json={"pattern": "deploy", "message": "Ask.", "project": "acme"}
            )

    for answer in (posted, moved):
        assert answer.status_code == 403, answer.text
        assert answer.json()["error"]["code"] == "forbidden"
        assert "only for your projects (other)" in answer.json()["error"]["message"]
    assert "only for your projects (other)" in error_text(tool)
    assert own.status_code == 201 and anywhere.status_code == 201, (own.text, anywhere.text)
    assert (await lesson_row(service, own.json()["id"]))["project"] == ""
    assert "Deploy on Fridays." not in await every_lesson_text(service)


async def test_lessons_of_a_project_are_neither_listed_nor_applied_outside_it(
    service: MemoryService, settings: Settings
) -> None:
    async with team(service, settings) as crew:
        await save_in_acme(crew, "alice", "acme deploys go through the release train.", "shared")
        # carol works in a checkout of acme too (her own, private notes), so her hook is in acme
        await save_in_acme(crew, "carol", "carol's scratch notes on the acme checkout.", "private")
        async with crew.http("alice") as alice:
            created = await alice.post(
                "/api/lessons",
                json={
                    "pattern": "terraform apply",
                    "message": "acmesecretlesson: the state bucket is acme-tf-prod.",
                    "project": "acme",
                    "tool": "Bash",
                },
            )
        lesson_id = created.json()["id"]
        seen: dict[str, str] = {}
        applied: dict[str, list[int]] = {}
        for name in ("bob", "carol", "dave"):
            async with crew.http(name) as http:
                listed = await http.get("/api/lessons")
                hooked = await http.post(
                    "/api/hooks/pre-tool", json=pre_tool("terraform apply -auto-approve", ACME)
                )
            async with crew.mcp(name) as mcp:
                tool = await mcp.call_tool("list_lessons", {})
            assert listed.status_code == 200 and hooked.status_code == 200
            seen[name] = listed.text + json.dumps(tool.structured_content)
            applied[name] = hooked.json()["lesson_ids"]
            seen[name] += hooked.text

    assert created.status_code == 201, created.text
    assert "acmesecretlesson" not in seen["carol"]
    assert applied["carol"] == []
    for member in ("bob", "dave"):
        assert "acmesecretlesson" in seen[member]
        assert applied[member] == [lesson_id]


# ----- 7. Secrets written as patterns ------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "rule", "command"),
    [
        (GITHUB_TOKEN, r"ghp_[A-Za-z0-9]{36}", f"curl -H 'Authorization: token {GITHUB_TOKEN}'"),
        (
            f"gh auth login --with-token {GITHUB_TOKEN}",
            "--with-token ghp_",
            f"gh auth login --with-token {GITHUB_TOKEN}",
        ),
        (AWS_KEY_ID, r"AKIA[0-9A-Z]{16}", f"export AWS_ACCESS_KEY_ID={AWS_KEY_ID}"),
        # escaped, as re.escape writes it
        (
            ANTHROPIC_KEY.replace("-", r"\-"),
            r"sk-ant-api03-\S+",
            f"ANTHROPIC_API_KEY={ANTHROPIC_KEY} claude",
        ),
        (
            "PGPASSWORD=Tr0ub4dor-horse-staple",
            r"PGPASSWORD=\S+",
            "PGPASSWORD=Tr0ub4dor-horse-staple psql",
        ),
    ],
)
async def test_a_pattern_holding_a_secret_is_refused_and_one_matching_it_kept(
    service: MemoryService, settings: Settings, pattern: str, rule: str, command: str
) -> None:
    secret = pattern.replace("\\", "").split("=")[-1].split()[-1]  # the secret, unescaped
    async with team(service, settings) as crew:
        await save_in_acme(crew, "bob", "acme builds with make.", "private")
        async with crew.http("alice") as alice:
            posted = await alice.post(
                "/api/lessons", json={"pattern": pattern, "message": "Rotate it.", "tool": "Bash"}
            )
            kept = await alice.post(
                "/api/lessons",
                json={"pattern": rule, "message": "Use the vault.", "tool": "Bash",
                      "project": "acme"},
            )  # fmt: skip
            edited = await alice.patch(
                f"/api/lessons/{kept.json()['id']}", json={"pattern": pattern}
            )
        async with crew.mcp("alice") as mcp:
            tool = await mcp.call_tool(
                "save_lesson", {"pattern": pattern, "message": "Rotate it."}, raise_on_error=False
            )
        async with crew.http("bob") as bob:
            listed = await bob.get("/api/lessons")
            hooked = await bob.post("/api/hooks/pre-tool", json=pre_tool(command, ACME))

    for answer in (posted, edited):
        assert answer.status_code == 400, answer.text
        assert answer.json()["error"]["code"] == "invalid_input"
        assert "pattern looks like a secret" in answer.text
        assert "without containing it" in answer.text
        assert secret not in answer.text
    assert "pattern looks like a secret" in error_text(tool)
    assert secret not in error_text(tool)
    assert secret not in listed.text
    assert secret not in await every_lesson_text(service)
    # What the refusal suggests works: a pattern that matches the secret without holding it.
    assert kept.status_code == 201, kept.text
    assert kept.json()["pattern"] == rule
    assert hooked.json()["lesson_ids"] == [kept.json()["id"]]


async def test_a_secret_in_a_lessons_tool_or_project_is_redacted_or_never_echoed(
    service: MemoryService, settings: Settings
) -> None:
    async with team(service, settings) as crew:
        async with crew.http("dave") as dave:  # dave may write for any project
            stored = await dave.post(
                "/api/lessons",
                json={
                    "pattern": "deploy",
                    "message": "Ask first.",
                    "tool": GITHUB_TOKEN,
                    "project": AWS_KEY_ID,
                },
            )
            edited = await dave.patch(
                f"/api/lessons/{stored.json()['id']}", json={"tool": ANTHROPIC_KEY}
            )
        async with crew.http("carol") as carol:  # carol may not: the refusal must not quote it
            refused = await carol.post(
                "/api/lessons",
                json={"pattern": "deploy", "message": "Ask first.", "project": GITHUB_TOKEN},
            )
        async with crew.http("dave") as dave:
            listed = await dave.get("/api/lessons")

    assert stored.status_code == 201, stored.text
    assert stored.json()["tool"] == "[REDACTED:github-token]"
    assert stored.json()["project"] == "[REDACTED:aws-access-key]"
    assert edited.status_code == 200, edited.text
    assert edited.json()["tool"] == "[REDACTED:anthropic-key]"
    assert refused.status_code == 403, refused.text
    everything = stored.text + edited.text + refused.text + listed.text
    everything += await every_lesson_text(service)
    for secret in (GITHUB_TOKEN, AWS_KEY_ID, ANTHROPIC_KEY):
        assert secret not in everything
