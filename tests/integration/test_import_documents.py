"""Importing claude.ai exports, notes and memory files, and the export -> import round trip."""

from __future__ import annotations

import zipfile
from pathlib import Path

from server.core.models.memories import Memory, MemoryFilter
from server.ingest.documents import import_claude_ai, import_memories, import_text
from server.service.memory import MemoryService
from tests.fixture_sessions import SHARED_FIXTURES

CLAUDE_AI = SHARED_FIXTURES / "claude-ai"
NOTES = SHARED_FIXTURES / "notes"
HANDBOOK = NOTES / "acme-api-handbook.md"


async def all_memories(
    service: MemoryService, kind: str | None = None, source: str | None = None
) -> list[Memory]:
    page = await service.list_memories(MemoryFilter(kind=kind, source=source), limit=500)
    return sorted(page.memories, key=lambda m: (m.created_at, m.id))


async def test_claude_ai_conversations_become_titled_sessions_of_raw_turns(
    service: MemoryService,
) -> None:
    summary = await import_claude_ai(service, CLAUDE_AI)

    assert summary.errors == []
    assert summary.sessions == 3
    sessions = {s.title: s for s in (await service.sessions(source="claude-ai")).sessions}
    assert set(sessions) == {
        "Keyset pagination with timestamp ties",
        "Naming the invoice export CLI",
        "Rate limiting: per key vs per IP",
    }
    naming = sessions["Naming the invoice export CLI"]
    assert naming.first_message_at is not None
    assert naming.first_message_at.isoformat() == "2024-09-18T07:41:03.112954+00:00"
    turns = await all_memories(service, kind="raw", source="claude-ai")
    notes = await all_memories(service, kind="note", source="claude-ai")
    assert len(turns) == 16  # every message of the three conversations, both edit branches
    assert summary.turns_imported == len(turns) + len(notes)
    first = turns[0]
    assert first.created_at.isoformat() == "2024-09-18T07:41:03.112954+00:00"
    assert (first.role, first.session_id) == ("user", naming.session_id)
    assert first.metadata["title"] == "Naming the invoice export CLI"
    assert any("acme-billing" in t.content for t in turns)
    assert {t.role for t in turns} == {"user", "assistant"}


async def test_claude_ai_projects_and_memories_become_tagged_notes(
    service: MemoryService,
) -> None:
    await import_claude_ai(service, CLAUDE_AI)

    notes = await all_memories(service, kind="note", source="claude-ai")
    tags = {tag for note in notes for tag in note.tags}
    assert {"claude.ai", "project", "project-doc", "account-memory", "project-memory"} <= tags
    doc = next(n for n in notes if "project-doc" in n.tags)
    assert doc.metadata["title"] == "api-conventions.md"
    assert doc.project == "acme-api"


async def test_claude_ai_zip_export_imports_the_same_and_reimport_adds_nothing(
    service: MemoryService, tmp_path: Path
) -> None:
    archive = tmp_path / "data-2026-04-30.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        for member in ("conversations.json", "projects.json", "memories.json"):
            bundle.write(CLAUDE_AI / member, member)

    from_zip = await import_claude_ai(service, archive)
    from_folder = await import_claude_ai(service, CLAUDE_AI)

    assert from_zip.turns_imported > 0
    assert from_folder.turns_imported == 0
    assert from_folder.turns_duplicate == from_zip.turns_imported


async def test_not_an_export_is_a_clear_error(service: MemoryService, tmp_path: Path) -> None:
    bogus = tmp_path / "conversations.json"
    bogus.write_text('{"hello": "world"}')

    summary = await import_claude_ai(service, bogus)

    assert summary.turns_imported == 0
    assert summary.nothing_imported_and_failed
    assert str(bogus) in summary.errors[0]


async def test_notes_are_chunked_with_titles_tags_and_dates(service: MemoryService) -> None:
    summary = await import_text(service, [NOTES])

    assert (summary.files_found, summary.files_read) == (2, 2)
    chunks = [
        m
        for m in await all_memories(service, kind="note", source="notes")
        if m.metadata["path"] == str(HANDBOOK.resolve())
    ]
    body_chars = len(HANDBOOK.read_text(encoding="utf-8"))
    assert len(chunks) >= body_chars // 1700
    assert [c.metadata["chunk"] for c in sorted(chunks, key=lambda c: c.metadata["chunk"])] == list(
        range(1, len(chunks) + 1)
    )
    for chunk in chunks:
        assert chunk.tags == ["acme", "backend", "runbook", "postgres"]
        assert chunk.created_at.date().isoformat() == "2026-04-22"
        assert chunk.metadata["title"] == "acme-api — engineering handbook"
        assert chunk.content.startswith("acme-api — engineering handbook") or chunk.content.lstrip(
            "# "
        ).startswith("acme-api — engineering handbook")
        assert len(chunk.content) <= 1_500 + 200 + 100
    preferences = [
        m for m in await all_memories(service, kind="note") if "pnpm everywhere" in m.content
    ]
    assert len(preferences) == 1


