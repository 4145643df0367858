"""A hostile teammate and lessons (#34): patterns that stall the server (ReDoS), secrets written
as patterns.

alice and bob belong to project acme, carol to project other, dave has no project list (every
project). Each test is written as the attack, over real HTTP and MCP against the real app and
database, and failed on the code before #34's fixes for lessons.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from fastmcp import Client

from server.app import create_app
from server.core.config import Settings
from server.service.memory import MemoryService
from tests.db_fixtures import serving

pytestmark = pytest.mark.security

PROJECTS: dict[str, list[str]] = {
    "alice": ["acme"],
    "bob": ["acme"],
    "carol": ["other"],
    "dave": [],
}
# The bound issue #34 sets for the hook and /health while the attack runs.
BOUND_SECONDS = 0.2
# Patterns that take a backtracking engine exponential or high-polynomial time. RE2 runs the
# ones it accepts in linear time; the rest it refuses (too large, backreferences, lookaround).
WORST_PATTERNS = (
    r"(a|aa)*b",
    r"(.*a){20}",
    r"(a|a?)+$",
    r"((a*)*)*b",
    r"(\w+\s?)*$",
    r"(x+x+)+y",
    r"(a+)+b",
    r"(.*.*.*.*){10}",
    # the costliest RE2 accepts: programs just under MAX_PATTERN_PROGRAM
    r"(.*){29}",
    r"(.*a){26}",
    r"([^x]*){26}$",
    r"(?s)(.*){32}",
    r"(.*b){26}",
    r"(.*){28}x",
    # and beyond it
    r"(.*){45}",
    r"(((.*a){3}){3}){4}",
    r"(.*){1000}",
    r"(.{0,100}){10}x",
    r"((a{100}){100}){100}",
    r"(a+)\1+$",
    r"^(?=(a+))+\1$",
)
# The inputs that make them work hardest: up to the 8,000 characters the hook reads.
WORST_INPUTS = (
    "a" * 7_999 + "!",
    "a" * 8_000,
    "\U0001f600" * 8_000,
    ("ab " * 3_000)[:8_000],
    ("a" * 79 + "\n") * 100,
)
GITHUB_TOKEN = "ghp_" + "R8vKq2Lm9Xw4Tz7Pb3Nd6Hf1Js5Gc0Ya8Ue2"
AWS_KEY_ID = "AKIAQ7XW2LMN4PRS6TUV"
ANTHROPIC_KEY = "sk-ant-api03-" + "Zq4Rt8Wm2Xn6Yp0Vb3Kc7Lf1Hd5Gs9Je" * 3


@dataclass
class Team:
    url: str
    tokens: dict[str, str]
    service: MemoryService

    @asynccontextmanager
    async def http(self, name: str | None = None) -> AsyncIterator[httpx.AsyncClient]:
        headers = {"authorization": f"Bearer {self.tokens[name]}"} if name else {}
        async with httpx.AsyncClient(base_url=self.url, headers=headers, timeout=60) as client:
            yield client

    @asynccontextmanager
    async def mcp(self, name: str) -> AsyncIterator[Client[Any]]:
        async with Client(f"{self.url}/mcp", auth=self.tokens[name], timeout=60) as client:
            yield client


@asynccontextmanager
async def team(service: MemoryService, settings: Settings) -> AsyncIterator[Team]:
    tokens = {}
    for name, projects in PROJECTS.items():
        added, _ = await service.users.add(name, projects)
        tokens[name] = added.token
    async with serving(create_app(settings, service)) as url:
        yield Team(url, tokens, service)


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
) -> tuple[list[float], list[float], list[tuple[str, httpx.Response]]]:
    """Bob's hook calls with `commands`, three at a time, `rounds` each, while /health is
    polled; the seconds each hook call and each health check took, and each command's answer."""
    hook_seconds: list[float] = []
    health_seconds: list[float] = []
    answers: list[tuple[str, httpx.Response]] = []
    done = asyncio.Event()

    async def hooks(bob: httpx.AsyncClient) -> None:
        for _ in range(rounds):
            for command in commands:
                started = time.perf_counter()
                answer = await bob.post("/api/hooks/pre-tool", json=pre_tool(command))
                hook_seconds.append(time.perf_counter() - started)
                answers.append((command, answer))

    async def health(probe: httpx.AsyncClient) -> None:
        while not done.is_set():
            started = time.perf_counter()
            answer = await probe.get("/health")
            health_seconds.append(time.perf_counter() - started)
            assert answer.status_code == 200, answer.text
            await asyncio.sleep(0.01)  # paces the probe; nothing waits on it

    async with crew.http("bob") as bob, crew.http() as probe:
        await bob.post("/api/hooks/pre-tool", json=pre_tool("echo warm-up"))
        await probe.get("/health")
        poller = asyncio.create_task(health(probe))
        try:
            await asyncio.gather(*(hooks(bob) for _ in range(3)))
        finally:
            done.set()
            await poller
    return hook_seconds, health_seconds, answers


