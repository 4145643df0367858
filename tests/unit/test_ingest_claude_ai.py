"""claude.ai export reader, against the shared fixture export and zips built from it."""

from __future__ import annotations

import json
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from server.ingest.claude_ai import (
    ClaudeAiConversation,
    ClaudeAiExport,
    ExportFormatError,
    read_claude_ai_export,
)
from tests.fixture_sessions import SHARED_FIXTURES

EXPORT = SHARED_FIXTURES / "claude-ai"
KEYSET = "d3706fd2-87a3-44a0-9840-1fa3f971cb94"
NAMING = "e2df6168-ab56-40ab-9982-25f6d01ffdd1"
RATE_LIMIT = "8bb49dd3-4c91-4004-a94b-e9280d81484a"
PROJECT = "42d3b95f-7ecd-4d18-ac76-e491cb7beb9e"


@pytest.fixture(scope="module")
def export() -> ClaudeAiExport:
    return read_claude_ai_export(EXPORT)


def conversation(export: ClaudeAiExport, uuid: str) -> ClaudeAiConversation:
    (found,) = [c for c in export.conversations if c.uuid == uuid]
    return found


def test_conversations_keep_titles_times_and_order(export: ClaudeAiExport) -> None:
    assert [(c.uuid, c.name) for c in export.conversations] == [
        (KEYSET, "Keyset pagination with timestamp ties"),
        (NAMING, "Naming the invoice export CLI"),
        (RATE_LIMIT, "Rate limiting: per key vs per IP"),
    ]
    keyset = conversation(export, KEYSET)
    assert keyset.created_at == datetime(2026, 4, 13, 19, 2, 11, 204619, tzinfo=UTC)
    assert keyset.updated_at == datetime(2026, 4, 13, 19, 9, 47, 880312, tzinfo=UTC)
    assert keyset.summary == ""
    assert conversation(export, NAMING).summary == ""  # older shape: no summary field
    assert export.warnings == []


def test_messages_have_roles_parents_and_utc_times(export: ClaudeAiExport) -> None:
    messages = conversation(export, KEYSET).messages
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[0].parent_uuid is None  # the root sentinel
    assert [m.parent_uuid for m in messages[1:]] == [m.uuid for m in messages[:-1]]
    assert messages[0].created_at == datetime(2026, 4, 13, 19, 2, 12, 417003, tzinfo=UTC)
    assert messages[3].text.startswith("Mostly, yes: UUIDv7 is time-ordered")


def test_thinking_is_left_out_and_attachments_are_marked(export: ClaudeAiExport) -> None:
    question, answer, *_ = conversation(export, KEYSET).messages
    assert question.text.startswith("I'm adding keyset pagination to GET /orders")
    assert "\n\n[attachment: orders_schema.sql]\nCREATE TABLE orders (" in question.text
    assert question.text.endswith("[end of attachment]")
    assert answer.text.startswith("Yes — keep `id` as a tiebreaker.")
    assert "They ask whether id is needed" not in answer.text
    assert "Weighing tie-breakers" not in answer.text


def test_older_shape_falls_back_between_text_and_content(export: ClaudeAiExport) -> None:
    messages = conversation(export, NAMING).messages
    assert [m.role for m in messages] == ["user", "assistant"] * 3
    assert all(m.parent_uuid is None for m in messages)
    paste = messages[0]  # empty text, the paste became an attachment without a file name
    assert paste.text.startswith("[attachment: pasted text]\nacme-invoices export --from")
    assert messages[2].file_names == ["cli-help-mock.png"]
    assert "cli-help-mock.png" not in messages[2].text
    # `text` is "" but the content block holds the answer.
    assert "`acme-billing` as the umbrella" in messages[3].text
    assert messages[5].text == "Good choice. 👍"


def test_an_edited_question_keeps_both_branches(export: ClaudeAiExport) -> None:
    messages = conversation(export, RATE_LIMIT).messages
    roots = [m for m in messages if m.parent_uuid is None]
    assert [m.text[:40] for m in roots] == [
        "Rate limiting for a B2B API: per API key",
        "Rate limiting for a B2B API (Fastify): p",
    ]
    children = {m.parent_uuid: m for m in messages if m.parent_uuid}
    assert children[roots[0].uuid].text.startswith("Short answer: per API key.")
    assert children[roots[1].uuid].text.startswith("Key it by API key")
    assert len(messages) == 6


def test_artifacts_are_kept_and_web_search_noise_is_not(export: ClaudeAiExport) -> None:
    answer = next(
        m
        for m in conversation(export, RATE_LIMIT).messages
        if m.uuid == "8fc51c54-a21a-4d5f-a068-1e6a7b479301"
    )
    assert answer.text.startswith("Key it by API key, with an IP-based fallback")
    assert "[artifact: ADR 007: Rate limiting keyed by API key]\n# ADR 007" in answer.text
    assert answer.text.endswith("[end of artifact]")
    assert "A low overhead rate limiter" not in answer.text
    assert "Searching the web" not in answer.text
    assert "github.com/fastify" not in answer.text


