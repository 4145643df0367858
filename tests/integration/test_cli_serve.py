"""`claude-memory serve` as a real process: embedded database lifecycle, config errors, races."""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest

from server.db.embedded import start_embedded
from server.db.migrate import discover_migrations
from tests.db_fixtures import free_port
from tests.integration.processes import run_cli, start_cli, wait_for_health


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("CLAUDE_MEMORY_PORT", "eighty", "CLAUDE_MEMORY_PORT must be a whole number, got 'eighty'"),
        ("CLAUDE_MEMORY_PORT", "70000", "CLAUDE_MEMORY_PORT must be between 1 and 65535"),
        (
            "CLAUDE_MEMORY_GUARD_NOOP_THRESHOLD",
            "1.5",
            "CLAUDE_MEMORY_GUARD_NOOP_THRESHOLD must be between 0.0 and 1.0",
        ),
        (
            "CLAUDE_MEMORY_CACHE_TTL_SECONDS",
            "soon",
            "CLAUDE_MEMORY_CACHE_TTL_SECONDS must be a number",
        ),
        ("CLAUDE_MEMORY_LOG_LEVEL", "LOUD", "CLAUDE_MEMORY_LOG_LEVEL must be one of"),
    ],
)
def test_bad_setting_stops_serve_with_one_line_naming_it(
    variable: str, value: str, message: str
) -> None:
    result = run_cli("serve", env={variable: value}, timeout=60)

    assert result.returncode == 1
    assert (
        result.stderr.strip()
        == f"claude-memory: error: {result.stderr.split('error: ', 1)[1].strip()}"
    )
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_serve_refuses_a_port_in_use_with_a_clear_message() -> None:
    import socket

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = run_cli("serve", "--port", str(port), env={}, timeout=60)

    assert result.returncode == 1
    assert "is claude-memory already running?" in result.stderr


def embedded_memory_count(pgdata: Path) -> int:
    embedded = start_embedded(pgdata)
    try:
        with psycopg.connect(embedded.url) as conn:
            row = conn.execute("SELECT count(*) FROM memories").fetchone()
            return int(row[0]) if row else 0
    finally:
        embedded.release()


def test_serve_on_embedded_database_keeps_data_across_restarts(tmp_path: Path) -> None:
    home = tmp_path / "home-data"
    env = {"CLAUDE_MEMORY_HOME": str(home)}
    port = str(free_port())

    first = start_cli("serve", "--port", port, env=env)
    try:
        health = wait_for_health(f"http://127.0.0.1:{port}/health", first)
        embedded = start_embedded(home / "pg")
        with psycopg.connect(embedded.url) as conn:
            conn.execute(
                "INSERT INTO memories (content, content_hash) VALUES ('kept across restarts', 'k')"
            )
        embedded.release()
    finally:
        first.send_signal(signal.SIGTERM)
        first.wait(timeout=60)
    stopped_cleanly = not (home / "pg" / "postmaster.pid").exists()

    second = start_cli("serve", "--port", port, env=env)
    try:
        wait_for_health(f"http://127.0.0.1:{port}/health", second)
    finally:
        second.send_signal(signal.SIGINT)
        second.wait(timeout=60)
    second_stderr = second.stderr.read() if second.stderr else ""

    assert health["database_kind"] == "embedded"
    assert first.returncode == 0
    assert stopped_cleanly
    assert second.returncode == 0
    assert "applied migration" not in second_stderr
    assert "Traceback" not in second_stderr
    assert embedded_memory_count(home / "pg") == 1


def test_two_servers_starting_at_once_apply_each_migration_once(
    fresh_database: Callable[[], str], tmp_path: Path
) -> None:
    url = fresh_database()
    env = {"CLAUDE_MEMORY_DATABASE_URL": url, "CLAUDE_MEMORY_HOME": str(tmp_path)}
    ports = [str(free_port()), str(free_port())]

    servers = [start_cli("serve", "--port", port, env=env) for port in ports]
    try:
        for port, server in zip(ports, servers, strict=True):
            wait_for_health(f"http://127.0.0.1:{port}/health", server)
    finally:
        for server in servers:
            server.send_signal(signal.SIGTERM)
        for server in servers:
            server.wait(timeout=60)

    with psycopg.connect(url) as conn:
        versions = [row[0] for row in conn.execute("SELECT version FROM schema_migrations")]
        models = conn.execute("SELECT model, dimension, state FROM embedding_model").fetchall()
    assert sorted(versions) == [m.version for m in discover_migrations()]
    assert models == [("all-MiniLM-L6-v2", 384, "ready")]
    assert [s.returncode for s in servers] == [0, 0]
