"""`claude-memory import --from NAME [PATH ...]`: memories kept by other tools.

One registry maps each NAME to its reader (one module each, server/ingest/from_*.py) and its
default location; one runner stores what any of them read through the same service call as
every other import (`MemoryService.import_files`): secrets redacted, each group (a file, a
claude-mem session, 512 mem0 memories) written in one transaction, and content already stored
counted as a duplicate, so importing the same files again adds nothing. For a source whose
files people edit (instruction files), a file read again after an edit stores its changed
chunks as new memories, each superseding the chunk of the earlier import it replaces.

Before anything is stored, every draft is checked and redacted here as the service will do
it, so a bad item is reported with its file and place (`export.json[3]: content is empty`)
rather than its position in a batch, and `--dry-run` can show what would be stored: counts by
kind and project and a few redacted samples. A dry run does not look in the database, so
content stored by an earlier import is still counted there.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio

from server.core.errors import InvalidInput
from server.core.models.memories import MemoryFilter
from server.core.models.sessions import FileImport
from server.core.validation import MAX_PAGE, prepare_draft
from server.domain.project_rule import names_project
from server.ingest import (
    from_claude_md,
    from_claude_mem,
    from_markdown,
    from_mem0,
    from_trajectories,
)
from server.ingest.importer import ImportFilters, ImportSummary
from server.ingest.tool_reading import ReadContext, ToolReading, ToolRecord
from server.service.memory import MemoryService

BATCH_DRAFTS = 512  # drafts embedded together, as `import --text` does
SAMPLES = 5
SAMPLE_CHARS = 160

Reader = Callable[[Sequence[Path], ReadContext], ToolReading]
DefaultPaths = Callable[[Mapping[str, str], Path, Path], list[Path]]


@dataclass(frozen=True, slots=True)
class ToolSource:
    """One `--from` NAME: its reader and where it looks when no PATH is given.

    `edited_files`: its files are edited by hand, so a file's new version replaces (supersedes)
    what the earlier import stored from it."""

    name: str
    read: Reader
    default_paths: DefaultPaths
    edited_files: bool = False


TOOLS: dict[str, ToolSource] = {
    source.name: source
    for source in (
        ToolSource(
            "claude-mem",
            from_claude_mem.read_claude_mem,
            from_claude_mem.default_paths,
        ),
        ToolSource(
            "claude-md",
            from_claude_md.read_claude_md,
            from_claude_md.default_paths,
            edited_files=True,
        ),
        ToolSource(  # the same reader, by the name of what it reads for every agent
            "instructions",
            from_claude_md.read_claude_md,
            from_claude_md.default_paths,
            edited_files=True,
        ),
        ToolSource(
            "mem0",
            from_mem0.read_mem0,
            from_mem0.default_paths,
        ),
        ToolSource(
            "markdown",
            from_markdown.read_markdown_notes,
            from_markdown.default_paths,
        ),
        ToolSource(
            "trajectories",
            from_trajectories.read_trajectories,
            from_trajectories.default_paths,
        ),
    )
}


@dataclass(frozen=True, slots=True)
class ImportPreview:
    """What a dry run would store: counts by kind and by project, and redacted samples."""

    by_kind: dict[str, int]
    by_project: dict[str, int]
    samples: list[dict[str, object]]

    def as_json(self) -> dict[str, object]:
        return {"by_kind": self.by_kind, "by_project": self.by_project, "samples": self.samples}

    def lines(self) -> list[str]:
        """The human form, for the terminal summary."""

        def counts(values: dict[str, int]) -> str:
            return ", ".join(f"{name or '(no project)'} {n}" for name, n in values.items())

        lines = [f"  by kind: {counts(self.by_kind) or 'none'}"]
        lines.append(f"  by project: {counts(self.by_project) or 'none'}")
        for sample in self.samples:
            where = f"{sample['kind']}, {sample['project'] or 'no project'}, {sample['created_at']}"
            lines.append(f"  sample [{where}]: {sample['content']}")
        return lines


@dataclass(slots=True)
class ToolImportSummary(ImportSummary):
    """An ImportSummary, plus the preview of a dry run."""

    preview: ImportPreview | None = None

    def as_json(self) -> dict[str, object]:
        summary = ImportSummary.as_json(self)
        if self.preview is not None:
            summary["preview"] = self.preview.as_json()
        return summary


def known_tool(name: str) -> ToolSource:
    """The registry entry for `name`; InvalidInput listing the names when there is none."""
    if name not in TOOLS:
        raise InvalidInput(f"--from {name!r} is not known; use one of: {', '.join(TOOLS)}")
    return TOOLS[name]


async def import_from_tool(
    service: MemoryService,
    name: str,
    paths: Sequence[Path],
    *,
    filters: ImportFilters | None = None,
    dry_run: bool = False,
) -> ToolImportSummary:
    """Read `paths` with the named tool's reader and store (or, on a dry run, preview) it."""
    tool = known_tool(name)
    summary = ToolImportSummary(source=name, dry_run=dry_run)
    started = time.monotonic()
    if not paths:
        summary.errors.append(f"--from {name}: give the file or folder to import")
        return summary
    context = ReadContext(project_names=(await service.import_state()).project_names)
    reading = await anyio.to_thread.run_sync(tool.read, list(paths), context)
    summary.files_found = reading.files_found
    summary.files_read = reading.files_read
    summary.files_failed = reading.files_failed
    summary.turns_skipped.update(reading.skipped)
    summary.errors.extend(reading.errors)
    max_chars = service.settings.max_content_chars
    groups = _checked(reading.groups, filters or ImportFilters(), summary, max_chars)
    if dry_run:
        summary.turns_imported = sum(len(group) for group in groups)
        summary.preview = _preview(groups, max_chars)
    else:
        replaced = await _replaced(service, groups, max_chars) if tool.edited_files else []
        await _store(service, groups, summary)
        if replaced:
            summary.links_restored = await service.restore_links(replaced)
    summary.seconds = time.monotonic() - started
    return summary


