"""`import --from markdown`: folders of Markdown notes with front matter (basic-memory, Obsidian).

Like `import --text`, each note becomes chunked `note` memories headed by its title; what this
reader adds is what those tools put in their files:
- front matter `title`, `tags` (a list or `a, b`), `project`; dates from `created` or `date`,
  then `modified` / `updated` (basic-memory writes `created`/`modified`), else the file's time;
  basic-memory's `permalink` and `type`, Obsidian's `aliases`, kept in metadata;
- Obsidian's inline `#tags` (outside code) join the front matter tags;
- `[[wiki links]]` (basic-memory relations, Obsidian links) are listed in `metadata.links`.
Hidden folders (`.obsidian`, `.trash`, `.git`) are skipped. A file that is not UTF-8 text or
whose front matter never closes is reported by name, and the other notes are imported.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from server.ingest.frontmatter import FrontMatter
from server.ingest.text import find_note_files
from server.ingest.tool_reading import (
    ReadContext,
    ToolReading,
    first_heading,
    note_records,
    tag_list,
    text_field,
    time_from,
)

SOURCE = "markdown"
KIND = "note"
SUFFIXES = (".md", ".markdown")
MAX_LINKS = 50
_DATE_FIELDS = ("created", "date", "modified", "updated")
_FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1", re.MULTILINE | re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
# `#tag` as Obsidian reads it: after a space or at a line start; letters, digits, `_`, `-` and
# `/` (nesting), at least one of them not a digit (`#1984` is not a tag, nor is `# Title`).
_INLINE_TAG = re.compile(r"(?:^|(?<=\s))#([\w/-]*[^\W\d][\w/-]*)", re.MULTILINE)
_WIKI_LINK = re.compile(r"\[\[([^\]|#\n]+)(?:[#|][^\]\n]*)?\]\]")


def default_paths(environ: Mapping[str, str], home: Path, cwd: Path) -> list[Path]:
    """basic-memory's default project folder, `~/basic-memory`; an Obsidian vault is named."""
    return [home / "basic-memory"]


def read_markdown_notes(paths: Sequence[Path], context: ReadContext) -> ToolReading:
    """Every Markdown note under the folders (or the files) given, one transaction each."""
    reading = ToolReading()
    files: list[Path] = []
    for path in paths:
        try:
            files += [f for f in find_note_files([path]) if f.suffix.lower() in SUFFIXES]
        except FileNotFoundError:
            reading.fail(path, "no such file or folder")
    for file in sorted(set(files)):
        note = reading.markdown(file)
        if note is None:
            continue
        fields, body = note.fields, note.body
        created = _created(fields) or note.changed
        title = text_field(fields, "title") or first_heading(body) or file.stem
        reading.add(
            note_records(
                title=title,
                body=body,
                where=str(file),
                kind=KIND,
                source=SOURCE,
                tags=_tags(fields, body),
                project=text_field(fields, "project"),
                created_at=created,
                metadata=_metadata(fields, body, file),
            )
        )
    return reading


def _created(fields: FrontMatter) -> datetime | None:
    for name in _DATE_FIELDS:
        value = fields.get(name)
        moment = time_from(value) if isinstance(value, str) else None
        if moment is not None:
            return moment
    return None


def _prose(body: str) -> str:
    """The body without code, where `#` and `[[` mean something else."""
    return _INLINE_CODE.sub(" ", _FENCE.sub(" ", body))


def _tags(fields: FrontMatter, body: str) -> list[str]:
    tags = tag_list(fields.get("tags"))
    for tag in _INLINE_TAG.findall(_prose(body)):
        if tag not in tags:
            tags.append(tag)
    return tags


def _metadata(fields: FrontMatter, body: str, file: Path) -> dict[str, Any]:
    """Provenance (path, and basic-memory's permalink as the original id) and the links."""
    metadata: dict[str, Any] = {"original_file": str(file.resolve())}
    permalink = text_field(fields, "permalink")
    if permalink:
        metadata["original_id"] = permalink
    if text_field(fields, "type"):
        metadata["type"] = text_field(fields, "type")
    aliases = tag_list(fields.get("aliases"))
    if aliases:
        metadata["aliases"] = aliases
    links: list[str] = []
    for target in _WIKI_LINK.findall(_prose(body)):
        if target.strip() not in links:
            links.append(target.strip())
    if links:
        metadata["links"] = links[:MAX_LINKS]
    return metadata
