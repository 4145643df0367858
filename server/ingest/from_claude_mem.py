"""`import --from claude-mem`: claude-mem's observations and session summaries.

claude-mem (github.com/thedotmack/claude-mem) keeps what its worker distilled from Claude Code
sessions in SQLite (`~/.claude-mem/claude-mem.db`): observations (a type such as `bugfix` or
`decision`, title, subtitle, narrative, facts and concepts as JSON arrays, the files read and
modified) and one summary per session (request, investigated, learned, completed, next steps).
Both are already distilled, so they become `distilled` memories, one transaction per claude-mem
session, dated by `created_at_epoch` and filed under the row's project (or the project a
worktree was merged into).

Older databases read too: before migration 17 the session columns were `sdk_session_id` and
`claude_session_id`; before migration 8 an observation was a `text` and a `type`; the first
schema kept `memories` and `overviews` instead. Whatever a row lacks is simply not rendered.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from server.core.models.memories import MemoryDraft
from server.ingest.tool_reading import ReadContext, ToolReading, ToolRecord, time_from
from server.store import claude_mem as db

SOURCE = "claude-mem"
KIND = "distilled"
DATABASE_NAME = "claude-mem.db"
MAX_LISTED_FILES = 50  # files read/modified kept in metadata; the rest are counted
_SUMMARY_PARTS = (
    ("investigated", "Investigated"),
    ("learned", "Learned"),
    ("completed", "Completed"),
    ("next_steps", "Next steps"),
    ("notes", "Notes"),
)


def default_paths(environ: Mapping[str, str], home: Path, cwd: Path) -> list[Path]:
    """claude-mem's database in its default data folder."""
    return [home / ".claude-mem" / DATABASE_NAME]


def read_claude_mem(paths: Sequence[Path], context: ReadContext) -> ToolReading:
    """Every observation and summary of each database (a folder means its claude-mem.db)."""
    reading = ToolReading()
    for given in paths:
        path = given / DATABASE_NAME if given.is_dir() else given
        reading.files_found += 1
        if not path.is_file():
            reading.fail(path, "no such file (claude-mem keeps ~/.claude-mem/claude-mem.db)")
            continue
        try:
            conn = db.open_read_only(path)
        except sqlite3.DatabaseError as exc:
            reading.fail(path, f"not a claude-mem database: {exc}")
            continue
        try:
            _read_database(conn, path, reading)
        except sqlite3.Error as exc:
            reading.fail(path, f"cannot read the database: {exc}")
        finally:
            conn.close()
    return reading


def _read_database(conn: sqlite3.Connection, path: Path, reading: ToolReading) -> None:
    present = db.tables(conn)
    known = {"observations", "session_summaries", "memories", "overviews"} & present
    if not known:
        reading.fail(path, "not a claude-mem database: no observations or session_summaries table")
        return
    claude_sessions = _claude_session_ids(db.sessions(conn)) if "sdk_sessions" in present else {}
    rows: list[tuple[str, dict[str, Any]]] = []
    if "observations" in present:
        rows += [("observation", row) for row in db.observations(conn)]
    if "session_summaries" in present:
        rows += [("summary", row) for row in db.session_summaries(conn)]
    if "memories" in present:
        rows += [("memory", row) for row in db.legacy_memories(conn)]
    if "overviews" in present:
        rows += [("overview", row) for row in db.legacy_overviews(conn)]
    by_session: dict[str, list[ToolRecord]] = {}
    for table, row in rows:
        where = f"{path}: {table} {row.get('id')}"
        content = _summary_text(row) if table in ("summary", "overview") else _observation_text(row)
        if not content:
            reading.skipped["empty"] += 1
            continue
        session = _session_of(row)
        draft = MemoryDraft(
            content=content,
            kind=KIND,
            source=SOURCE,
            project=str(row.get("merged_into_project") or row.get("project") or ""),
            tags=_tags(table, row),
            session_id=claude_sessions.get(session) or session or None,
            created_at=time_from(row.get("created_at_epoch")) or time_from(row.get("created_at")),
            metadata=_metadata(table, row, path, session),
        )
        by_session.setdefault(session, []).append(ToolRecord(draft, where))
    reading.files_read += 1
    for records in by_session.values():
        reading.add(records)


