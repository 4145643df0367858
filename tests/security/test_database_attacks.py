"""Attacks on the embedded database from the machine and from a backup file (issue #54).

The embedded server trusts every local connection to its socket, so the socket must sit where
only the server's own OS user can reach it; and `restore` loads a file someone handed over, so
the file may hold nothing but our own schema and data, loaded by a role that cannot run programs.
"""

from __future__ import annotations

import os
import pwd
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from psycopg.conninfo import conninfo_to_dict

from server.core.errors import DatabaseSetupError
from server.db.embedded import EmbeddedPostgres, start_embedded
from server.jobs.backup import pg_tool

pytestmark = pytest.mark.security


@pytest.fixture
def owner_only_home() -> Iterator[Path]:
    """A claude-memory home made 0700, outside pytest's temp dir (see tests/db_fixtures.py)."""
    home = Path(tempfile.mkdtemp(prefix="claude-memory-sec-db-"))
    yield home
    shutil.rmtree(home, ignore_errors=True)


def psql_as_nobody(socket_dir: str) -> subprocess.CompletedProcess[str]:
    """`psql` run by the unprivileged OS user `nobody` against the socket in `socket_dir`."""
    nobody = pwd.getpwnam("nobody")

    def become_nobody() -> None:
        os.setgid(nobody.pw_gid)
        os.setuid(nobody.pw_uid)

    return subprocess.run(
        [pg_tool("psql"), "-h", socket_dir, "-U", "postgres", "-d", "postgres", "-Atc", "SELECT 1"],
        capture_output=True,
        text=True,
        check=False,
        cwd="/",
        preexec_fn=become_nobody,
        timeout=30,
    )


def start_where_possible(home: Path) -> EmbeddedPostgres:
    """Start the server in a data dir too deep for a socket path; if that is refused, with a
    message saying so, in a short one."""
    try:
        return start_embedded(home / ("d" * 100) / "pgdata")
    except DatabaseSetupError as refused:
        assert "too long for its socket" in str(refused)
    return start_embedded(home / "pgdata")


def test_no_other_local_user_reaches_the_embedded_database_or_its_folder(
    owner_only_home: Path,
) -> None:
    embedded = start_where_possible(owner_only_home)
    try:
        socket_dir = str(conninfo_to_dict(embedded.url)["host"])
        intruder = psql_as_nobody(socket_dir)
        home_mode = stat.S_IMODE(owner_only_home.stat().st_mode)
        data_mode = stat.S_IMODE(embedded.pgdata.stat().st_mode)
    finally:
        embedded.stop_now()
        embedded.release()

    assert intruder.returncode != 0, f"nobody got a session on {socket_dir}: {intruder.stdout}"
    assert Path(socket_dir) == embedded.pgdata
    assert data_mode == 0o700
    assert home_mode & (stat.S_IRWXG | stat.S_IROTH | stat.S_IWOTH) == 0
