"""Read the complete lines of a JSONL session file that is still being written.

Claude Code transcripts, Codex rollouts and Gemini CLI sessions are all appended one JSON
object a line while the agent runs, and all three readers resume from a byte offset. They
share one contract, kept here so it cannot drift between them: a last line without a newline
is left for the next read (it is being written, or was cut by a crash); a line over the byte
limit is skipped without being held in memory; a line that is not a JSON object is malformed,
never fatal; invalid UTF-8 is replaced.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

__all__ = [
    "MAX_LINE_BYTES",
    "RECORD_SHAPE_ERRORS",
    "JsonLines",
    "complete_lines",
    "count_lines_before",
    "lines_before",
    "parse_json_object",
]

# Lines this long are spilled outputs or base64 blobs, never prose; they are skipped without
# being held in memory ("oversize"). Real lines reach a few MB (FORMATS.md §1.10).
MAX_LINE_BYTES = 64 * 1024 * 1024

# What a reader's handling of a record raises when its fields have shapes no version of the
# agent writes: such a record is counted as malformed, so one odd record never stops a file.
RECORD_SHAPE_ERRORS = (TypeError, ValueError, AttributeError, KeyError)


def complete_lines(handle: BinaryIO, max_bytes: int) -> Iterator[tuple[int, bytes | None]]:
    """(size, bytes) of each complete line from the handle's position; bytes is None for a
    line over `max_bytes`.

    Stops at a last line without a newline: it is still being written (or was cut by a crash)
    and is read again, whole, by the next call.
    """
    while True:
        line = handle.readline(max_bytes)
        if line.endswith(b"\n"):
            yield len(line), line
            continue
        if len(line) < max_bytes:
            return
        size = len(line)
        while True:
            piece = handle.readline(max_bytes)
            size += len(piece)
            if piece.endswith(b"\n"):
                break
            if len(piece) < max_bytes:
                return
        yield size, None


def lines_before(
    handle: BinaryIO, end: int, max_bytes: int = MAX_LINE_BYTES
) -> Iterator[tuple[int, bytes | None]]:
    """(1-based line number, bytes) of the complete lines from the handle's position that end
    at or before byte `end`; bytes is None for a line over `max_bytes`.

    For a reader resuming at `end` that must first recover what earlier lines set (a session's
    id, cwd, current prompt) and number its own lines on from them.
    """
    consumed = 0
    for number, (size, raw) in enumerate(complete_lines(handle, max_bytes), start=1):
        if consumed + size > end:
            return
        consumed += size
        yield number, raw


def count_lines_before(path: Path, offset: int) -> int:
    """How many newlines the first `offset` bytes of `path` hold, read in blocks, unparsed."""
    count = 0
    with path.open("rb") as handle:
        while handle.tell() < offset:
            block = handle.read(min(1 << 20, offset - handle.tell()))
            if not block:
                break
            count += block.count(b"\n")
    return count


def parse_json_object(raw: bytes) -> dict[str, Any] | None:
    """The JSON object in `raw`; None when it is not one (invalid UTF-8 is replaced)."""
    try:
        record = json.loads(raw.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


class JsonLines:
    """One pass over the complete lines of a file from `start_offset`, and what it met.

    Iterate once: it yields (1-based line index within this pass, record) for every line that
    holds a JSON object. Blank lines are passed over, lines that are not a JSON object are
    counted in `malformed`, lines over `max_line_bytes` in `skipped["oversize"]`. `lines_read`
    and `end_offset` (just after the last complete line) say where the next read starts.
    """

    def __init__(
        self, handle: BinaryIO, start_offset: int, max_line_bytes: int = MAX_LINE_BYTES
    ) -> None:
        self._handle = handle
        self._start_offset = start_offset
        self._max_line_bytes = max_line_bytes
        self.end_offset = start_offset
        self.lines_read = 0
        self.malformed = 0
        self.skipped: Counter[str] = Counter()

    def __iter__(self) -> Iterator[tuple[int, dict[str, Any]]]:
        self._handle.seek(self._start_offset)
        for size, raw in complete_lines(self._handle, self._max_line_bytes):
            self.end_offset += size
            self.lines_read += 1
            if raw is None:
                self.skipped["oversize"] += 1
                continue
            if not raw.strip():
                continue
            record = parse_json_object(raw)
            if record is None:
                self.malformed += 1
                continue
            yield self.lines_read, record

    def take_all(self, take: Callable[[dict[str, Any], int], None], first_line: int = 0) -> None:
        """Hand every record to `take` with its line number in the file (`first_line` + index).

        A record `take` rejects with one of RECORD_SHAPE_ERRORS is counted in `malformed`.
        """
        for index, record in self:
            try:
                take(record, first_line + index)
            except RECORD_SHAPE_ERRORS:
                self.malformed += 1