async def test_catastrophic_patterns_stall_neither_the_hook_nor_health(
    service: MemoryService, settings: Settings
) -> None:
    async with team(service, settings) as crew:
        async with crew.http("alice") as alice:
            planted = await alice.post(
                "/api/lessons",
                json={"pattern": "(a+)+$", "message": "Mind the a's.", "tool": "Bash"},
            )
        assert planted.status_code == 201, planted.text

        # The attack of the report: 25 a's and a "!" took 2.5 s, and /health waited as long.
        hooks, checks, answers = await attack(crew, ("a" * 25 + "!",), rounds=1)
        assert [answer.status_code for _, answer in answers] == [200] * 3
        assert max(hooks) < BOUND_SECONDS, f"hook took {max(hooks):.3f} s"
        assert checks, "/health never answered while the hooks ran"
        assert max(checks) < BOUND_SECONDS, f"/health took {max(checks):.3f} s"

        # Then the worst patterns found, each stored or refused, against the longest inputs.
        async with crew.http("alice") as alice:
            written = [
                await alice.post(
                    "/api/lessons", json={"pattern": pattern, "message": "No.", "tool": "Bash"}
                )
                for pattern in WORST_PATTERNS
            ]
        for pattern, answer in zip(WORST_PATTERNS, written, strict=True):
            assert answer.status_code in (201, 400), (pattern, answer.text)
            if answer.status_code == 400:
                assert answer.json()["error"]["code"] == "invalid_input", answer.text
        hooks, checks, answers = await attack(crew, WORST_INPUTS, rounds=2)

    assert {answer.status_code for _, answer in answers} == {200}
    assert max(hooks) < BOUND_SECONDS, f"hook took {max(hooks):.3f} s"
    assert len(checks) >= 3, "/health was hardly polled while the hooks ran"
    assert max(checks) < BOUND_SECONDS, f"/health took {max(checks):.3f} s"
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
        async with crew.http("alice") as alice:
            posted = await alice.post(
                "/api/lessons", json={"pattern": pattern, "message": "Rotate it.", "tool": "Bash"}
            )
            kept = await alice.post(
                "/api/lessons", json={"pattern": rule, "message": "Use the vault.", "tool": "Bash"}
            )
            edited = await alice.patch(
                f"/api/lessons/{kept.json()['id']}", json={"pattern": pattern}
            )
        async with crew.mcp("alice") as mcp:
            tool = await mcp.call_tool(
                "save_lesson", {"pattern": pattern, "message": "Rotate it."}, raise_on_error=False
            )
        async with crew.http("bob") as bob:
            listed = await bob.get("/api/lessons")
            hooked = await bob.post("/api/hooks/pre-tool", json=pre_tool(command))

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


async def test_a_secret_in_a_lessons_tool_or_project_is_redacted(
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
        async with crew.http("dave") as dave:
            listed = await dave.get("/api/lessons")

    assert stored.status_code == 201, stored.text
    assert stored.json()["tool"] == "[REDACTED:github-token]"
    assert stored.json()["project"] == "[REDACTED:aws-access-key]"
    assert edited.status_code == 200, edited.text
    assert edited.json()["tool"] == "[REDACTED:anthropic-key]"
    everything = stored.text + edited.text + listed.text
    everything += await every_lesson_text(service)
    for secret in (GITHUB_TOKEN, AWS_KEY_ID, ANTHROPIC_KEY):
        assert secret not in everything
