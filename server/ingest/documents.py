"""`claude-memory import --claude-ai / --text / --memories`: sources that are read whole.

Unlike transcripts these have no read position: a re-run reads everything again and the
service's content-hash dedup keeps what is already stored from being stored twice.

- claude.ai conversations become raw turns, one session per conversation (source
  `claude-ai`, title from the conversation name, times from the messages); project knowledge
  and memories from the export become notes, chunked like text files.
- Text and Markdown files become notes: chunks of about 1,500 characters with 200 overlap,
  each headed by the note's title so a chunk read alone still says what it is part of, tagged
  from the front matter and dated by it (else by the file).
- A memories file is what `claude-memory export` writes (JSON Lines, or a JSON array): every
  field comes back as it was, so export → import reproduces the same content hashes.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from contextlib import AsyncExitStack
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio

from server.core.errors import ServiceError
from server.core.models.memories import MemoryDraft
from server.core.models.sessions import FileImport, FileProgress
from server.core.timeparse import parse_optional_time
from server.core.validation import prepare_draft
from server.ingest.claude_ai import (
    ClaudeAiConversation,
    ClaudeAiMessage,
    ExportDocument,
    ExportFormatError,
    read_claude_ai_export,
)
from server.ingest.importer import ImportSummary
from server.ingest.text import chunk_text, find_note_files, read_note_file
from server.service.memory import MemoryService

CHUNK_CHARS = 1_500
CHUNK_OVERLAP = 200
BATCH_DRAFTS = 512


async def import_claude_ai(
    service: MemoryService, path: Path, *, min_length: int = 1, dry_run: bool = False
) -> ImportSummary:
    """Conversations as sessions of raw turns; projects and memories as notes."""
    summary = ImportSummary(source="claude-ai", dry_run=dry_run)
    started = time.monotonic()
    try:
        export = await anyio.to_thread.run_sync(read_claude_ai_export, path)
    except (ExportFormatError, OSError) as exc:
        summary.errors.append(f"{path}: {exc}")
        return summary
    summary.files_found = summary.files_read = 1
    summary.errors.extend(f"{path}: {warning}" for warning in export.warnings)
    imports: list[FileImport] = []
    for conversation in export.conversations:
        drafts = []
        for message in conversation.messages:
            if len(message.text) < min_length:
                summary.turns_skipped["too_short"] += 1
                continue
            drafts.append(_conversation_turn(conversation, message))
        summary.sessions += 1
        imports.append(FileImport(drafts, progress=_conversation_progress(conversation)))
    for document in export.documents:
        imports.append(FileImport(_document_notes(document)))
    await _store(service, imports, summary)
    summary.seconds = time.monotonic() - started
    return summary


def _conversation_turn(conversation: ClaudeAiConversation, message: ClaudeAiMessage) -> MemoryDraft:
    return MemoryDraft(
        content=message.text,
        kind="raw",
        source="claude-ai",
        session_id=conversation.uuid,
        role=message.role,
        created_at=message.created_at or conversation.created_at,
        metadata={"record_uuid": message.uuid, "title": conversation.name},
    )


def _conversation_progress(conversation: ClaudeAiConversation) -> FileProgress:
    times = [m.created_at for m in conversation.messages if m.created_at]
    return FileProgress(
        file_path=None,
        session_id=conversation.uuid,
        agent_id=None,
        source="claude-ai",
        project="",
        project_path="",
        bytes_imported=0,
        lines_imported=0,
        main_file=True,
        title=conversation.name or None,
        first_at=min(times, default=conversation.created_at),
        last_at=max(times, default=conversation.updated_at),
    )


def _document_notes(document: ExportDocument) -> list[MemoryDraft]:
    tags = ["claude.ai", document.kind.replace("_", "-")]
    return _note_drafts(
        title=document.title,
        body=document.text,
        tags=tags,
        source="claude-ai",
        project=document.project_name or "",
        created_at=document.created_at,
        metadata={"document": document.source_id},
    )


async def import_text(
    service: MemoryService, paths: Sequence[Path], *, dry_run: bool = False
) -> ImportSummary:
    """Markdown and text files (or folders of them) as chunked notes."""
    summary = ImportSummary(source="notes", dry_run=dry_run)
    started = time.monotonic()
    try:
        files = await anyio.to_thread.run_sync(find_note_files, list(paths))
    except OSError as exc:
        summary.errors.append(str(exc))
        return summary
    summary.files_found = len(files)
    imports: list[FileImport] = []
    for file in files:
        try:
            note = await anyio.to_thread.run_sync(read_note_file, file)
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            summary.files_failed += 1
            summary.errors.append(f"{file}: cannot read: {exc}")
            continue
        summary.files_read += 1
        project = note.metadata.get("project")
        imports.append(
            FileImport(
                _note_drafts(
                    title=note.title,
                    body=note.body,
                    tags=note.tags,
                    source="notes",
                    project=project if isinstance(project, str) else "",
                    created_at=note.created_at,
                    metadata={"path": str(file.resolve())},
                )
            )
        )
    await _store(service, imports, summary)
    summary.seconds = time.monotonic() - started
    return summary


def _note_drafts(
    *,
    title: str,
    body: str,
    tags: list[str],
    source: str,
    project: str,
    created_at: datetime | None,
    metadata: dict[str, Any],
) -> list[MemoryDraft]:
    chunks = [c for c in chunk_text(body, CHUNK_CHARS, CHUNK_OVERLAP) if c.strip()]
    drafts = []
    for number, chunk in enumerate(chunks, start=1):
        first_line = chunk.lstrip().split("\n", 1)[0]
        heading = "" if title and title in first_line else f"{title}\n\n" if title else ""
        drafts.append(
            MemoryDraft(
                content=f"{heading}{chunk}",
                kind="note",
                source=source,
                project=project,
                tags=tags,
                created_at=created_at,
                metadata={**metadata, "title": title, "chunk": number, "chunks": len(chunks)},
            )
        )
    return drafts


async def import_memories(
    service: MemoryService, path: Path, *, dry_run: bool = False
) -> ImportSummary:
    """Memories written by `claude-memory export` (JSON Lines or a JSON array), field for field.

    Deleted memories in the file are left out (counted as `deleted_in_file`); a line that is
    not a memory object is reported with its number and the rest go on.
    """
    summary = ImportSummary(source="memories", dry_run=dry_run)
    started = time.monotonic()
    drafts: list[MemoryDraft] = []
    try:
        records = list(await anyio.to_thread.run_sync(_memory_records, path))
    except (OSError, ValueError) as exc:
        summary.errors.append(f"{path}: {exc}")
        return summary
    summary.files_found = summary.files_read = 1
    for position, record in records:
        try:
            if record.get("deleted_at"):
                summary.turns_skipped["deleted_in_file"] += 1
                continue
            drafts.append(_memory_draft(record))
        except (TypeError, ValueError, ServiceError) as exc:
            summary.turns_skipped["invalid"] += 1
            summary.errors.append(f"{path}:{position}: {exc}")
    imports = [
        FileImport(drafts[i : i + BATCH_DRAFTS]) for i in range(0, len(drafts), BATCH_DRAFTS)
    ]
    await _store(service, imports, summary)
    links = _file_links(records, service.settings.max_content_chars)
    if links and not dry_run:
        summary.links_restored = await service.restore_links(links)
    summary.seconds = time.monotonic() - started
    return summary


def _file_links(
    records: list[tuple[int, dict[str, Any]]], max_chars: int
) -> list[tuple[str, str, str]]:
    """(newer, older, reason) by content hash, for each live record that supersedes another
    live record of the file: ids belong to the exporting store, content is what carries over."""
    hashes: dict[object, str] = {}
    for _, record in records:
        if record.get("id") is None or record.get("deleted_at"):
            continue
        try:
            memory, _ = prepare_draft(_memory_draft(record), max_chars)
        except (TypeError, ValueError, ServiceError):
            continue
        hashes[record["id"]] = memory.content_hash
    return [
        (hashes[record["id"]], hashes[older], str(record.get("supersede_reason") or ""))
        for _, record in records
        if (older := record.get("supersedes")) is not None
        and record.get("id") in hashes
        and older in hashes
    ]


def _memory_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line or position, object) for each record; a bad line is yielded as an empty object."""
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        items = json.loads(text)
        if not isinstance(items, list):
            raise ValueError("expected a JSON array of memories")
        yield from ((i, item if isinstance(item, dict) else {}) for i, item in enumerate(items, 1))
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            item = None
        yield number, item if isinstance(item, dict) else {}


