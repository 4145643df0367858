"""What every `import --from NAME` reader returns, and the small readings they share.

A reader turns another tool's files into `ToolRecord`s (a draft plus where it came from, so an
error can name the file and the item) grouped so that each group is written in one
transaction, and says which files failed and why. Readers do no I/O beyond reading the files
they are given and never touch the database: server/ingest/from_tools.py stores what they read.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from server.core.models.memories import MemoryDraft
from server.ingest.frontmatter import FrontMatter, split_front_matter
from server.ingest.names import project_display_names
from server.ingest.text import chunk_text
from server.ingest.timestamps import parse_timestamp

CHUNK_CHARS = 1_500  # the same cut as `import --text`, so notes from any tool read alike
CHUNK_OVERLAP = 200
# An epoch number above this is in milliseconds (JavaScript's Date.now(), claude-mem's
# `created_at_epoch`); below it, seconds (OpenMemory's list pages).
_MILLISECOND_EPOCHS = 100_000_000_000


@dataclass(frozen=True, slots=True)
class ToolRecord:
    """One memory to store and where it came from (`file: item`), for errors and samples."""

    draft: MemoryDraft
    where: str


@dataclass(frozen=True, slots=True)
class ReadContext:
    """What a reader may know beyond its files: project names already given to directories
    (path -> name), so a directory imported here gets the name its sessions already have."""

    project_names: Mapping[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class ToolReading:
    """A reader's result: records in transaction groups, and what it could not read."""

    groups: list[list[ToolRecord]] = field(default_factory=list)
    files_found: int = 0
    files_read: int = 0
    files_failed: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)

    def fail(self, path: Path | str, reason: str) -> None:
        """A file that could not be read at all: named with the reason, the rest go on."""
        self.files_failed += 1
        self.errors.append(f"{path}: {reason}")

    def add(self, records: list[ToolRecord]) -> None:
        if records:
            self.groups.append(records)

    def markdown(self, file: Path) -> MarkdownFile | None:
        """Read one Markdown file of the import and count it: found, read, failed (named, with
        the reason) or empty; None unless there is a note to store."""
        self.files_found += 1
        try:
            fields, body = read_markdown(file)
            changed = file_time(file)
        except (OSError, ValueError) as exc:
            self.fail(file, str(exc))
            return None
        self.files_read += 1
        if not body:
            self.skipped["empty"] += 1
            return None
        return MarkdownFile(fields, body, changed)


@dataclass(frozen=True, slots=True)
class MarkdownFile:
    """A note file's front matter, body and last change (the date of a note without one)."""

    fields: FrontMatter
    body: str
    changed: datetime


def time_from(value: object) -> datetime | None:
    """An aware UTC time from ISO 8601 text or an epoch number (seconds or milliseconds)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        seconds = value / 1000 if abs(value) >= _MILLISECOND_EPOCHS else value
        try:
            return datetime.fromtimestamp(seconds, tz=UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str) and value.strip().isdigit():
        return time_from(int(value.strip()))
    if isinstance(value, str):
        return parse_timestamp(value.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    return None


def file_time(path: Path) -> datetime:
    """When a file last changed: the date of a note that carries none of its own."""
    return datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)


def read_markdown(path: Path) -> tuple[FrontMatter, str]:
    """(front matter, body) of a Markdown file; ValueError saying what is wrong with it.

    Stricter than `import --text`: a tool's file that is not UTF-8 text, or whose front matter
    never closes (so its fields would be read as the note), is reported, not guessed at.
    """
    raw = path.read_bytes()
    if b"\x00" in raw:
        raise ValueError("not a text file (it contains NUL bytes)")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text (byte {exc.start})") from None
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    fields, body = split_front_matter(text)
    if not fields and text.startswith("---\n") and body == text:
        raise ValueError("front matter opened with --- is never closed")
    return fields, body.strip()


def text_field(fields: Mapping[str, Any], *names: str) -> str:
    """The first of `names` that holds non-empty text, stripped; "" if none does."""
    for name in names:
        value = fields.get(name)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def tag_list(value: object) -> list[str]:
    """Tags from a list or a comma-separated string, `#` dropped, duplicates removed."""
    items = value if isinstance(value, list) else str(value or "").split(",")
    tags: list[str] = []
    for item in items:
        tag = str(item).strip().lstrip("#").strip()
        if tag and tag not in tags:
            tags.append(tag)
    return tags


_HEADING = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.MULTILINE)


def first_heading(body: str) -> str:
    """The first `# Title` line of a body, or ""."""
    match = _HEADING.search(body)
    return match.group(1) if match else ""


def project_names(paths: Iterable[str], known: Mapping[str, str]) -> dict[str, str]:
    """Display names for project directories, by the rule imported sessions follow."""
    return project_display_names(sorted(set(paths)), known)


def note_records(
    *,
    title: str,
    body: str,
    where: str,
    kind: str,
    source: str,
    tags: Sequence[str],
    project: str = "",
    project_path: str = "",
    created_at: datetime | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> list[ToolRecord]:
    """A text cut into chunks of about 1,500 characters, each headed by its title so a chunk
    read alone still says what it belongs to (as `import --text` does)."""
    chunks = [c for c in chunk_text(body, CHUNK_CHARS, CHUNK_OVERLAP) if c.strip()]
    records = []
    for number, chunk in enumerate(chunks, start=1):
        first_line = chunk.lstrip().split("\n", 1)[0]
        heading = f"{title}\n\n" if title and title not in first_line else ""
        extra = {"title": title, "chunk": number, "chunks": len(chunks)} if title else {}
        draft = MemoryDraft(
            content=f"{heading}{chunk}",
            kind=kind,
            source=source,
            project=project,
            project_path=project_path,
            tags=list(tags),
            created_at=created_at,
            metadata={**(metadata or {}), **extra},
        )
        label = where if len(chunks) == 1 else f"{where} (part {number})"
        records.append(ToolRecord(draft, label))
    return records