def _session_of(row: Mapping[str, Any]) -> str:
    """claude-mem's own session id of a row, under any of the names it has had."""
    for name in ("memory_session_id", "sdk_session_id", "session_id"):
        if row.get(name):
            return str(row[name])
    return ""


def _claude_session_ids(rows: list[dict[str, Any]]) -> dict[str, str]:
    """claude-mem session id -> Claude Code's session id, so memories join their transcript."""
    ids = {}
    for row in rows:
        own = row.get("memory_session_id") or row.get("sdk_session_id")
        claude = row.get("content_session_id") or row.get("claude_session_id")
        if own and claude:
            ids[str(own)] = str(claude)
    return ids


def _json_list(value: object) -> list[str]:
    """A JSON array column (facts, concepts, files) as strings; plain text as one item."""
    if value is None or value == "":
        return []
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return [value.strip()] if value.strip() else []
        value = parsed
    items = value if isinstance(value, list) else [value]
    return [str(item).strip() for item in items if item is not None and str(item).strip()]


def _text(row: Mapping[str, Any], name: str) -> str:
    value = row.get(name)
    return str(value).strip() if value is not None else ""


def _observation_text(row: Mapping[str, Any]) -> str:
    """Title and subtitle, the narrative (or the `text` column, the whole observation before
    migration 8 and in the first schema), then the facts as a list."""
    heading = "\n".join(p for p in (_text(row, "title"), _text(row, "subtitle")) if p)
    body = _text(row, "narrative") or _text(row, "text")
    facts = "\n".join(f"- {fact}" for fact in _json_list(row.get("facts")))
    return "\n\n".join(block for block in (heading, body, facts) if block)


def _summary_text(row: Mapping[str, Any]) -> str:
    """A session summary as labelled lines; a first-schema overview is its `content`."""
    if _text(row, "content"):
        return _text(row, "content")
    lines = [f"Session summary: {_text(row, 'request')}"] if _text(row, "request") else []
    lines += [f"{label}: {_text(row, name)}" for name, label in _SUMMARY_PARTS if _text(row, name)]
    if lines and not lines[0].startswith("Session summary"):
        lines.insert(0, "Session summary")
    return "\n".join(lines)


def _tags(table: str, row: Mapping[str, Any]) -> list[str]:
    tags = [SOURCE]
    if table in ("summary", "overview"):
        tags.append("session-summary")
    elif _text(row, "type"):
        tags.append(_text(row, "type"))
    keywords = str(row.get("keywords") or "").split(",")  # first schema: comma-separated
    for concept in [*_json_list(row.get("concepts")), *(k.strip() for k in keywords)]:
        if concept and concept not in tags and len(concept) <= 100:
            tags.append(concept)
    return tags


def _metadata(table: str, row: Mapping[str, Any], path: Path, session: str) -> dict[str, Any]:
    """Provenance (database, table and id, claude-mem session) and the files it names."""
    metadata: dict[str, Any] = {
        "original_id": f"{table}:{row.get('id')}",
        "original_file": str(path),
    }
    if session:
        metadata["claude_mem_session"] = session
    for name in ("prompt_number", "platform_source", "generated_by_model"):
        if row.get(name) not in (None, ""):
            metadata[name] = row[name]
    for name in ("files_read", "files_modified", "files_edited", "files_touched"):
        files = _json_list(row.get(name))
        if files:
            metadata[name] = files[:MAX_LISTED_FILES]
            if len(files) > MAX_LISTED_FILES:
                metadata[f"{name}_count"] = len(files)
    return metadata
