"""Read plain notes (Markdown or text files) and cut long texts into overlapping chunks.

A note becomes a `NoteDocument`: title, tags and date from its front matter when it has one,
otherwise from its first heading and the file. `chunk_text` cuts a long body into pieces a small
embedding model handles well, on heading and paragraph boundaries, so a chunk reads as a
coherent passage and a code block stays whole.
"""

from __future__ import annotations

import itertools
import logging
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from server.ingest.frontmatter import FrontMatter, split_front_matter
from server.ingest.timestamps import parse_timestamp

__all__ = ["NOTE_SUFFIXES", "NoteDocument", "chunk_text", "find_note_files", "read_note_file"]

logger = logging.getLogger(__name__)

NOTE_SUFFIXES = (".md", ".markdown", ".txt")
# Front matter fields that date a note, most specific first. `updated` beats the file's mtime,
# which only says when the file was last checked out or copied.
_DATE_FIELDS = ("date", "created", "updated")

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class NoteDocument:
    """One note file, ready to be chunked and stored."""

    path: Path
    title: str
    tags: list[str]
    created_at: datetime  # front matter date, else the file's mtime; aware UTC
    body: str  # the text without its front matter
    metadata: FrontMatter  # every front matter field, keys in lower case


def find_note_files(paths: Sequence[Path]) -> list[Path]:
    """The note files named by `paths`: files with a note suffix, folders searched recursively.

    Hidden files and folders are skipped, folders that cannot be read are logged and skipped;
    a path that does not exist raises FileNotFoundError.
    """
    found: set[Path] = set()
    for path in paths:
        if path.is_dir():
            found.update(_notes_under(path))
        elif path.is_file():
            if path.suffix.lower() in NOTE_SUFFIXES:
                found.add(path)
        else:
            raise FileNotFoundError(f"no such file or folder: {path}")
    return sorted(found)


def _notes_under(folder: Path) -> list[Path]:
    def unreadable(err: OSError) -> None:
        logger.warning("cannot list %s: %s", err.filename, err.strerror)

    notes = []
    for current, dirs, files in os.walk(folder, onerror=unreadable):
        dirs[:] = [name for name in dirs if not name.startswith(".")]
        notes += [
            Path(current, name)
            for name in files
            if not name.startswith(".") and Path(name).suffix.lower() in NOTE_SUFFIXES
        ]
    return notes


def _tags(value: str | list[str] | None) -> list[str]:
    items = value if isinstance(value, list) else (value or "").split(",")
    tags: list[str] = []
    for item in items:
        tag = item.strip().lstrip("#").strip()
        if tag and tag not in tags:
            tags.append(tag)
    return tags


def _first_heading(body: str) -> str | None:
    in_fence = False
    for line in body.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        heading = _HEADING.match(line)
        if not in_fence and heading and len(heading.group(1)) == 1 and heading.group(2):
            return heading.group(2)
    return None


def read_note_file(path: Path) -> NoteDocument:
    """Read one note; invalid UTF-8 is replaced, never fatal."""
    text = path.read_bytes().decode("utf-8-sig", "replace")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    metadata, body = split_front_matter(text)
    body = body.strip()
    title = metadata.get("title")
    if not isinstance(title, str) or not title:
        title = _first_heading(body) or path.stem
    created = None
    for name in _DATE_FIELDS:
        value = metadata.get(name)
        created = created or parse_timestamp(value if isinstance(value, str) else None)
    if created is None:
        created = datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)
    return NoteDocument(path, title, _tags(metadata.get("tags")), created, body, metadata)


# --- chunking -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Piece:
    """A run of text that is never cut further: a paragraph, a code block or a part of one."""

    text: str
    heading: bool  # starts with a heading, so a good place to begin a chunk


def _blocks(text: str) -> list[tuple[str, bool]]:
    """(block, is_code) for each paragraph, heading and fenced code block, in order."""
    blocks: list[tuple[str, bool]] = []
    current: list[str] = []
    fence: str | None = None

    def close(is_code: bool = False) -> None:
        if any(line.strip() for line in current):
            blocks.append(("\n".join(current).strip("\n"), is_code))
        current.clear()

    for line in text.split("\n"):
        opener = _FENCE.match(line)
        if fence is not None:
            current.append(line)
            closing = opener is not None and opener.group(1)[0] == fence[0]
            if closing and len(line.strip()) >= len(fence) and not line.strip().lstrip(fence[0]):
                close(is_code=True)
                fence = None
        elif opener:
            close()
            fence = opener.group(1)
            current.append(line)
        elif not line.strip():
            close()
        elif _HEADING.match(line):
            close()
            current.append(line)
            close()
        else:
            current.append(line)
    close(is_code=fence is not None)
    return blocks