def test_projects_and_memories_become_documents(export: ClaudeAiExport) -> None:
    documents = {(d.kind, d.source_id): d for d in export.documents}
    assert sorted(documents) == [
        ("account_memory", "memory:00b10e46-1486-40c5-b150-ac265899eb7a"),
        ("project", PROJECT),
        ("project_doc", "c0a6f95b-61db-4f9f-bfb0-e42cd10f6138"),
        ("project_memory", f"memory:{PROJECT}"),
    ]
    project = documents[("project", PROJECT)]
    assert project.title == "acme-api"
    assert project.text.startswith("Backend for the acme billing product")
    assert "Project instructions:\nYou are helping on acme-api" in project.text
    doc = documents[("project_doc", "c0a6f95b-61db-4f9f-bfb0-e42cd10f6138")]
    assert (doc.title, doc.project_name) == ("api-conventions.md", "acme-api")
    assert "RFC 9457 problem+json via sendProblem()" in doc.text
    assert doc.created_at == datetime(2026, 3, 2, 8, 31, 12, 400100, tzinfo=UTC)
    memory = documents[("project_memory", f"memory:{PROJECT}")]
    assert memory.title == "claude.ai memory for project acme-api"
    assert memory.text.startswith("acme-api: errors are problem+json")
    account = documents[("account_memory", "memory:00b10e46-1486-40c5-b150-ac265899eb7a")]
    assert "Uses pnpm." in account.text


def test_a_zip_gives_the_same_export_as_the_folder(export: ClaudeAiExport, tmp_path: Path) -> None:
    archive = tmp_path / "data-2026-04-22.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for name in ("conversations.json", "projects.json", "memories.json"):
            zipped.write(EXPORT / name, f"data-2026-04-22/{name}")
        zipped.writestr("data-2026-04-22/users.json", "[]")
    assert read_claude_ai_export(archive) == export


def test_conversations_json_alone_has_no_documents(export: ClaudeAiExport) -> None:
    alone = read_claude_ai_export(EXPORT / "conversations.json")
    assert alone.conversations == export.conversations
    assert alone.documents == []


def test_unexpected_shapes_of_the_less_certain_files_are_warnings(tmp_path: Path) -> None:
    (tmp_path / "conversations.json").write_bytes((EXPORT / "conversations.json").read_bytes())
    (tmp_path / "projects.json").write_text(json.dumps({"projects": "?"}))
    (tmp_path / "memories.json").write_text(json.dumps(["text", {"project_memories": [1]}]))
    result = read_claude_ai_export(tmp_path)
    assert len(result.conversations) == 3
    assert result.documents == []
    assert len(result.warnings) == 3
    (tmp_path / "memories.json").write_text("{not json")
    assert any("memories.json" in w for w in read_claude_ai_export(tmp_path).warnings)


def test_bare_object_memories_and_odd_messages_are_tolerated(tmp_path: Path) -> None:
    conversations = [
        {
            "uuid": "c1",
            "name": "x",
            "chat_messages": [
                "not a message",
                {"uuid": "m1", "sender": "system", "text": "?"},
                {"uuid": "m2", "sender": "human", "text": "hello", "content": None},
                {"uuid": "m3", "sender": "assistant", "text": "", "content": []},
            ],
        }
    ]
    (tmp_path / "conversations.json").write_text(json.dumps(conversations))
    (tmp_path / "memories.json").write_text(json.dumps({"conversations_memory": "Likes tea."}))
    result = read_claude_ai_export(tmp_path)
    (only,) = result.conversations
    assert [(m.uuid, m.text) for m in only.messages] == [("m2", "hello")]
    assert only.created_at is None
    assert [d.text for d in result.documents] == ["Likes tea."]
    assert len(result.warnings) == 2


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("notes.txt", b"just some text"),
        ("conversations.json", b'{"hello": "world"}'),
        ("conversations.json", b'[{"uuid": "p1", "name": "a project", "docs": []}]'),
    ],
)
def test_a_file_that_is_not_an_export_raises(tmp_path: Path, name: str, content: bytes) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(ExportFormatError):
        read_claude_ai_export(path)


def test_a_folder_or_zip_without_conversations_raises(tmp_path: Path) -> None:
    with pytest.raises(ExportFormatError, match=r"no conversations\.json"):
        read_claude_ai_export(tmp_path)
    archive = tmp_path / "other.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("readme.txt", "hi")
    with pytest.raises(ExportFormatError, match=r"no conversations\.json"):
        read_claude_ai_export(archive)
