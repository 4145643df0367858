"""Inputs too big, too deep or too slow to read (#54): metadata nested hundreds of levels, a
hostile OpenCode database, a claude.ai export nested past Python's recursion limit, a zip bomb
and a huge Gemini session file. Each is refused with a clear message, or read within a bound,
and breaks nothing for anyone else. Each test is the attack, over the real app, database and
files; each failed on the code before #54's fixes.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest
from psycopg.types.json import Jsonb

from server.core.config import Settings
from server.core.validation import MAX_METADATA_DEPTH
from server.ingest import claude_ai, gemini
from server.ingest.claude_ai import ExportFormatError, read_claude_ai_export
from server.ingest.gemini import read_gemini_session
from server.service.memory import MemoryService
from tests.integration.processes import run_cli
from tests.opencode_sessions import FIXTURES as OPENCODE_FIXTURES
from tests.opencode_sessions import load_exports
from tests.security.team import team

pytestmark = pytest.mark.security

DEEP_LEVELS = 600
ACME = "/home/dev/acme"


def nested(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {"leaf": "bottom"}
    for _ in range(levels - 1):
        value = {"inner": value}
    return value


async def test_metadata_nested_600_deep_is_refused_and_an_old_deep_row_breaks_no_reads(
    service: MemoryService, settings: Settings
) -> None:
    deep = nested(DEEP_LEVELS)
    async with team(service, settings) as crew:
        async with crew.http("alice") as alice:
            refused = await alice.post(
                "/api/memories",
                json={
                    "content": "alice's deeply nested note",
                    "project": "acme",
                    "visibility": "shared",
                    "metadata": deep,
                },
            )
            # A row saved before saves were depth-checked: shared into acme, 600 levels deep.
            kept = await alice.post(
                "/api/memories",
                json={
                    "content": "acme deploys go out on Tuesdays after the standup.",
                    "project": "acme",
                    "kind": "distilled",
                    "visibility": "shared",
                },
            )
        assert kept.status_code == 201, kept.text
        old_id = kept.json()["id"]
        async with service.pool.connection() as conn:
            await conn.execute(
                "UPDATE memories SET metadata = %s WHERE id = %s", (Jsonb(deep), old_id)
            )
        async with crew.http("bob") as bob:
            listed = await bob.get("/api/memories", params={"project": "acme"})
            got = await bob.get(f"/api/memories/{old_id}")
            started = await bob.post(
                "/api/hooks/session-start",
                json={"session_id": "b0b00000-0000-4000-8000-000000000001", "cwd": ACME},
            )
        async with crew.mcp("bob") as mcp:
            mcp_list = await mcp.call_tool(
                "list_memories", {"project": "acme"}, raise_on_error=False
            )
            mcp_get = await mcp.call_tool("get_memory", {"memory_id": old_id}, raise_on_error=False)
            mcp_recent = await mcp.call_tool(
                "recent_context", {"project": "acme"}, raise_on_error=False
            )

    assert refused.status_code == 400, refused.text
    assert refused.json()["error"]["code"] == "invalid_input"
    assert f"more than {MAX_METADATA_DEPTH} levels deep" in refused.json()["error"]["message"]

    for answer in (listed, got, started):
        assert answer.status_code == 200, answer.text
    shown = listed.json()["memories"]
    assert [item["id"] for item in shown] == [old_id]  # neither refused save was stored
    assert "not shown" in json.dumps(got.json()["metadata"])
    for call in (mcp_list, mcp_get, mcp_recent):
        assert not call.is_error, call.content
        assert "acme deploys go out on Tuesdays" in json.dumps(call.structured_content)


# Counts for ever and yields nothing: before the fix, reading it never ended (nor used memory).
ENDLESS_SESSIONS = """
CREATE VIEW session AS
WITH RECURSIVE counter(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM counter)
SELECT 'ses_' || n AS id, NULL AS project_id, NULL AS parent_id, 'slug' AS slug,
       '/home/dev/acme' AS directory, 'title' AS title, '1.18.33' AS version,
       n AS time_created, n AS time_updated
FROM counter WHERE n < 0
"""


def hostile_opencode_db(db: Path) -> Path:
    """OpenCode's tables, but `session` is a view whose query never ends."""
    with sqlite3.connect(db) as connection:
        connection.executescript((OPENCODE_FIXTURES / "schema.sql").read_text())
        connection.execute("PRAGMA foreign_keys = OFF")
        connection.execute("DROP TABLE session")
        connection.execute(ENDLESS_SESSIONS)
    return db


async def test_an_opencode_database_whose_session_table_is_an_endless_view_is_refused(
    service: MemoryService, pg_url: str, tmp_path: Path
) -> None:
    data = tmp_path / "opencode"
    data.mkdir()
    hostile_opencode_db(data / "opencode.db")
    load_exports(data / "opencode-work.db")  # a real one beside it, still imported

    try:
        done = run_cli(
            "import",
            "--opencode",
            str(data),
            "--json",
            env={"CLAUDE_MEMORY_DATABASE_URL": pg_url, "CLAUDE_MEMORY_HOME": str(tmp_path)},
            timeout=120,  # a guard against the hang, not a measurement: it ends in seconds
        )
    except subprocess.TimeoutExpired:
        pytest.fail("import --opencode never finished reading the endless view")

    assert done.returncode == 0, done.stderr
    [summary] = json.loads(done.stdout)
    assert summary["turns_imported"] > 0
    assert "`session` is a view, not a table" in done.stderr


def test_a_claude_ai_export_nested_200000_deep_is_refused_with_a_message(tmp_path: Path) -> None:
    export = tmp_path / "export"
    export.mkdir()
    (export / "conversations.json").write_text("[" * 200_000 + "]" * 200_000)
    (export / "projects.json").write_text("[" * 200_000 + "]" * 200_000)

    with pytest.raises(ExportFormatError, match="nests its JSON too deeply to read"):
        read_claude_ai_export(export)

    (export / "conversations.json").write_text("[]")
    read = read_claude_ai_export(export)  # a deep projects.json is left out; the rest is read
    assert any("projects.json nests its JSON too deeply" in w for w in read.warnings)


def test_a_claude_ai_export_zip_bomb_is_refused_before_it_inflates(tmp_path: Path) -> None:
    bomb = tmp_path / "export.zip"
    inflated = 64 * 1024**2  # 64 MiB of blanks deflate to about 64 KB
    with (
        zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive,
        archive.open("conversations.json", "w") as member,
    ):
        member.write(b"[")
        for _ in range(inflated // 1024**2):
            member.write(b" " * 1024**2)
        member.write(b"]")
    assert bomb.stat().st_size * claude_ai.MAX_INFLATION_RATIO < inflated

    with pytest.raises(ExportFormatError, match="inflates more than 100x"):
        read_claude_ai_export(bomb)


def test_a_gemini_json_session_over_the_size_limit_is_not_read(tmp_path: Path) -> None:
    chats = tmp_path / ".gemini" / "tmp" / "acme" / "chats"
    chats.mkdir(parents=True)
    session = chats / "session-2026-11-28T05-00-hostile.json"
    with session.open("wb") as handle:  # sparse: the test allocates nothing this size
        handle.write(b'{"sessionId": "hostile", "messages": [')
        handle.truncate(gemini.MAX_DOCUMENT_BYTES + 1)

    with pytest.raises(OSError, match=f"larger than {gemini.MAX_DOCUMENT_BYTES:,} bytes") as err:
        read_gemini_session(session)
    assert str(session) in str(err.value)
