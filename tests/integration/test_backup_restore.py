"""`claude-memory backup` / `restore` as real commands against a database of their own."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest

from server.db import admin
from server.db.embedded import EmbeddedPostgres
from tests.db_fixtures import create_database, database_url, drop_databases
from tests.fixture_sessions import CLAUDE_PROJECTS, SHARED_FIXTURES
from tests.integration.processes import run_cli


@pytest.fixture(scope="module")
def imported_once(
    pg_server: EmbeddedPostgres, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A database of its own, filled once through the real import command: its name. Each test
    gets a copy (`filled`), so the import, the slowest step here, runs once per module."""
    name = create_database(pg_server)
    env = {
        "CLAUDE_MEMORY_DATABASE_URL": database_url(pg_server, name),
        "CLAUDE_MEMORY_HOME": str(tmp_path_factory.mktemp("import") / "home"),
    }
    result = run_cli(
        "import",
        "--claude-code",
        str(CLAUDE_PROJECTS),
        "--text",
        str(SHARED_FIXTURES / "notes"),
        "--json",
        env=env,
    )
    assert result.returncode == 0, result.stderr
    yield name
    drop_databases(pg_server, [name])


@pytest.fixture
def filled(
    pg_server: EmbeddedPostgres, imported_once: str, tmp_path: Path
) -> Iterator[dict[str, str]]:
    """A copy of the imported database, this test's own."""
    name = create_database(pg_server, template=imported_once)
    yield {
        "CLAUDE_MEMORY_DATABASE_URL": database_url(pg_server, name),
        "CLAUDE_MEMORY_HOME": str(tmp_path / "home"),
    }
    drop_databases(pg_server, [name])


def user_names(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        return sorted(str(row[0]) for row in conn.execute("SELECT name FROM users").fetchall())


def databases(url: str) -> set[str]:
    with psycopg.connect(admin.with_database(url, "postgres")) as conn:
        return {row[0] for row in conn.execute("SELECT datname FROM pg_database").fetchall()}


def test_backup_wipe_restore_brings_every_memory_back(
    filled: dict[str, str], tmp_path: Path
) -> None:
    url = filled["CLAUDE_MEMORY_DATABASE_URL"]
    before = admin.content_hashes(url)
    out = tmp_path / "backups"

    made = run_cli("backup", "--out", str(out), "--json", env=filled)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("TRUNCATE memories, imported_sessions CASCADE")
    assert admin.content_hashes(url) == set()
    restored = run_cli("restore", json.loads(made.stdout)["file"], "--yes", "--json", env=filled)

    assert made.returncode == 0, made.stderr
    assert restored.returncode == 0, restored.stderr
    assert len(before) > 40
    assert admin.content_hashes(url) == before
    assert json.loads(restored.stdout)["memories"] == len(before)
    backup_file = Path(json.loads(made.stdout)["file"])
    assert stat.S_IMODE(os.stat(backup_file).st_mode) == 0o600
    assert not [name for name in databases(url) if "_restore_" in name or "_replaced_" in name]


def test_a_corrupt_or_cut_backup_fails_cleanly_and_changes_nothing(
    filled: dict[str, str], tmp_path: Path
) -> None:
    url = filled["CLAUDE_MEMORY_DATABASE_URL"]
    before = admin.content_hashes(url)
    made = run_cli("backup", "--out", str(tmp_path / "b"), "--json", env=filled)
    good = Path(json.loads(made.stdout)["file"])
    garbage = tmp_path / "garbage.dump"
    garbage.write_bytes(b"PGDMP\x00 this is not a dump at all")
    cut = tmp_path / "cut.dump"
    cut.write_bytes(good.read_bytes()[: good.stat().st_size // 2])

    for bad in (garbage, cut, tmp_path / "missing.dump"):
        result = run_cli("restore", str(bad), "--yes", env=filled)
        assert result.returncode == 1
        assert "Traceback" not in result.stderr
        assert "claude-memory: error:" in result.stderr
        assert admin.content_hashes(url) == before
    assert not [name for name in databases(url) if "_restore_" in name]


def test_backup_keeps_the_newest_n(filled: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "rotating"
    for _ in range(3):
        assert run_cli("backup", "--out", str(out), "--keep", "2", env=filled).returncode == 0

    assert len(list(out.glob("claude-memory-*.dump"))) == 2


def test_restore_without_yes_off_a_terminal_refuses(filled: dict[str, str]) -> None:
    result = run_cli("restore", "/nonexistent.dump", env=filled)

    assert result.returncode == 1
    assert "--yes" in result.stderr


@pytest.fixture
def single_user(fresh_database: Callable[[], str], tmp_path: Path) -> dict[str, str]:
    """A single-user store of its own holding one note, through the real import command."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "deploys.md").write_text("# Deploys\nDeploys go out from main every Tuesday.\n")
    env = {
        "CLAUDE_MEMORY_DATABASE_URL": fresh_database(),
        "CLAUDE_MEMORY_HOME": str(tmp_path / "home"),
    }
    result = run_cli("import", "--text", str(notes), "--json", env=env)
    assert result.returncode == 0, result.stderr
    return env


def test_a_backup_holding_users_the_store_lacks_is_refused_unless_with_users(
    single_user: dict[str, str], tmp_path: Path
) -> None:
    """#65: a dump whose only change is one `users` row would make this single-user store a
    team store whose token the dump's sender knows."""
    filled = single_user
    url = filled["CLAUDE_MEMORY_DATABASE_URL"]
    before = admin.content_hashes(url)
    # The sender's dump: this store's own memories, plus a user whose token they hold.
    assert run_cli("users", "add", "mallory", env=filled).returncode == 0
    made = run_cli("backup", "--out", str(tmp_path / "sent"), "--json", env=filled)
    sent = json.loads(made.stdout)["file"]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DELETE FROM users")

    refused = run_cli("restore", sent, "--yes", env=filled)
    still_single_user = user_names(url)
    taken = run_cli("restore", sent, "--yes", "--with-users", "--json", env=filled)

    assert refused.returncode == 1, refused.stderr
    [error] = [line for line in refused.stderr.splitlines() if "claude-memory: error:" in line]
    assert "the backup holds users this store does not: mallory" in error
    assert "--with-users" in error and "Traceback" not in refused.stderr
    assert still_single_user == []
    assert before and admin.content_hashes(url) == before
    assert taken.returncode == 0, taken.stderr
    assert json.loads(taken.stdout)["users"] == ["mallory"]
    assert user_names(url) == ["mallory"]