def _memory_draft(record: dict[str, Any]) -> MemoryDraft:
    content = record.get("content")
    if not isinstance(content, str) or not content.strip():
        raise ValueError("not a memory: no content")
    tags = record.get("tags") or []
    metadata = record.get("metadata") or {}
    if not isinstance(tags, list) or not isinstance(metadata, dict):
        raise ValueError("tags must be a list and metadata an object")
    return MemoryDraft(
        content=content,
        tags=[str(tag) for tag in tags],
        source=str(record.get("source") or ""),
        project=str(record.get("project") or ""),
        project_path=str(record.get("project_path") or ""),
        kind=str(record.get("kind") or "manual"),
        session_id=str(record.get("session_id") or "") or None,
        role=str(record.get("role") or "") or None,
        created_at=parse_optional_time(record.get("created_at"), "created_at"),
        metadata=metadata,
        # A team store's export says private or shared; a single-user store's "shared" means
        # nothing, so its memories take the importing user's default.
        visibility=str(record["visibility"]) if record.get("owner") else None,
        # Whatever its kind, source and metadata say, it is an import: never the user's own
        # words to promote (#65 M2).
        server_metadata={"imported_from": "memories"},
    )


async def _store(service: MemoryService, imports: list[FileImport], summary: ImportSummary) -> None:
    """Write in batches of about BATCH_DRAFTS drafts (or count them, on a dry run); a large
    import into a small store builds the vector indexes after (server/service/bulk_indexes.py)."""
    async with AsyncExitStack() as after:
        if not summary.dry_run:
            summary.indexes_built_after = await after.enter_async_context(
                service.vector_indexes_after(sum(len(item.drafts) for item in imports))
            )
        batch: list[FileImport] = []
        size = 0
        for item in [*imports, None]:
            if item is not None:
                batch.append(item)
                size += len(item.drafts)
            if batch and (item is None or size >= BATCH_DRAFTS):
                await _write(service, batch, summary)
                batch, size = [], 0


async def _write(service: MemoryService, batch: list[FileImport], summary: ImportSummary) -> None:
    if summary.dry_run:
        summary.turns_imported += sum(len(item.drafts) for item in batch)
        return
    for outcome in await service.import_files(batch):
        summary.turns_imported += outcome.saved
        summary.turns_duplicate += outcome.duplicates
        summary.turns_skipped["invalid"] += outcome.invalid
        summary.redactions += outcome.redacted
        summary.errors.extend(outcome.errors)
