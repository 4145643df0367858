"""Settings come from the user, never from the folder or shell the process starts in (#54).

A cloned repository's `.env` and an application's own `DATABASE_URL`, `HOST` and `PORT` used to
configure claude-memory: `mcp-stdio` started in such a folder wrote the user's memories to the
attacker's database, and `install-hooks` / `connect` wrote the attacker's address into the
agent's config. Each test starts the real command as a child process in a hostile folder, with
the hostile names in its environment too, and the user's own `$CLAUDE_MEMORY_HOME/config.env`.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest
from fastmcp import Client
from fastmcp.client.transports import StdioTransport


class StandIn:
    """A TCP listener that records whatever connects to it, then hangs up."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.sock.getsockname()[1]
        self.received: list[bytes] = []
        self.sock.settimeout(0.2)
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    self.received.append(conn.recv(4096))
                except OSError:
                    self.received.append(b"")

    def close(self) -> None:
        self.stopped.set()
        self.thread.join()
        self.sock.close()


@pytest.fixture
def stand_in() -> Iterator[StandIn]:
    listener = StandIn()
    yield listener
    listener.close()


def hostile_folder(tmp_path: Path, port: int) -> Path:
    """A cloned repository whose `.env` points everything at the attacker."""
    folder = tmp_path / "cloned-repo"
    folder.mkdir()
    (folder / ".env").write_text(
        f"DATABASE_URL=postgresql://victim@127.0.0.1:{port}/attacker\n"
        f"HOST=127.0.0.1\nPORT={port}\nLOG_LEVEL=DEBUG\n"
        f"CLAUDE_MEMORY_DATABASE_URL=postgresql://victim@127.0.0.1:{port}/attacker\n"
        f"CLAUDE_MEMORY_PORT={port}\n"
    )
    return folder


def hostile_environment(home: Path, port: int) -> dict[str, str]:
    """The shell of an application that configures itself with the common names."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("CLAUDE_MEMORY_") and key not in ("DATABASE_URL", "HOST", "PORT")
    }
    return {
        **env,
        "HOME": str(home),
        "CLAUDE_MEMORY_HOME": str(home / "memory"),
        "DATABASE_URL": f"postgresql://app@127.0.0.1:{port}/app",
        "HOST": "0.0.0.0",
        "PORT": str(port),
    }


def user_config(home: Path, lines: str) -> None:
    (home / "memory").mkdir(parents=True, exist_ok=True)
    (home / "memory" / "config.env").write_text(lines)


async def test_mcp_stdio_in_a_hostile_folder_uses_the_users_database(
    fresh_database: Callable[[], str], stand_in: StandIn, tmp_path: Path
) -> None:
    database = fresh_database()
    home = tmp_path / "user"
    user_config(home, f"CLAUDE_MEMORY_DATABASE_URL={database}\nCLAUDE_MEMORY_LOG_LEVEL=WARNING\n")
    folder = hostile_folder(tmp_path, stand_in.port)
    transport = StdioTransport(
        sys.executable,
        ["-m", "server.cli", "mcp-stdio"],
        env=hostile_environment(home, stand_in.port),
        cwd=str(folder),
    )

    async with Client(transport, timeout=120) as client:
        saved = await client.call_tool("save_memory", {"content": "Deploys go out on Tuesdays."})

    assert stand_in.received == []  # nothing, not even a startup packet with the user's name
    assert saved.structured_content is not None
    with psycopg.connect(database) as conn:
        row = conn.execute(
            "SELECT content FROM memories WHERE id = %s", (saved.structured_content["id"],)
        ).fetchone()
    assert row == ("Deploys go out on Tuesdays.",)


def run_cli(args: list[str], home: Path, port: int, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server.cli", *args],
        cwd=cwd,
        env=hostile_environment(home, port),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


def test_install_hooks_in_a_hostile_folder_writes_the_users_address(
    stand_in: StandIn, tmp_path: Path
) -> None:
    home = tmp_path / "user"
    user_config(home, "CLAUDE_MEMORY_PORT=4555\n")
    folder = hostile_folder(tmp_path, stand_in.port)
    settings_file = home / ".claude" / "settings.json"

    install = ["install-hooks", "--settings", str(settings_file), "--no-check"]
    done = run_cli(install, home, stand_in.port, folder)

    written = settings_file.read_text()
    assert "--url http://127.0.0.1:4555" in written
    assert str(stand_in.port) not in written
    assert f"CLAUDE_MEMORY_PORT=4555 (from {home / 'memory' / 'config.env'}:1)" in done.stderr
    assert "PORT is set but not read: claude-memory reads CLAUDE_MEMORY_PORT" in done.stderr


def test_connect_in_a_hostile_folder_writes_the_users_address(
    stand_in: StandIn, tmp_path: Path
) -> None:
    home = tmp_path / "user"
    user_config(home, "CLAUDE_MEMORY_PORT=4555\n")
    folder = hostile_folder(tmp_path, stand_in.port)

    run_cli(["connect", "gemini", "--no-check"], home, stand_in.port, folder)

    written = (home / ".gemini" / "settings.json").read_text()
    config = json.loads(written)
    assert config["mcpServers"]["claude-memory"]["httpUrl"] == "http://127.0.0.1:4555/mcp"
    assert str(stand_in.port) not in written
    assert "0.0.0.0" not in written


def test_config_shows_each_value_and_where_it_came_from(stand_in: StandIn, tmp_path: Path) -> None:
    home = tmp_path / "user"
    user_config(home, "# mine\nCLAUDE_MEMORY_DATABASE_URL=postgresql://me:hunter2@db/mem\n")
    folder = hostile_folder(tmp_path, stand_in.port)

    shown = run_cli(["config", "--json"], home, stand_in.port, folder)

    rows = {row["name"]: row for row in json.loads(shown.stdout)}
    database = rows["CLAUDE_MEMORY_DATABASE_URL"]
    assert database["source"] == f"{home / 'memory' / 'config.env'}:2"
    assert "hunter2" not in shown.stdout
    assert rows["CLAUDE_MEMORY_PORT"] == {
        "name": "CLAUDE_MEMORY_PORT",
        "value": "3333",
        "source": "default",
    }
    assert rows["CLAUDE_MEMORY_HOST"]["value"] == "127.0.0.1"
    assert rows["CLAUDE_MEMORY_HOME"]["source"] == "environment"


def test_the_hook_client_never_follows_the_projects_host_and_port(
    stand_in: StandIn, tmp_path: Path
) -> None:
    """Run as the agents run it, without `--url`: only CLAUDE_MEMORY_HOST/PORT name the server."""
    home = tmp_path / "user"
    folder = hostile_folder(tmp_path, stand_in.port)
    with socket.create_server(("127.0.0.1", 0)) as closed:
        nothing_there = closed.getsockname()[1]
    env = {
        **hostile_environment(home, stand_in.port),
        "HOST": "127.0.0.1",
        "CLAUDE_MEMORY_PORT": str(nothing_there),
    }
    hook = Path(__file__).resolve().parents[2] / "server" / "hooks.py"

    done = subprocess.run(
        [sys.executable, "-I", "-S", str(hook), "user-prompt-submit"],
        cwd=folder,
        env=env,
        input=json.dumps({"session_id": "s1", "prompt": "how do we deploy?", "cwd": str(folder)}),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )

    assert done.stdout == ""  # the user's server is down: nothing to add
    assert stand_in.received == []
