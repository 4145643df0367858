"""Export writers: JSON array, JSON Lines and Markdown shapes for a memory."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from server.core.models.memories import Memory
from server.domain.export import memory_record, writer_for

MEMORY = Memory(
    id=7,
    content="Use pnpm.\nNever npm.",
    content_hash="abc",
    kind="preference",
    tags=["tooling"],
    source="claude-code",
    project="shop",
    project_path="/home/me/shop",
    session_id="5f1c0a4e-0000-4000-8000-000000000000",
    role=None,
    created_at=datetime(2026, 3, 1, 9, 0, tzinfo=UTC),
    updated_at=datetime(2026, 3, 1, 9, 0, tzinfo=UTC),
    deleted_at=None,
    metadata={"turns": [1, 2]},
    supersedes=None,
    archived_at=None,
)


def render(fmt: str, count: int) -> str:
    writer = writer_for(fmt)
    items = [writer.item(MEMORY, first=i == 0) for i in range(count)]
    return writer.start() + "".join(items) + writer.end()


def test_record_has_iso_times_and_full_session_id() -> None:
    record = memory_record(MEMORY)

    assert record["created_at"] == "2026-03-01T09:00:00+00:00"
    assert record["session_id"] == "5f1c0a4e-0000-4000-8000-000000000000"
    assert record["deleted_at"] is None
    assert (record["owner"], record["visibility"]) == (None, "shared")


def test_json_array_is_valid_for_zero_one_and_many() -> None:
    assert json.loads(render("json", 0)) == []
    assert len(json.loads(render("json", 1))) == 1
    assert len(json.loads(render("json", 3))) == 3


def test_json_lines_round_trip() -> None:
    lines = render("jsonl", 2).splitlines()

    assert [json.loads(line)["id"] for line in lines] == [7, 7]


def test_markdown_keeps_line_breaks_and_metadata() -> None:
    text = render("markdown", 1)

    assert "## Memory 7" in text
    assert "Use pnpm.\nNever npm." in text
    assert "- tags: tooling" in text
