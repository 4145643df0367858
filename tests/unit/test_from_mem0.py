"""The mem0 / OpenMemory reader, against tests/fixtures/other_tools/mem0."""

from __future__ import annotations

import zipfile
from datetime import UTC, datetime
from pathlib import Path

from server.core.models.memories import MemoryDraft
from server.ingest.from_mem0 import read_mem0
from server.ingest.tool_reading import ReadContext, ToolReading
from tests.other_tools import MEM0, openmemory_backup

PNPM = "9f2c4e61-8b3a-4d7f-a1c5-6e0b9d2f7a38"
DEPLOY = "2d7a9c14-5e3b-4f81-9a6d-0c8e2b4f1d73"
PRISMA = "7e1b3d95-2c6f-4a08-b7e4-9d5a1c3f6b20"


def drafts(reading: ToolReading) -> dict[str, MemoryDraft]:
    return {r.draft.metadata["original_id"]: r.draft for group in reading.groups for r in group}


def test_openmemory_backup_gives_categories_app_and_state(tmp_path: Path) -> None:
    reading = read_mem0([openmemory_backup(tmp_path)], ReadContext())

    assert reading.errors == []
    assert reading.skipped == {"deleted_in_file": 1}
    by_id = drafts(reading)
    assert sorted(by_id) == sorted([PNPM, DEPLOY, PRISMA])
    pnpm = by_id[PNPM]
    assert (pnpm.kind, pnpm.source) == ("distilled", "mem0")
    assert pnpm.content == "Prefers pnpm over npm in every JavaScript project"
    assert pnpm.tags == ["preferences"]
    assert pnpm.created_at == datetime(2026, 1, 12, 8, 30, 15, 204118, tzinfo=UTC)
    assert pnpm.metadata["app"] == "claude"
    assert pnpm.metadata["mem0_metadata"] == {"source_app": "openmemory", "mcp_client": "claude"}
    assert by_id[DEPLOY].project == "acme-api"  # from the memory's own metadata
    assert by_id[PRISMA].metadata["state"] == "archived"


def test_a_backup_without_memories_json_reads_the_jsonl(tmp_path: Path) -> None:
    reading = read_mem0([openmemory_backup(tmp_path, with_json=False)], ReadContext())

    by_id = drafts(reading)
    assert sorted(by_id) == sorted([PNPM, DEPLOY, PRISMA])
    assert by_id[DEPLOY].tags == ["work"]
    assert reading.groups[0][0].where.endswith("memories_export_dev.zip!memories.jsonl.gz:1")


def test_mem0_get_all_results_keep_their_times_in_utc_and_their_ids() -> None:
    reading = read_mem0([MEM0 / "mem0-get-all.json"], ReadContext())

    by_id = drafts(reading)
    tests = by_id["3c9e7a21-6f4b-4d0e-b8a2-1e5c9d7f3b64"]
    assert tests.created_at == datetime(2026, 2, 3, 17, 21, 44, 512309, tzinfo=UTC)  # -08:00
    assert tests.project == "acme-api"
    assert tests.metadata["agent_id"] == "claude-code"
    assert tests.metadata["hash"] == "5e1d2c8f0b7a4e9c3d6f1a2b8c7e4d90"
    assert by_id["8a4f2c6e-1b9d-4a73-9e5c-0d7b3f8a2c19"].metadata["run_id"] == "session-2026-02-05"
    assert by_id["e5b1d8f3-2a7c-4e96-8d0b-6f3a9c1e7d25"].project == ""


def test_a_bare_list_with_platform_categories_is_read() -> None:
    by_id = drafts(read_mem0([MEM0 / "mem0-platform-list.json"], ReadContext()))

    assert by_id["d2f7a9c3-5e1b-4c86-a0d4-7b3e9f1c5a28"].tags == [
        "technology",
        "user_preferences",
    ]


def test_a_file_that_is_not_json_is_named_with_the_place_and_the_rest_read(
    tmp_path: Path,
) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"results": [{"memory": "half')

    reading = read_mem0([broken, MEM0 / "mem0-get-all.json"], ReadContext())

    assert reading.errors == [
        f"{broken}: not JSON: Unterminated string starting at (line 1, column 25)"
    ]
    assert (reading.files_found, reading.files_read, reading.files_failed) == (2, 1, 1)
    assert len(drafts(reading)) == 3


def test_a_bad_line_is_reported_by_number_and_the_other_lines_read(tmp_path: Path) -> None:
    lines = tmp_path / "memories.jsonl"
    good = (MEM0 / "openmemory" / "memories.jsonl").read_text().splitlines()
    lines.write_text("\n".join([good[0], "{oops", '{"id": "x", "memory": ""}', good[1]]) + "\n")

    reading = read_mem0([lines], ReadContext())

    assert reading.errors == [
        f"{lines}:2: not JSON: Expecting property name enclosed in double quotes",
        f"{lines}:3: not a memory: no text",
    ]
    assert reading.skipped == {"invalid": 2}
    assert sorted(drafts(reading)) == sorted([PNPM, DEPLOY])


def test_a_zip_without_memories_and_a_missing_path_are_reported(tmp_path: Path) -> None:
    empty = tmp_path / "export.zip"
    with zipfile.ZipFile(empty, "w") as bundle:
        bundle.writestr("readme.txt", "nothing here")

    reading = read_mem0([empty, tmp_path / "absent.json"], ReadContext())

    assert reading.errors == [
        f"{tmp_path / 'absent.json'}: no such file or folder",
        f"{empty}: no memories.json or memories.jsonl.gz in the zip",
    ]


def test_a_folder_is_searched_for_export_files(tmp_path: Path) -> None:
    openmemory_backup(tmp_path)
    (tmp_path / "notes.txt").write_text("not an export")

    reading = read_mem0([tmp_path], ReadContext())

    assert reading.files_found == 1
    assert len(drafts(reading)) == 3
