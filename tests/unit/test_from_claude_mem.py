"""The claude-mem reader, against databases built from tests/fixtures/other_tools/claude-mem."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from server.core.models.memories import MemoryDraft
from server.ingest.from_claude_mem import read_claude_mem
from server.ingest.tool_reading import ReadContext, ToolReading
from tests.other_tools import claude_mem_database

API_SESSION = "5f0c2a9e-3b1d-4c55-9a57-2d8e6b1f4c10"
WEB_SESSION = "a8e31f47-90c2-4b6e-8d0f-6c1b2e7a9d35"


def drafts(reading: ToolReading) -> dict[str, MemoryDraft]:
    return {r.draft.metadata["original_id"]: r.draft for group in reading.groups for r in group}


def test_observations_and_summaries_become_distilled_drafts_per_session(tmp_path: Path) -> None:
    reading = read_claude_mem([claude_mem_database(tmp_path)], ReadContext())

    assert reading.errors == []
    assert (reading.files_found, reading.files_read) == (1, 1)
    assert reading.skipped == {"empty": 1}  # the observation with nothing to say
    by_id = drafts(reading)
    assert sorted(by_id) == [
        "observation:1",
        "observation:2",
        "observation:3",
        "observation:4",
        "summary:1",
        "summary:2",
    ]
    sessions = [{r.draft.session_id for r in group} for group in reading.groups]
    assert sessions == [{API_SESSION}, {WEB_SESSION}]  # one transaction per claude-mem session
    assert {d.kind for d in by_id.values()} == {"distilled"}
    assert {d.source for d in by_id.values()} == {"claude-mem"}


def test_an_observation_keeps_its_title_narrative_facts_date_and_files(tmp_path: Path) -> None:
    observation = drafts(read_claude_mem([claude_mem_database(tmp_path)], ReadContext()))[
        "observation:1"
    ]

    assert observation.content.startswith(
        "Invoice export loads every line item at once\n"
        "exportInvoices() builds the whole CSV in memory\n\nThe export handler reads"
    )
    assert observation.content.endswith(
        "- exportInvoices() calls findAll() without a limit\n"
        "- tenants over 40k invoices hit the 30 s gateway timeout"
    )
    assert observation.created_at == datetime(2026, 3, 2, 9, 14, 5, tzinfo=UTC)
    assert observation.project == "acme-api"
    assert observation.tags == ["claude-mem", "discovery", "how-it-works", "problem-solution"]
    assert observation.metadata["files_read"] == ["src/invoices/export.ts", "src/db/invoices.ts"]
    assert observation.metadata["claude_mem_session"] == "mem-7d41c0a2"
    assert observation.metadata["original_file"].endswith("claude-mem.db")


def test_a_worktree_row_is_filed_under_the_project_it_was_merged_into(tmp_path: Path) -> None:
    by_id = drafts(read_claude_mem([claude_mem_database(tmp_path)], ReadContext()))

    assert by_id["observation:4"].project == "acme-web"
    assert by_id["summary:2"].project == "acme-web"


def test_a_session_summary_reads_as_labelled_lines(tmp_path: Path) -> None:
    summary = drafts(read_claude_mem([claude_mem_database(tmp_path)], ReadContext()))["summary:1"]

    assert summary.content == (
        "Session summary: Fix the invoice export timing out for large tenants\n"
        "Investigated: exportInvoices() and the invoices repository\n"
        "Learned: findAll() without a limit loads every row\n"
        "Completed: Keyset-paged streaming export; large exports go to S3\n"
        "Next steps: Add a progress event to the export job"
    )
    assert summary.tags == ["claude-mem", "session-summary"]
    assert summary.created_at == datetime(2026, 3, 2, 10, 5, tzinfo=UTC)


def test_a_migration_4_database_reads_text_observations_and_old_session_columns(
    tmp_path: Path,
) -> None:
    reading = read_claude_mem(
        [claude_mem_database(tmp_path, "claude-mem-migration4.sql")], ReadContext()
    )

    by_id = drafts(reading)
    assert reading.errors == []
    assert by_id["observation:1"].content.startswith("CI spends 6 of its 9 minutes")
    assert by_id["observation:2"].tags == ["claude-mem", "feature"]
    assert {d.session_id for d in by_id.values()} == {"0d6b8f21-44c7-4e0a-b3f5-71a9c2e8d460"}
    assert by_id["summary:1"].content.startswith("Session summary: Make CI faster\nLearned:")


def test_the_first_schema_reads_memories_and_overviews(tmp_path: Path) -> None:
    reading = read_claude_mem(
        [claude_mem_database(tmp_path, "claude-mem-first-schema.sql")], ReadContext()
    )

    by_id = drafts(reading)
    assert sorted(by_id) == ["memory:1", "overview:1"]
    memory = by_id["memory:1"]
    assert memory.content == (
        "How migrations run\n\nMigrations run with node-pg-migrate from the api container; "
        "never against production by hand.\n\n- pnpm migrate up runs inside the api container"
    )
    assert memory.tags == ["claude-mem", "postgres", "migrations"]
    assert memory.session_id == "legacy-0001"
    assert by_id["overview:1"].tags == ["claude-mem", "session-summary"]


def test_a_file_that_is_not_a_database_is_named_and_the_others_are_read(tmp_path: Path) -> None:
    broken = tmp_path / "broken.db"
    broken.write_text("this is not SQLite\n")
    good = claude_mem_database(tmp_path)

    reading = read_claude_mem([broken, good], ReadContext())

    assert reading.errors == [f"{broken}: not a claude-mem database: file is not a database"]
    assert (reading.files_found, reading.files_read, reading.files_failed) == (2, 1, 1)
    assert len(drafts(reading)) == 6


def test_a_sqlite_database_without_claude_mem_tables_is_reported(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")

    reading = read_claude_mem([other, tmp_path / "missing.db"], ReadContext())

    assert reading.errors[0] == (
        f"{other}: not a claude-mem database: no observations or session_summaries table"
    )
    assert reading.errors[1].startswith(f"{tmp_path / 'missing.db'}: no such file")
    assert reading.groups == []


def test_a_folder_means_the_claude_mem_database_in_it(tmp_path: Path) -> None:
    folder = tmp_path / ".claude-mem"
    folder.mkdir()
    database = claude_mem_database(tmp_path)
    database.rename(folder / "claude-mem.db")

    reading = read_claude_mem([folder], ReadContext())

    assert reading.errors == []
    assert len(drafts(reading)) == 6
