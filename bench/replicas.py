"""Two server processes on one database under concurrent writes and searches; prints JSON.

Starts `claude-memory serve` processes on one embedded PostgreSQL (a fresh data directory),
seeds memories, then:

1. **single**: one process, `--writers` writers and `--searchers` searchers for `--seconds`:
   the baseline, under the same load.
2. **replicas**: a second process joins; the same writers and searchers, split evenly across
   the two, run for `--seconds`. Each writer saves a memory with a unique word on its process
   and, once the save is acknowledged, asks the *other* process for that word at once (keyword
   search): a miss there is a cross-replica read-after-write miss.
3. Every acknowledged memory is then fetched by id from both processes: one missing is a lost
   write.

Reported: acknowledged writes, lost writes (must be 0), read-after-write misses (must be 0),
responses with status 5xx (must be 0) and other failures, and search latency p50/p95 per
process in each phase. Figures for docs/benchmarks-history.md; nothing here is asserted.

Usage: .venv/bin/python bench/replicas.py [--seconds 60] [--writers 50] [--searchers 50]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.db_fixtures import free_port  # noqa: E402
from tests.integration.processes import cli_command, wait_for_health  # noqa: E402

QUERIES = [
    "which package manager does the repository use?",
    "why did the checkout test fail sometimes?",
    "how are invoice numbers assigned?",
    "what decides the pagination of the orders API?",
    "where do deploys go before production?",
]
TOPICS = ["pagination", "deploys", "invoices", "pnpm", "Redis", "migrations", "caching"]


@dataclass
class Tally:
    latencies: dict[str, list[float]] = field(default_factory=dict)
    statuses: Counter[str] = field(default_factory=Counter)
    acknowledged: list[int] = field(default_factory=list)
    misses: int = 0
    failures: list[str] = field(default_factory=list)

    def timed(self, name: str, started: float) -> None:
        self.latencies.setdefault(name, []).append((time.perf_counter() - started) * 1000)

    def status(self, response: httpx.Response) -> None:
        code = response.status_code
        self.statuses["5xx" if code >= 500 else str(code)] += 1
        if code >= 500:
            self.failures.append(f"{response.request.url.path} {code}: {response.text[:200]}")


def percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {"n": 0}
    ordered = sorted(values)
    return {
        "n": len(ordered),
        "p50_ms": round(statistics.median(ordered), 1),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))], 1),
    }


async def searcher(client: httpx.AsyncClient, name: str, tally: Tally, until: float) -> None:
    number = 0
    while time.monotonic() < until:
        query = QUERIES[number % len(QUERIES)]
        number += 1
        started = time.perf_counter()
        try:
            response = await client.post("/api/search", json={"query": query, "limit": 10})
        except httpx.HTTPError as exc:
            tally.failures.append(f"search on {name}: {type(exc).__name__}")
            continue
        tally.timed(name, started)
        tally.status(response)


async def writer(
    mine: httpx.AsyncClient, other: httpx.AsyncClient, tally: Tally, until: float
) -> None:
    while time.monotonic() < until:
        word = f"zq{uuid.uuid4().hex[:12]}"
        content = f"Note {word}: the team agreed on {TOPICS[len(word) % len(TOPICS)]} today."
        try:
            saved = await mine.post("/api/memories", json={"content": content, "force": True})
        except httpx.HTTPError as exc:
            tally.failures.append(f"save: {type(exc).__name__}")
            continue
        tally.status(saved)
        if saved.status_code != 201:
            continue
        tally.acknowledged.append(int(saved.json()["id"]))
        try:
            found = await other.post(
                "/api/search", json={"query": word, "mode": "keyword", "limit": 5}
            )
        except httpx.HTTPError as exc:
            tally.failures.append(f"read-after-write: {type(exc).__name__}")
            continue
        tally.status(found)
        hits = found.json().get("hits", []) if found.status_code == 200 else []
        if not any(word in hit["content"] for hit in hits):
            tally.misses += 1


async def lost_writes(clients: list[httpx.AsyncClient], ids: list[int]) -> int:
    lost = 0
    for client in clients:
        for start in range(0, len(ids), 50):
            answers = await asyncio.gather(
                *(client.get(f"/api/memories/{i}") for i in ids[start : start + 50])
            )
            lost += sum(1 for answer in answers if answer.status_code != 200)
    return lost


async def seed(client: httpx.AsyncClient, count: int) -> None:
    items = [
        {"content": f"Seed memory {n}: {TOPICS[n % len(TOPICS)]} decision number {n}."}
        for n in range(count)
    ]
    for start in range(0, count, 500):
        batch = {"memories": items[start : start + 500], "force": True}
        response = await client.post("/api/memories/bulk", json=batch)
        response.raise_for_status()


async def run(
    urls: list[str], args: argparse.Namespace, start_second: Callable[[], str]
) -> dict[str, Any]:
    timeout = httpx.Timeout(120)
    limits = httpx.Limits(max_connections=args.writers + args.searchers + 10)
    async with httpx.AsyncClient(base_url=urls[0], timeout=timeout, limits=limits) as a:
        await seed(a, args.seed)
        single = Tally()
        until = time.monotonic() + args.seconds
        await asyncio.gather(
            *(writer(a, a, single, until) for _ in range(args.writers)),
            *(searcher(a, "A", single, until) for _ in range(args.searchers)),
        )
        b_url = start_second()
        async with httpx.AsyncClient(base_url=b_url, timeout=timeout, limits=limits) as b:
            pair = Tally()
            clients = [(a, b, "A"), (b, a, "B")]
            until = time.monotonic() + args.seconds
            await asyncio.gather(
                *(
                    writer(clients[n % 2][0], clients[n % 2][1], pair, until)
                    for n in range(args.writers)
                ),
                *(
                    searcher(clients[n % 2][0], clients[n % 2][2], pair, until)
                    for n in range(args.searchers)
                ),
            )
            lost = await lost_writes([a, b], single.acknowledged + pair.acknowledged)
    return {
        "benchmark": "replicas",
        "seconds_per_phase": args.seconds,
        "writers": args.writers,
        "searchers": args.searchers,
        "seeded": args.seed,
        "single_process": {
            "search_A": percentiles(single.latencies.get("A", [])),
            "writes_acknowledged": len(single.acknowledged),
        },
        "two_processes": {
            "search_A": percentiles(pair.latencies.get("A", [])),
            "search_B": percentiles(pair.latencies.get("B", [])),
            "writes_acknowledged": len(pair.acknowledged),
            "writes_lost": lost,
            "read_after_write_misses": pair.misses,
            "same_process_read_after_write_misses": single.misses,
            "responses": dict(pair.statuses),
            "responses_5xx": pair.statuses["5xx"] + single.statuses["5xx"],
            "client_failures": len(pair.failures) + len(single.failures),
            "first_failures": (single.failures + pair.failures)[:5],
        },
    }


def server_errors(home: Path, limit: int = 40) -> list[str]:
    """The servers' logged errors, tracebacks included (the logs go with the run)."""
    lines: list[str] = []
    for log in sorted(home.glob("server-*.log")):
        keep = False
        for line in log.read_text(errors="replace").splitlines():
            if " ERROR " in line or line.startswith("Traceback"):
                keep = True
            elif " WARNING " in line or " INFO " in line:
                keep = False
            if keep:
                lines.append(f"{log.name}: {line}")
    return lines[:limit]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--writers", type=int, default=50)
    parser.add_argument("--searchers", type=int, default=50)
    parser.add_argument("--seed", type=int, default=2_000, help="memories stored first")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="replicas-bench-", ignore_cleanup_errors=True) as home:
        env = {"CLAUDE_MEMORY_HOME": str(Path(home) / "data"), "CLAUDE_MEMORY_LOG_LEVEL": "WARNING"}
        processes: list[subprocess.Popen[str]] = []

        def start() -> str:
            port = str(free_port())
            log = (Path(home) / f"server-{len(processes)}.log").open("w")
            process = subprocess.Popen(
                cli_command("serve", "--port", port),
                env={**os.environ, **env},
                stdout=subprocess.DEVNULL,
                stderr=log,
                text=True,
            )
            processes.append(process)
            url = f"http://127.0.0.1:{port}"
            wait_for_health(f"{url}/health", process, timeout=300)
            return url

        try:
            first = start()
            report = asyncio.run(run([first], args, start))
        finally:
            for process in reversed(processes):
                process.send_signal(signal.SIGTERM)
            for process in processes:
                process.wait(timeout=120)
        report["server_errors"] = server_errors(Path(home))
    report["cpu_count"] = os.cpu_count()
    print(json.dumps(report, indent=2))  # noqa: T201


if __name__ == "__main__":
    main()
