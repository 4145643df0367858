"""Two distill runners on one database handle each session once; a crashed runner's lease
expires and its session is picked up; a live runner's is left alone; signals, read across
sessions, run in one runner at a time."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

from server.core.models.memories import MemoryFilter
from server.learning.distill import Distiller
from server.learning.llm import ChatClient
from server.learning.signals_job import mine_signals
from server.service.memory import MemoryService
from tests.integration.processes import cli_command, distill_env
from tests.llm_stub import Reply, ScriptedLLM

FACT = {"content": "acme-api uses pnpm, never npm.", "kind": "preference", "turns": [1]}


async def distill(service: MemoryService, llm: ScriptedLLM, **options: Any) -> Any:
    async with ChatClient(llm.base_url, timeout=10) as client:
        return await Distiller(service, client, model="qwen2.5:7b", workers=2).run(**options)


async def test_two_runners_at_once_distill_each_session_once(
    service: MemoryService, imported: Path
) -> None:
    other = MemoryService(service.pool, service.embedder, service.settings)
    queue = await service.learning.distill_queue()
    # Each answer takes a while, so both runners are at work at the same time.
    slow = Reply.delay(0.4, Reply.json({"memories": [FACT]}))
    with ScriptedLLM(default=slow) as llm:
        first, second = await asyncio.gather(distill(service, llm), distill(other, llm))
        asked = len(llm.requests)

    assert len(queue) == 4 and first.sessions == second.sessions == 4
    assert first.distilled + second.distilled == 4, "every session once, by one runner"
    assert first.distilled and second.distilled, "the runners shared the work"
    assert asked == first.windows + second.windows
    assert await service.learning.distill_queue() == []
    stored = await service.list_memories(MemoryFilter(source="distill"))
    assert [m.content for m in stored.memories] == [FACT["content"]]


async def test_a_live_lease_is_left_alone_and_an_expired_one_is_taken_over(
    service: MemoryService, imported: Path, pg_url: str
) -> None:
    [busy, crashed, *_] = [p.session_id for p in await service.learning.distill_queue()]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO job_leases (job, item, holder, expires_at) VALUES"
            " ('distill', %s, 'other-host:41:live', now() + interval '5 minutes'),"
            " ('distill', %s, 'other-host:42:crashed', now() - interval '1 second')",
            (busy, crashed),
        )
    with ScriptedLLM(default=Reply.json({"memories": []})) as llm:
        summary = await distill(service, llm)
    left = [p.session_id for p in await service.learning.distill_queue()]
    with psycopg.connect(pg_url) as conn:
        leases = conn.execute("SELECT item, holder FROM job_leases ORDER BY item").fetchall()

    assert left == [busy], "only the session a live runner holds is still pending"
    assert summary.distilled == 3
    assert leases == [(busy, "other-host:41:live")], "ours were released when done"


async def test_a_runner_of_this_machine_that_died_leaves_its_sessions_at_once(
    service: MemoryService, imported: Path, pg_url: str
) -> None:
    """A killed `distill` on this machine cannot release its lease: its process is gone, so
    the next run takes the session without waiting for the lease to expire."""
    child = subprocess.Popen(["true"])  # a process of this machine that has ended
    child.wait()
    dead_pid = child.pid
    [session, *_] = [p.session_id for p in await service.learning.distill_queue()]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO job_leases (job, item, holder, expires_at) VALUES"
            " ('distill', %s, %s, now() + interval '5 minutes')",
            (session, f"{socket.gethostname()}:{dead_pid}:killed"),
        )
    with ScriptedLLM(default=Reply.json({"memories": []})) as llm:
        summary = await distill(service, llm)

    assert summary.distilled == 4
    assert await service.learning.distill_queue() == []


def test_distill_started_twice_as_processes_runs_each_session_once(
    fresh_database: Callable[[], str], tmp_path: Path
) -> None:
    """`claude-memory distill` started twice at once on one database, as two hosts' hourly
    jobs would: every session is distilled by one of them."""
    slow = Reply.delay(0.5, Reply.json({"memories": [FACT]}))
    with ScriptedLLM(default=slow) as llm:
        env = distill_env(fresh_database(), tmp_path / "home", llm.base_url)
        runs = [
            subprocess.Popen(
                cli_command("distill", "--json"),
                env={**os.environ, **env},
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        outputs = [run.communicate(timeout=300) for run in runs]

    summaries = [json.loads(stdout) for stdout, _ in outputs]
    assert [run.returncode for run in runs] == [0, 0], [err for _, err in outputs]
    assert sum(s["distilled"] for s in summaries) == 4, summaries
    with psycopg.connect(env["CLAUDE_MEMORY_DATABASE_URL"]) as conn:
        states = conn.execute("SELECT DISTINCT distill_state FROM imported_sessions").fetchall()
        leases = conn.execute("SELECT count(*) FROM job_leases").fetchone()
    assert states == [("done",)] and leases == (0,)


async def test_signals_run_by_one_runner_at_a_time(
    service: MemoryService, imported: Path, pg_url: str
) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO job_leases (job, item, holder, expires_at) VALUES"
            " ('signals', 'all', 'other-host:43:live', now() + interval '5 minutes')"
        )
    while_held = await mine_signals(service)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DELETE FROM job_leases")
    after = await mine_signals(service)

    assert while_held.skipped and while_held.sessions == 0 and while_held.created == 0
    assert not after.skipped and after.sessions == 4, "the sessions waited for the next run"
