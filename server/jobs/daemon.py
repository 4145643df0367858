"""Run the server in the background (`serve --detach`) and stop it (`claude-memory stop`).

The detached server is an ordinary `claude-memory serve` child in its own session, with its
output in `<data dir>/logs/server.log` (owner-only) and its pid in `<data dir>/server.pid`.
`--detach` returns once /health answers, so a script can rely on the server being up.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from server.core.errors import StartupError

START_TIMEOUT_SECONDS = 180.0
STOP_TIMEOUT_SECONDS = 30.0


def pid_file(home: Path) -> Path:
    return home / "server.pid"


def log_file(home: Path) -> Path:
    return home / "logs" / "server.log"


def running_pid(home: Path) -> int | None:
    """The pid in the pid file if that process is alive; a stale file is removed."""
    path = pid_file(home)
    try:
        pid = int(path.read_text().strip())
    except (OSError, ValueError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        path.unlink(missing_ok=True)
        return None
    except PermissionError:
        return pid
    return pid


def start_detached(home: Path, serve_args: list[str], health_url: str) -> int:
    """Start `claude-memory serve` in the background; return its pid once /health answers."""
    if (pid := running_pid(home)) is not None:
        raise StartupError(f"claude-memory is already running (pid {pid}); `claude-memory stop`")
    log = log_file(home)
    log.parent.mkdir(parents=True, exist_ok=True)
    old_umask = os.umask(0o077)
    try:
        with log.open("ab") as output:
            child = subprocess.Popen(
                [sys.executable, "-m", "server.cli", "serve", *serve_args],
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=output,
                start_new_session=True,
            )
        pid_file(home).write_text(f"{child.pid}\n")
    finally:
        os.umask(old_umask)
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if child.poll() is not None:
            pid_file(home).unlink(missing_ok=True)
            raise StartupError(f"the server exited at start:\n{_tail(log)}")
        if _healthy(health_url):
            return child.pid
        time.sleep(0.5)
    raise StartupError(f"the server did not answer {health_url} in time; see {log}")


def stop(home: Path) -> int | None:
    """Stop the detached server (SIGTERM, then SIGKILL after a grace period); its pid or None."""
    pid = running_pid(home)
    if pid is None:
        return None
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.2)
    else:
        os.kill(pid, signal.SIGKILL)
    pid_file(home).unlink(missing_ok=True)
    return pid


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"
