"""How long lesson patterns that stall a backtracking engine (ReDoS, #34) take under RE2, alone
and through the PreToolUse hook while /health is polled.

tests/security/test_lesson_attacks.py checks, without a clock, that every pattern stored is one
RE2 compiles within MAX_PATTERN_PROGRAM instructions (a search linear in the input) and that
/health answers while the hooks run; the seconds are this script's, since a test that asserts
them fails on a busy machine. Issue #34 set 0.2 s for a hook call and for /health.

1. Each of tests/security/worst_patterns.py's patterns: refused or accepted, its RE2 program
   size, and the slowest search (best of `--repeats`) over the worst inputs (8,000 characters).
2. A real app (embedded database in a temp dir, the bundled model) with the accepted patterns
   as alice's lessons of acme: bob's PreToolUse hook with each worst input, three callers at a
   time, `--rounds` rounds, while /health is polled; p50 and max of each, in milliseconds.

Usage: .venv/bin/python bench/lesson_patterns.py [--repeats 3] [--rounds 3]
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from server.core.access import acting_as  # noqa: E402
from server.core.config import Settings  # noqa: E402
from server.core.errors import InvalidInput  # noqa: E402
from server.domain.lessons import Matcher, compiled  # noqa: E402
from server.service.runtime import open_service  # noqa: E402
from tests.security.team import Team, team  # noqa: E402
from tests.security.worst_patterns import (  # noqa: E402
    WORST_INPUTS,
    WORST_PATTERNS,
    while_polled,
)

ACME = "/home/dev/acme"
BOUND_MS = 200.0  # issue #34's bound for a hook call and for /health


def matcher_figures(repeats: int) -> list[dict[str, Any]]:
    """Each pattern's verdict, program size and slowest search in ms."""
    rows: list[dict[str, Any]] = []
    for pattern in WORST_PATTERNS:
        try:
            matcher = compiled(pattern)
        except InvalidInput:
            rows.append({"pattern": pattern, "accepted": False})
            continue
        slowest = 0.0
        for text in WORST_INPUTS:
            data = text.encode()
            best = min(search_seconds(matcher, data) for _ in range(repeats))
            slowest = max(slowest, best)
        rows.append(
            {
                "pattern": pattern,
                "accepted": True,
                "program_size": matcher.programsize,
                "slowest_search_ms": round(slowest * 1000, 3),
            }
        )
    return rows


def search_seconds(matcher: Matcher, data: bytes) -> float:
    started = time.perf_counter()
    matcher.search(data)
    return time.perf_counter() - started


def summary(samples: list[float]) -> dict[str, float | int]:
    ordered = sorted(samples)
    return {
        "count": len(ordered),
        "p50_ms": round(ordered[len(ordered) // 2] * 1000, 1),
        "max_ms": round(ordered[-1] * 1000, 1),
    }


async def served_attack(crew: Team, rounds: int) -> tuple[list[float], list[float]]:
    """Seconds of each of bob's hook calls (three callers) and each /health while they run."""
    hook_seconds: list[float] = []
    health_seconds: list[float] = []
    pre_tool = {"cwd": ACME, "tool_name": "Bash"}

    async def hooks(bob: Any) -> None:
        for _ in range(rounds):
            for command in WORST_INPUTS:
                started = time.perf_counter()
                answer = await bob.post(
                    "/api/hooks/pre-tool", json={**pre_tool, "tool_input": {"command": command}}
                )
                hook_seconds.append(time.perf_counter() - started)
                answer.raise_for_status()

    async def health(probe: Any, done: asyncio.Event) -> None:
        while not done.is_set():
            started = time.perf_counter()
            (await probe.get("/health")).raise_for_status()
            health_seconds.append(time.perf_counter() - started)
            await asyncio.sleep(0.01)

    async with crew.http("bob") as bob, crew.http() as probe:
        await bob.post("/api/hooks/pre-tool", json={**pre_tool, "tool_input": {"command": "x"}})
        await while_polled(lambda done: health(probe, done), [hooks(bob) for _ in range(3)])
    return hook_seconds, health_seconds


async def served(home: Path, rounds: int) -> dict[str, Any]:
    settings = Settings(claude_memory_home=home / "data")
    async with open_service(settings) as service, team(service, settings) as crew:
        with acting_as(await service.users.viewer_by_name("bob")):
            await service.save("acme builds with make.", project="acme", project_path=ACME)
        stored = 0
        async with crew.http("alice") as alice:
            for pattern in WORST_PATTERNS:
                answer = await alice.post(
                    "/api/lessons",
                    json={"pattern": pattern, "message": "No.", "tool": "Bash", "project": "acme"},
                )
                stored += answer.status_code == 201
        hooks, checks = await served_attack(crew, rounds)
    return {"lessons_stored": stored, "hook": summary(hooks), "health": summary(checks)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    patterns = matcher_figures(args.repeats)
    with tempfile.TemporaryDirectory(prefix="lesson-patterns-", ignore_cleanup_errors=True) as home:
        app = asyncio.run(served(Path(home), args.rounds))
    report = {
        "bound_ms": BOUND_MS,
        "patterns": patterns,
        "slowest_search_ms": max(p.get("slowest_search_ms", 0.0) for p in patterns),
        "served": app,
        "within_bound": app["hook"]["max_ms"] < BOUND_MS and app["health"]["max_ms"] < BOUND_MS,
    }
    print(json.dumps(report, indent=2))  # noqa: T201


if __name__ == "__main__":
    main()
