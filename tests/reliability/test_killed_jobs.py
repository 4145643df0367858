"""Jobs killed with SIGKILL mid-way leave nothing half-done, and a re-run finishes the work."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest

from server.db import admin
from tests.integration.processes import cli_command, distill_env, run_cli
from tests.llm_stub import Reply, ScriptedLLM

pytestmark = pytest.mark.reliability

# The importer embeds BATCH_TURNS (512) turns at a time, then writes them a file per
# transaction: 8 files of 120 turns are a first batch of 5 files and a second of 3, so the kill
# (soon after the first file is stored) lands before the second batch is stored. More files
# only cost more embedding: every turn is embedded about three times (killed run, re-run,
# uninterrupted run).
SESSIONS = 8
TURNS_PER_SESSION = 120


def write_corpus(root: Path) -> int:
    """A projects folder of synthetic sessions in the real format; returns the prose turns."""
    project = root / "-home-dev-shop"
    project.mkdir(parents=True)
    turns = 0
    for s in range(SESSIONS):
        session = f"5e55{s:04d}-0000-4000-8000-000000000000"
        lines = []
        for t in range(TURNS_PER_SESSION):
            role = "user" if t % 2 == 0 else "assistant"
            text = (
                f"Session {s} turn {t}: the {['cart', 'checkout', 'invoice', 'refund'][t % 4]}"
                f" service needs change number {s * 1000 + t} in module m{t % 17}, and the"
                f" tests for case {t * 7 + s} must stay green before merging."
            )
            message: dict[str, object] = {"role": role, "content": text}
            if role == "assistant":
                message = {
                    "role": role,
                    "id": f"msg_{s}_{t}",
                    "content": [{"type": "text", "text": text}],
                }
            lines.append(
                json.dumps(
                    {
                        "type": role,
                        "uuid": f"{s:04d}{t:04d}-0000-4000-8000-000000000000",
                        "sessionId": session,
                        "cwd": "/home/dev/shop",
                        "timestamp": f"2026-05-{1 + s:02d}T10:{t // 60:02d}:{t % 60:02d}.000Z",
                        "message": message,
                    }
                )
            )
            turns += 1
        (project / f"{session}.jsonl").write_text("\n".join(lines) + "\n")
    return turns


def rows(url: str) -> list[tuple[str, str | None, str | None]]:
    with psycopg.connect(url) as conn:
        return conn.execute(
            "SELECT content_hash, session_id, metadata->>'record_uuid' FROM memories ORDER BY 1"
        ).fetchall()


def test_a_killed_import_rerun_equals_an_uninterrupted_one(
    fresh_database: Callable[[], str], tmp_path: Path
) -> None:
    corpus = tmp_path / "projects"
    turns = write_corpus(corpus)
    killed_env = {
        "CLAUDE_MEMORY_DATABASE_URL": fresh_database(),
        "CLAUDE_MEMORY_HOME": str(tmp_path / "a"),
    }
    clean_env = {
        "CLAUDE_MEMORY_DATABASE_URL": fresh_database(),
        "CLAUDE_MEMORY_HOME": str(tmp_path / "b"),
    }
    assert run_cli("migrate", env=killed_env).returncode == 0

    process = subprocess.Popen(
        cli_command("import", "--claude-code", str(corpus)),
        env={**os.environ, **killed_env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        if admin.counts(killed_env["CLAUDE_MEMORY_DATABASE_URL"]).memories > 0:
            break
        time.sleep(0.2)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    partial = len(rows(killed_env["CLAUDE_MEMORY_DATABASE_URL"]))

    resumed = run_cli("import", "--claude-code", str(corpus), "--json", env=killed_env)
    clean = run_cli("import", "--claude-code", str(corpus), "--json", env=clean_env)

    assert resumed.returncode == 0, resumed.stderr
    assert clean.returncode == 0, clean.stderr
    assert 0 < partial < turns  # killed in the middle, with whole files stored
    assert partial % TURNS_PER_SESSION == 0  # one transaction per file: never half a file
    assert rows(killed_env["CLAUDE_MEMORY_DATABASE_URL"]) == rows(
        clean_env["CLAUDE_MEMORY_DATABASE_URL"]
    )
    assert len(rows(clean_env["CLAUDE_MEMORY_DATABASE_URL"])) == turns
    assert json.loads(resumed.stdout)[0]["turns_imported"] == turns - partial


def test_a_ten_megabyte_line_is_skipped_and_the_rest_imported(
    fresh_database: Callable[[], str], tmp_path: Path
) -> None:
    project = tmp_path / "projects" / "-home-dev-shop"
    project.mkdir(parents=True)
    session = "b16b16b1-0000-4000-8000-000000000000"
    huge = json.dumps(
        {
            "type": "user",
            "uuid": "b16b16b1-0000-4000-8000-000000000001",
            "sessionId": session,
            "cwd": "/home/dev/shop",
            "timestamp": "2026-05-01T10:00:00.000Z",
            "message": {"role": "user", "content": "x" * 10_000_000},
        }
    )
    normal = json.dumps(
        {
            "type": "user",
            "uuid": "b16b16b1-0000-4000-8000-000000000002",
            "sessionId": session,
            "cwd": "/home/dev/shop",
            "timestamp": "2026-05-01T10:01:00.000Z",
            "message": {
                "role": "user",
                "content": "After the huge paste: keep the refund flow idempotent.",
            },
        }
    )
    (project / f"{session}.jsonl").write_text(huge + "\n" + normal + "\n")
    env = {
        "CLAUDE_MEMORY_DATABASE_URL": fresh_database(),
        "CLAUDE_MEMORY_HOME": str(tmp_path / "home"),
    }

    result = run_cli("import", "--claude-code", str(tmp_path / "projects"), "--json", env=env)

    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)[0]
    assert summary["turns_imported"] == 1
    assert "Traceback" not in result.stderr
    with psycopg.connect(env["CLAUDE_MEMORY_DATABASE_URL"]) as conn:
        contents = [row[0] for row in conn.execute("SELECT content FROM memories").fetchall()]
    assert contents == ["After the huge paste: keep the refund flow idempotent."]


def test_a_killed_distill_leaves_no_partial_state_and_is_retried(
    fresh_database: Callable[[], str], tmp_path: Path
) -> None:
    with ScriptedLLM(default=Reply.delay(60)) as llm:
        env = distill_env(fresh_database(), tmp_path / "home", llm.base_url)
        url = env["CLAUDE_MEMORY_DATABASE_URL"]
        raw_before = admin.content_hashes(url)

        process = subprocess.Popen(
            cli_command("distill"),
            env={**os.environ, **env},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 120
        while not llm.requests and time.monotonic() < deadline:
            time.sleep(0.2)
        assert llm.requests, "distill never asked the model"
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)

        with psycopg.connect(url) as conn:
            learned = conn.execute("SELECT count(*) FROM memories WHERE kind <> 'raw'").fetchone()
            archived = conn.execute(
                "SELECT count(*) FROM memories WHERE archived_at IS NOT NULL"
            ).fetchone()
            states = conn.execute(
                "SELECT DISTINCT distill_state, distill_failures FROM imported_sessions"
            ).fetchall()
        assert learned == (0,)
        assert archived == (0,)
        assert states == [("pending", 0)]
        assert admin.content_hashes(url) == raw_before

        llm.default = Reply.json(
            {"memories": [{"content": "acme-api uses pnpm, never npm.", "kind": "preference"}]}
        )
        retried = run_cli("distill", "--json", env=env)

    assert retried.returncode == 0, retried.stderr
    summary = json.loads(retried.stdout)
    assert summary["distilled"] == 4
    assert admin.content_hashes(url) >= raw_before
