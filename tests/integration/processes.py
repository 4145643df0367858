"""Helpers for tests that run `claude-memory` as a real child process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from tests.fixture_sessions import CLAUDE_PROJECTS


def cli_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "server.cli", *args]


def run_cli(
    *args: str, env: dict[str, str], timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cli_command(*args),
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def ran(
    command: list[str], env: dict[str, str], cwd: Path | None = None, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    """A command (an agent's CLI, or ours) run to its end in exactly `env`, with no input;
    what it printed and its exit code, whatever that is."""
    return subprocess.run(
        command,
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def completed(
    command: list[str], env: dict[str, str], cwd: Path | None = None, timeout: float = 180
) -> str:
    """Run a command (an agent's CLI, or ours) to its end in exactly `env`; its stdout, or the
    test fails with the end of what it printed."""
    done = ran(command, env, cwd, timeout)
    assert done.returncode == 0, (done.stdout + done.stderr)[-2000:]
    return done.stdout


def cli_json(*args: str, env: dict[str, str]) -> dict[str, Any]:
    """`claude-memory <args>` in exactly `env`, its one line of JSON (connect, disconnect)."""
    answer: dict[str, Any] = json.loads(completed(cli_command(*args), env))
    return answer


def start_cli(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        cli_command(*args),
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_health(
    url: str, process: subprocess.Popen[str], timeout: float = 120
) -> dict[str, Any]:
    """Poll /health until it answers 200; fail with the server's stderr if it exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            stderr = process.stderr.read() if process.stderr else ""
            raise AssertionError(f"server exited early ({process.returncode}): {stderr}")
        try:
            response = httpx.get(url, timeout=2)
            if response.status_code == 200:
                return dict(response.json())
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    raise AssertionError("server did not become healthy in time")


def cli_env(pg_url: str, home: Path, port: int = 1) -> dict[str, str]:
    """The environment a CLI run needs: the test database, a data dir of its own, and a port
    nothing listens on (a command that should not reach a server cannot)."""
    return {
        "CLAUDE_MEMORY_DATABASE_URL": pg_url,
        "CLAUDE_MEMORY_HOME": str(home),
        "CLAUDE_MEMORY_PORT": str(port),
    }


def distill_env(database_url: str, home: Path, llm_url: str) -> dict[str, str]:
    """The environment of a `claude-memory distill` run with one worker asking the LLM at
    `llm_url`, on `database_url` after `claude-memory import` brought the shared Claude Code
    sessions in."""
    env = {
        "CLAUDE_MEMORY_DATABASE_URL": database_url,
        "CLAUDE_MEMORY_HOME": str(home),
        "CLAUDE_MEMORY_OLLAMA_URL": llm_url,
        "CLAUDE_MEMORY_DISTILL_WORKERS": "1",
    }
    imported = run_cli("import", "--claude-code", str(CLAUDE_PROJECTS), env=env)
    assert imported.returncode == 0, imported.stderr
    return env