def _checked(
    groups: list[list[ToolRecord]],
    filters: ImportFilters,
    summary: ImportSummary,
    max_chars: int,
) -> list[list[ToolRecord]]:
    """The records to send: filtered, valid, and each content once (the first is kept)."""
    seen: set[str] = set()
    kept: list[list[ToolRecord]] = []
    for group in groups:
        records = []
        for record in group:
            draft = record.draft
            wanted = filters.project
            if wanted and not names_project(wanted, draft.project, draft.project_path):
                summary.turns_skipped["other_project"] += 1
                continue
            since = filters.since
            if since is not None and draft.created_at is not None and draft.created_at < since:
                summary.turns_skipped["before_since"] += 1
                continue
            try:
                memory, redacted = prepare_draft(draft, max_chars)
            except InvalidInput as exc:
                summary.turns_skipped["invalid"] += 1
                summary.errors.append(f"{record.where}: {exc.message}")
                continue
            if memory.content_hash in seen:
                summary.turns_duplicate += 1
                continue
            seen.add(memory.content_hash)
            if summary.dry_run:
                summary.redactions += redacted
            records.append(record)
        if records:
            kept.append(records)
    return kept


def _preview(groups: list[list[ToolRecord]], max_chars: int) -> ImportPreview:
    kinds: Counter[str] = Counter()
    projects: Counter[str] = Counter()
    samples: list[dict[str, object]] = []
    for record in (r for group in groups for r in group):
        kinds[record.draft.kind] += 1
        projects[record.draft.project] += 1
        if len(samples) < SAMPLES:
            memory, _ = prepare_draft(record.draft, max_chars)  # the redacted text, never raw
            text = " ".join(memory.content.split())
            samples.append(
                {
                    "kind": memory.kind,
                    "project": memory.project,
                    "created_at": memory.created_at.isoformat() if memory.created_at else None,
                    "tags": memory.tags,
                    "content": text if len(text) <= SAMPLE_CHARS else f"{text[:SAMPLE_CHARS]}…",
                    "from": record.where,
                }
            )
    return ImportPreview(dict(kinds.most_common()), dict(projects.most_common()), samples)


async def _replaced(
    service: MemoryService, groups: list[list[ToolRecord]], max_chars: int
) -> list[tuple[str, str, str]]:
    """(new chunk, chunk it replaces, reason) content hashes for files read again after an
    edit: a file's chunks not stored yet, in order, against the current memories its earlier
    import stored that the file no longer holds, in order. A chunk that only moved is stored
    already and links nothing."""
    reading: dict[str, list[str]] = {}  # original file -> its chunks' hashes, in order
    for record in (r for group in groups for r in group):
        file = record.draft.metadata.get("original_file")
        if isinstance(file, str):
            prepared, _ = prepare_draft(record.draft, max_chars)
            reading.setdefault(file, []).append(prepared.content_hash)
    sources = {r.draft.source for group in groups for r in group}
    earlier: dict[str, list[tuple[int, int, str]]] = {}  # file -> (chunk, id, hash)
    for source in sorted(sources):
        offset = 0
        while True:
            page = await service.list_memories(
                MemoryFilter(source=source), limit=MAX_PAGE, offset=offset
            )
            for memory in page.memories:
                file = memory.metadata.get("original_file")
                if file in reading and memory.superseded_by is None:
                    chunk = memory.metadata.get("chunk", 1)
                    number = chunk if isinstance(chunk, int) else 1
                    earlier.setdefault(file, []).append((number, memory.id, memory.content_hash))
            offset += MAX_PAGE
            if offset >= page.total:
                break
    links: list[tuple[str, str, str]] = []
    for file, hashes in reading.items():
        stored = {h for _, _, h in earlier.get(file, [])}
        gone = [h for _, _, h in sorted(earlier.get(file, [])) if h not in set(hashes)]
        new = [h for h in hashes if h not in stored]
        reason = f"{Path(file).name} was edited since its last import"
        links += [(newer, older, reason) for newer, older in zip(new, gone, strict=False)]
    return links


async def _store(
    service: MemoryService, groups: list[list[ToolRecord]], summary: ImportSummary
) -> None:
    """Write in batches of about BATCH_DRAFTS drafts, each group in its own transaction."""
    batch: list[FileImport] = []
    size = 0
    for group in [*groups, None]:
        if group is not None:
            batch.append(FileImport([record.draft for record in group]))
            size += len(group)
        if batch and (group is None or size >= BATCH_DRAFTS):
            for outcome in await service.import_files(batch):
                summary.turns_imported += outcome.saved
                summary.turns_duplicate += outcome.duplicates
                if outcome.invalid:
                    summary.turns_skipped["invalid"] += outcome.invalid
                summary.redactions += outcome.redacted
                summary.errors.extend(outcome.errors)
            batch, size = [], 0
