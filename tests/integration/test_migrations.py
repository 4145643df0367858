"""Migrations: applied once each, in order, in a transaction, safely from concurrent starters."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest

from server.core.errors import DatabaseSetupError
from server.db.migrate import MIGRATIONS_DIR, apply_migrations, discover_migrations
from server.store import sessions as session_store
from tests.integration.processes import run_cli


def applied_versions(url: str) -> list[int]:
    with psycopg.connect(url) as conn:
        return [row[0] for row in conn.execute("SELECT version FROM schema_migrations ORDER BY 1")]


async def test_second_run_applies_nothing(fresh_database: Callable[[], str]) -> None:
    url = fresh_database()

    first = await apply_migrations(url)
    second = await apply_migrations(url)

    assert [m.version for m in first] == [m.version for m in discover_migrations()]
    assert second == []
    assert applied_versions(url) == [m.version for m in discover_migrations()]


async def test_concurrent_runs_apply_each_migration_once(
    fresh_database: Callable[[], str],
) -> None:
    url = fresh_database()

    results = await asyncio.gather(*(apply_migrations(url) for _ in range(4)))

    applied = [m.version for result in results for m in result]
    assert sorted(applied) == [m.version for m in discover_migrations()]
    assert applied_versions(url) == [m.version for m in discover_migrations()]


async def test_turns_stored_before_migration_6_get_the_words_of_the_turns_before_them(
    fresh_database: Callable[[], str], tmp_path: Path
) -> None:
    folder = tmp_path / "migrations"
    folder.mkdir()
    for path in MIGRATIONS_DIR.glob("00[1-5]_*.sql"):
        shutil.copy(path, folder)
    url = fresh_database()
    await apply_migrations(url, folder)
    with psycopg.connect(url) as conn:
        conn.execute(
            "INSERT INTO memories (content, content_hash, kind, session_id, created_at) VALUES"
            " ('Which package manager?', 'h1', 'raw', 's1', '2026-10-01T10:00Z'),"
            " ('A deploy note', 'h2', 'note', 's1', '2026-10-01T10:00:30Z'),"
            " ('pnpm, frozen lockfile.', 'h3', 'raw', 's1', '2026-10-01T10:01Z'),"
            " ('Pin node too.', 'h4', 'raw', 's1', '2026-10-01T10:02Z'),"
            " ('Unrelated session.', 'h5', 'raw', 's2', '2026-10-01T10:03Z')"
        )

    await apply_migrations(url)

    with psycopg.connect(url) as conn:
        rows = dict(conn.execute("SELECT content_hash, context_tsv::text FROM memories").fetchall())
    assert rows["h1"] is None and rows["h2"] is None and rows["h5"] is None
    assert rows["h3"] == "'manag':3B 'packag':2B"
    assert rows["h4"] == "'frozen':2B 'lockfil':3B 'manag':6C 'packag':5C 'pnpm':1B"


async def test_read_positions_from_before_migration_25_stay_with_their_sessions_owner(
    fresh_database: Callable[[], str], tmp_path: Path
) -> None:
    folder = tmp_path / "migrations"
    folder.mkdir()
    for path in MIGRATIONS_DIR.glob("0[01]?_*.sql"):
        shutil.copy(path, folder)
    for path in MIGRATIONS_DIR.glob("02[0-4]_*.sql"):
        shutil.copy(path, folder)
    url = fresh_database()
    await apply_migrations(url, folder)
    with psycopg.connect(url) as conn:
        alice = conn.execute(
            "INSERT INTO users (name, token_hash) VALUES ('alice', 'h') RETURNING id"
        ).fetchone()
        assert alice is not None
        conn.execute(
            "INSERT INTO imported_sessions (session_id, file_path, owner_id) VALUES"
            " ('solo', '/p/solo.jsonl', NULL), ('hers', '/p/hers.jsonl', %s)",
            alice,
        )
        conn.execute(
            "INSERT INTO imported_files (file_path, session_id, bytes_imported) VALUES"
            " ('/p/solo.jsonl', 'solo', 10), ('/p/hers.jsonl', 'hers', 20),"
            " ('/p/hers/subagents/agent-1.jsonl', 'hers', 30)"
        )

    await apply_migrations(url)

    async with await psycopg.AsyncConnection.connect(url) as conn:
        nobodys = await session_store.file_offsets(conn)  # single-user mode, the CLI
        await conn.execute("SELECT set_config('claude_memory.viewer', %s, false)", (str(alice[0]),))
        hers = await session_store.file_offsets(conn)
    assert nobodys == {"/p/solo.jsonl": (10, 0)}
    assert hers == {"/p/hers.jsonl": (20, 0), "/p/hers/subagents/agent-1.jsonl": (30, 0)}


async def test_failing_migration_rolls_back_and_is_not_recorded(
    fresh_database: Callable[[], str], tmp_path: Path
) -> None:
    folder = tmp_path / "migrations"
    shutil.copytree(MIGRATIONS_DIR, folder)
    (folder / "900_break_things.sql").write_text(
        "CREATE TABLE half_done (id int);\nSELECT no_such_function();\n"
    )
    url = fresh_database()

    with pytest.raises(
        DatabaseSetupError, match=r"900_break_things\.sql failed and was rolled back"
    ):
        await apply_migrations(url, folder)

    assert 900 not in applied_versions(url)
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT to_regclass('half_done')").fetchone() == (None,)


def test_misnamed_migration_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "1_first.sql").write_text("SELECT 1;")

    with pytest.raises(DatabaseSetupError, match=r"not named NNN_name\.sql"):
        discover_migrations(tmp_path)


def test_repeated_version_is_refused(tmp_path: Path) -> None:
    (tmp_path / "001_one.sql").write_text("SELECT 1;")
    (tmp_path / "001_two.sql").write_text("SELECT 2;")

    with pytest.raises(DatabaseSetupError, match="share version 1"):
        discover_migrations(tmp_path)


def test_migrate_command_twice_applies_nothing_the_second_time(
    fresh_database: Callable[[], str],
) -> None:
    env = {"CLAUDE_MEMORY_DATABASE_URL": fresh_database()}

    first = run_cli("migrate", env=env)
    second = run_cli("migrate", env=env)

    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["applied"] == [m.path.name for m in discover_migrations()]
    assert json.loads(second.stdout) == {
        "applied": [],
        "supersession_links_backfilled": 0,
        "database": "external",
    }