async def test_every_sentence_of_a_note_is_stored_somewhere(service: MemoryService) -> None:
    await import_text(service, [HANDBOOK])

    stored = " ".join(m.content for m in await all_memories(service, kind="note"))
    words = set(HANDBOOK.read_text(encoding="utf-8").split("---", 2)[2].split())
    missing = [word for word in words if word not in stored]
    assert missing == []


async def test_reimporting_notes_adds_nothing(service: MemoryService) -> None:
    first = await import_text(service, [NOTES])
    second = await import_text(service, [NOTES])

    assert first.turns_imported > 0
    assert second.turns_imported == 0
    assert second.turns_duplicate == first.turns_imported


async def test_a_missing_note_path_is_reported(service: MemoryService, tmp_path: Path) -> None:
    summary = await import_text(service, [tmp_path / "nope.md"])

    assert summary.nothing_imported_and_failed
    assert "nope.md" in summary.errors[0]


async def export_then_empty(service: MemoryService, path: Path) -> Path:
    """Export every memory to `path` as JSON Lines, then empty the store."""
    with path.open("w", encoding="utf-8") as handle:
        async for chunk in await service.export(MemoryFilter(), "jsonl"):
            handle.write(chunk)
    async with service.pool.connection() as conn:
        await conn.execute("TRUNCATE memories, imported_sessions RESTART IDENTITY CASCADE")
    return path


async def test_export_then_import_memories_reproduces_the_same_content_hashes(
    service: MemoryService, tmp_path: Path
) -> None:
    await import_claude_ai(service, CLAUDE_AI)
    await import_text(service, [NOTES])
    await service.save(
        "Deploy token ghp_abcdefghijklmnopqrstuvwxyz0123456789 lives in 1Password.",
        kind="preference",
        project="acme-api",
        tags=["secrets"],
    )
    before = {m.content_hash: m for m in await all_memories(service)}
    exported = await export_then_empty(service, tmp_path / "memories.jsonl")

    summary = await import_memories(service, exported)

    after = {m.content_hash: m for m in await all_memories(service)}
    assert summary.turns_imported == len(before)
    assert set(after) == set(before)
    for content_hash, memory in after.items():
        original = before[content_hash]
        assert (memory.kind, memory.tags, memory.project, memory.role, memory.session_id) == (
            original.kind,
            original.tags,
            original.project,
            original.role,
            original.session_id,
        )
        assert memory.created_at == original.created_at


async def test_export_then_import_memories_keeps_the_versions_of_a_fact(
    service: MemoryService, tmp_path: Path
) -> None:
    """Links made by the rules and by hand both come back, by content, not by the old ids;
    the hand link replaces the one the rules would make at import."""
    first = await service.save("The minimum Node version for the build is 18.", project="acme")
    second = await service.save("We bumped the minimum Node version to 20.", project="acme")
    plan = await service.save("Releases are cut from the develop branch.", project="acme")
    hotfix = await service.save("Ship hotfixes straight from a tag.", project="acme")
    await service.update(hotfix.id, supersedes=plan.id)
    assert (await service.get(second.id)).supersedes == first.id
    exported = await export_then_empty(service, tmp_path / "memories.jsonl")
    # Imported in another order, so every id differs from the exporting store's.
    lines = exported.read_text(encoding="utf-8").splitlines()
    exported.write_text("\n".join(reversed(lines)) + "\n", encoding="utf-8")

    summary = await import_memories(service, exported)

    by_content = {m.content: m for m in await all_memories(service)}
    node = by_content["We bumped the minimum Node version to 20."]
    tag = by_content["Ship hotfixes straight from a tag."]
    assert node.supersedes == by_content["The minimum Node version for the build is 18."].id
    assert tag.supersedes == by_content["Releases are cut from the develop branch."].id
    assert tag.supersede_reason == "set by hand"
    assert summary.links_restored >= 1


async def test_import_memories_reports_bad_lines_and_keeps_the_good_ones(
    service: MemoryService, tmp_path: Path
) -> None:
    path = tmp_path / "memories.jsonl"
    path.write_text(
        '{"content": "Conventional Commits, subject under 72 chars.", "kind": "preference"}\n'
        "this is not json\n"
        '{"content": "", "kind": "note"}\n'
        '{"content": "Old and deleted.", "deleted_at": "2026-01-01T00:00:00+00:00"}\n'
        '{"content": "Bad date here, still a sentence.", "created_at": "not a date"}\n'
    )

    summary = await import_memories(service, path)

    assert summary.turns_imported == 1
    assert summary.turns_skipped["deleted_in_file"] == 1
    assert summary.turns_skipped["invalid"] == 3
    lines = [error.removeprefix(f"{path}:").split(":")[0] for error in summary.errors]
    assert lines == ["2", "3", "5"]