def _split(text: str, limit: int, level: int = 0) -> list[str]:
    """`text` in parts of at most `limit` characters: on lines, then sentences, then words."""
    if len(text) <= limit:
        return [text]
    if level == 3:
        return [text[start : start + limit] for start in range(0, len(text), limit)]
    parts = text.split("\n") if level == 0 else (_SENTENCE_END, _SPACE)[level - 1].split(text)
    joiner = "\n" if level == 0 else " "
    pieces = [piece for part in parts for piece in _split(part, limit, level + 1)]
    return _pack(pieces, limit, joiner)


def _pack(parts: list[str], limit: int, joiner: str) -> list[str]:
    packed: list[str] = []
    for part in parts:
        if packed and len(packed[-1]) + len(joiner) + len(part) <= limit:
            packed[-1] += joiner + part
        elif part.strip():
            packed.append(part)
    return packed


def _code_pieces(block: str, limit: int) -> list[str]:
    """A code block too long for one chunk, cut on lines, each part fenced again."""
    lines = block.split("\n")
    opener, marker = lines[0], _FENCE.match(lines[0])
    fence = marker.group(1) if marker else "```"
    closed = len(lines) > 1 and lines[-1].strip().startswith(fence)
    inner = "\n".join(lines[1:-1] if closed else lines[1:])
    room = max(limit - len(opener) - len(fence) - 2, 1)
    return [f"{opener}\n{part}\n{fence}" for part in _split(inner, room)]


def _pieces(text: str, target: int) -> list[_Piece]:
    pieces: list[_Piece] = []
    for block, is_code in _blocks(text):
        heading = bool(_HEADING.match(block)) and not is_code
        if len(block) <= target:
            parts = [block]
        elif is_code:
            parts = _code_pieces(block, target)
        else:
            parts = _split(block, target)
        pieces += [_Piece(part, heading and i == 0) for i, part in enumerate(parts)]
    # Keep a heading with the paragraph it introduces.
    merged: list[_Piece] = []
    for piece in pieces:
        last = merged[-1] if merged else None
        ends_with_heading = (
            last is not None
            and _HEADING.match(last.text.split("\n")[-1]) is not None
            and not _FENCE.match(last.text)
        )
        if last and ends_with_heading and len(last.text) + 2 + len(piece.text) <= target:
            merged[-1] = _Piece(f"{last.text}\n\n{piece.text}", last.heading)
        else:
            merged.append(piece)
    return merged


def _bodies(pieces: list[_Piece], target: int) -> list[str]:
    bodies: list[str] = []
    for piece in pieces:
        if not bodies:
            bodies.append(piece.text)
            continue
        fits = len(bodies[-1]) + 2 + len(piece.text) <= target
        # A new section starts a new chunk once the current one is half full.
        section_break = piece.heading and len(bodies[-1]) >= target // 2
        if fits and not section_break:
            bodies[-1] += "\n\n" + piece.text
        else:
            bodies.append(piece.text)
    return bodies


def _open_fence_at(text: str, position: int) -> str | None:
    """The opening fence line of the code block `position` falls in, if any."""
    opener: str | None = None
    offset = 0
    for line in text.split("\n"):
        if offset > position:
            break
        fence = _FENCE.match(line)
        if fence and offset + len(line) < position:
            opener = None if opener else line
        offset += len(line) + 1
    return opener


def _tail(text: str, overlap: int) -> str:
    """About the last `overlap` characters of `text`, starting at the best boundary found."""
    if overlap <= 0:
        return ""
    floor = len(text) - overlap
    boundaries = (r"\n\s*\n", r"\n", r"(?<=[.!?…])\s+", r"\s+")
    start = None
    for number, pattern in enumerate(boundaries):
        ends = [m.end() for m in re.finditer(pattern, text) if m.end() >= floor]
        if ends and (number == len(boundaries) - 1 or len(text) - ends[0] >= overlap // 2):
            start = ends[0]
            break
    if start is None or start >= len(text):
        start = max(floor, 0)
    tail = text[start:].strip("\n").rstrip()
    opener = _open_fence_at(text, start)
    return f"{opener}\n{tail}" if opener and tail else tail


def chunk_text(text: str, target: int = 1500, overlap: int = 200) -> list[str]:
    """Cut `text` into chunks of about `target` characters, each after the first opening with
    about `overlap` characters carried over from the end of the previous one.

    Cuts fall between sections and paragraphs; a fenced code block is cut (on lines, each part
    fenced again) only when it alone exceeds `target`; a word only when it alone does. No chunk
    exceeds `target + overlap` by more than the blank line after the carried-over text and a
    line reopening a code fence it starts in. Blank text gives no chunks.
    """
    if target <= 0 or not 0 <= overlap < target:
        raise ValueError("chunk_text needs target > 0 and 0 <= overlap < target")
    text = text.strip()
    if not text:
        return []
    if len(text) <= target:
        return [text]
    bodies = _bodies(_pieces(text, target), target)
    chunks = bodies[:1]
    for previous, body in itertools.pairwise(bodies):
        tail = _tail(previous, overlap)
        chunks.append(f"{tail}\n\n{body}" if tail else body)
    return chunks
