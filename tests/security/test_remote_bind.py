"""Binding beyond loopback: only with --allow-remote, and loudly without a token.

tests/integration/test_cli_detach.py checks that a non-loopback address is refused without the
flag; here the flag is given, the server really starts on every interface, and the warning is
on stderr (and in the detached server's log) when no CLAUDE_MEMORY_TOKEN is set.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from tests.db_fixtures import free_port
from tests.integration.processes import run_cli

pytestmark = pytest.mark.security

TOKEN = "tok-" + "R5t6Y7u8" * 4


def test_allow_remote_without_a_token_warns_and_still_guards_host(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CLAUDE_MEMORY_TOKEN", raising=False)
    home = tmp_path / "home"
    env = {
        "CLAUDE_MEMORY_DATABASE_URL": pg_url,
        "CLAUDE_MEMORY_HOME": str(home),
        "CLAUDE_MEMORY_LOG_LEVEL": "WARNING",
    }
    port = free_port()

    started = run_cli(
        "serve", "--host", "0.0.0.0", "--port", str(port), "--allow-remote", "--detach", env=env
    )
    try:
        health = httpx.get(f"http://127.0.0.1:{port}/health", timeout=10)
        rebound = httpx.get(
            f"http://127.0.0.1:{port}/api/stats", headers={"host": "attacker.example"}, timeout=10
        )
    finally:
        stopped = run_cli("stop", env=env)

    assert started.returncode == 0, started.stderr
    assert "warning: listening on 0.0.0.0 without CLAUDE_MEMORY_TOKEN" in started.stderr
    assert "warning" in (home / "logs" / "server.log").read_text()
    assert health.status_code == 200
    assert rebound.status_code == 403
    assert json.loads(stopped.stdout)["status"] == "stopped"


def test_allow_remote_with_a_token_does_not_warn_and_requires_it(
    pg_url: str, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    env = {
        "CLAUDE_MEMORY_DATABASE_URL": pg_url,
        "CLAUDE_MEMORY_HOME": str(home),
        "CLAUDE_MEMORY_TOKEN": TOKEN,
        "CLAUDE_MEMORY_LOG_LEVEL": "WARNING",
    }
    port = free_port()

    started = run_cli(
        "serve", "--host", "0.0.0.0", "--port", str(port), "--allow-remote", "--detach", env=env
    )
    try:
        without = httpx.get(f"http://127.0.0.1:{port}/api/stats", timeout=10)
        with_token = httpx.get(
            f"http://127.0.0.1:{port}/api/stats",
            headers={"authorization": f"Bearer {TOKEN}"},
            timeout=10,
        )
    finally:
        run_cli("stop", env=env)

    assert started.returncode == 0, started.stderr
    assert "warning" not in started.stderr
    assert without.status_code == 401
    assert with_token.status_code == 200
