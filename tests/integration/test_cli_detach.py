"""`serve --detach` and `stop`, and the refusal to bind beyond loopback by accident."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from tests.db_fixtures import free_port
from tests.integration.processes import run_cli


def test_detach_returns_when_healthy_and_stop_stops_it(pg_url: str, tmp_path: Path) -> None:
    env = {"CLAUDE_MEMORY_DATABASE_URL": pg_url, "CLAUDE_MEMORY_HOME": str(tmp_path / "home")}
    port = str(free_port())

    started = run_cli("serve", "--port", port, "--detach", env=env)
    try:
        assert started.returncode == 0, started.stderr
        status = json.loads(started.stdout)
        health = httpx.get(f"http://127.0.0.1:{port}/health", timeout=10)
        again = run_cli("serve", "--port", port, "--detach", env=env)
    finally:
        stopped = run_cli("stop", env=env)

    assert status["status"] == "running"
    assert health.status_code == 200
    assert again.returncode == 1
    assert "already running" in again.stderr or "cannot listen" in again.stderr
    assert json.loads(stopped.stdout)["status"] == "stopped"
    assert not (tmp_path / "home" / "server.pid").exists()
    log = tmp_path / "home" / "logs" / "server.log"
    assert log.stat().st_mode & 0o077 == 0
    try:
        httpx.get(f"http://127.0.0.1:{port}/health", timeout=2)
        still_up = True
    except httpx.TransportError:
        still_up = False
    assert not still_up
    assert json.loads(run_cli("stop", env=env).stdout)["status"] == "not running"
    assert run_cli("stop", "--plain", env=env).stdout.startswith("status: not running\n")


def test_binding_beyond_loopback_needs_a_flag_and_warns_without_a_token(
    pg_url: str, tmp_path: Path
) -> None:
    env = {"CLAUDE_MEMORY_DATABASE_URL": pg_url, "CLAUDE_MEMORY_HOME": str(tmp_path / "home")}

    refused = run_cli("serve", "--host", "0.0.0.0", "--port", str(free_port()), env=env)

    assert refused.returncode == 1
    assert "--allow-remote" in refused.stderr
