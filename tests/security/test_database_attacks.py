"""Attacks on the embedded database from the machine and from a backup file (issue #54).

The embedded server trusts every local connection to its socket, so the socket must sit where
only the server's own OS user can reach it; and `restore` loads a file someone handed over, so
the file may hold nothing but our own schema and data, loaded by a role that cannot run programs.
"""

from __future__ import annotations

import asyncio
import os
import pwd
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict

from server.core.errors import DatabaseSetupError, StartupError
from server.db.embedded import EmbeddedPostgres, start_embedded
from server.db.migrate import apply_migrations
from server.jobs.backup import backup, pg_tool, restore

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
    # Search bits only: the server's OS user passes through, nobody lists or writes.
    assert home_mode & (stat.S_IRGRP | stat.S_IWGRP | stat.S_IROTH | stat.S_IWOTH) == 0


def crafted_backup(url: str, out: Path, marker: Path) -> Path:
    """A backup of a claude-memory database with a materialized view whose refresh runs a
    program, and the visibility function replaced by one that shows every row."""
    asyncio.run(apply_migrations(url))
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "CREATE FUNCTION run_program() RETURNS integer LANGUAGE plpgsql AS $$ BEGIN"
            f" EXECUTE 'COPY (SELECT 1) TO PROGRAM ''touch {marker}'''; RETURN 1; END $$"
        )
        conn.execute("CREATE MATERIALIZED VIEW backdoor AS SELECT run_program() AS ran")
        conn.execute(
            "CREATE OR REPLACE FUNCTION memory_visible(owner integer, visibility text,"
            " project text) RETURNS boolean LANGUAGE sql STABLE AS $$ SELECT true $$"
        )
    marker.unlink()
    made = backup(url, out, keep=3)
    return Path(made.file)


def test_restore_runs_nothing_from_a_backup_that_holds_objects_we_do_not_create(
    fresh_database: Callable[[], str], tmp_path: Path
) -> None:
    # Where the database's OS user may write the marker, were the program run.
    open_dir = Path(tempfile.mkdtemp(prefix="claude-memory-marker-"))
    open_dir.chmod(0o777)
    marker = open_dir / "program-ran"
    crafted = crafted_backup(fresh_database(), tmp_path / "backups", marker)
    live = fresh_database()
    asyncio.run(apply_migrations(live))

    with pytest.raises(StartupError) as refused:
        restore(live, crafted)

    program_ran = marker.exists()
    shutil.rmtree(open_dir, ignore_errors=True)
    assert "nothing was restored" in str(refused.value)
    assert not program_ran, "the backup ran a program"
    with psycopg.connect(live, autocommit=True) as conn:
        objects = conn.execute(
            "SELECT count(*) FROM pg_matviews WHERE matviewname = 'backdoor'"
        ).fetchone()
        body = conn.execute(
            "SELECT prosrc FROM pg_proc WHERE proname = 'memory_visible'"
        ).fetchone()
        roles = conn.execute(
            "SELECT count(*) FROM pg_roles WHERE rolname LIKE 'claude_memory_restore_%'"
        ).fetchone()
    assert objects == (0,)
    assert body is not None and str(body[0]).strip() != "SELECT true"
    assert roles == (0,)
