"""The Markdown-folder reader (basic-memory, Obsidian), on tests/fixtures/other_tools/markdown."""

from __future__ import annotations

import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

from server.core.models.memories import MemoryDraft
from server.ingest.from_markdown import read_markdown_notes
from server.ingest.tool_reading import ReadContext, ToolReading
from tests.other_tools import MARKDOWN


def by_title(reading: ToolReading) -> dict[str, MemoryDraft]:
    return {r.draft.metadata["title"]: r.draft for group in reading.groups for r in group}


def test_basic_memory_notes_keep_permalink_tags_dates_and_relations() -> None:
    reading = read_markdown_notes([MARKDOWN / "basic-memory"], ReadContext())

    assert reading.errors == []
    notes = by_title(reading)
    keyset = notes["Keyset pagination for list endpoints"]
    assert (keyset.kind, keyset.source) == ("note", "markdown")
    assert keyset.tags == ["pagination", "postgres", "api"]  # both list items, then #api
    assert keyset.created_at == datetime(2026, 2, 11, 10, 20, tzinfo=UTC)  # `created`
    assert keyset.metadata["original_id"] == "decisions/keyset-pagination-for-list-endpoints"
    assert keyset.metadata["links"] == ["API Conventions", "Orders Endpoint"]
    assert "- [decision] List endpoints page with a cursor" in keyset.content
    assert notes["Dana (ops)"].metadata["type"] == "person"
    assert notes["Dana (ops)"].created_at == datetime(2026, 1, 8, tzinfo=UTC)


def test_obsidian_inline_tags_and_links_are_read_outside_code_and_hidden_folders_skipped() -> None:
    reading = read_markdown_notes([MARKDOWN / "obsidian-vault"], ReadContext())

    assert reading.files_found == 2  # .obsidian/ is not read
    notes = by_title(reading)
    daily = notes["2026-02-10"]
    assert daily.tags == ["daily", "deploy", "acme-api"]  # not the shell comment in the fence
    assert daily.metadata["links"] == ["Dana (ops)", "Projects/acme-api"]
    assert daily.metadata["aliases"] == ["Tuesday standup"]
    assert daily.created_at == datetime(2026, 2, 10, tzinfo=UTC)
    project = notes["acme-api"]
    assert project.project == "acme-api"
    assert project.tags == ["project", "backend", "release"]


def test_a_note_without_a_date_is_dated_by_its_file(tmp_path: Path) -> None:
    note = tmp_path / "plain.md"
    note.write_text("# Plain\n\nNothing but text.\n")
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    os.utime(note, (when.timestamp(), when.timestamp()))

    draft = by_title(read_markdown_notes([note], ReadContext()))["Plain"]

    assert draft.created_at == when
    assert draft.tags == []


def test_unreadable_files_are_named_with_the_reason_and_the_rest_read(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(MARKDOWN / "obsidian-vault", vault)
    latin1 = vault / "latin1.md"
    latin1.write_bytes("# Caf\xe9 notes\n".encode("latin-1"))
    unclosed = vault / "unclosed.md"
    unclosed.write_text("---\ntitle: Never closed\ntags: [a]\n\nBody.\n")

    reading = read_markdown_notes([vault], ReadContext())

    assert sorted(reading.errors) == [
        f"{latin1}: not UTF-8 text (byte 5)",
        f"{unclosed}: front matter opened with --- is never closed",
    ]
    assert (reading.files_found, reading.files_read, reading.files_failed) == (4, 2, 2)
    assert set(by_title(reading)) == {"2026-02-10", "acme-api"}


def test_a_long_note_is_chunked_and_every_chunk_names_its_note(tmp_path: Path) -> None:
    note = tmp_path / "long.md"
    paragraphs = [
        f"Paragraph {n}: " + "the deploy pipeline waits for Postgres. " * 12 for n in range(8)
    ]
    note.write_text("---\ntitle: Deploy handbook\n---\n\n" + "\n\n".join(paragraphs) + "\n")

    records = [r for group in read_markdown_notes([note], ReadContext()).groups for r in group]

    assert len(records) > 1
    assert all(r.draft.content.startswith("Deploy handbook\n\n") for r in records)
    assert [r.draft.metadata["chunk"] for r in records] == list(range(1, len(records) + 1))
    assert records[1].where == f"{note} (part 2)"


def test_a_missing_folder_is_reported() -> None:
    reading = read_markdown_notes([MARKDOWN / "absent"], ReadContext())

    assert reading.errors == [f"{MARKDOWN / 'absent'}: no such file or folder"]
