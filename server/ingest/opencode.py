"""Read OpenCode sessions (`~/.local/share/opencode/opencode.db`) into typed values.

Returns the same TranscriptChunk as the other agents' readers, so one importer stores them
alike. What OpenCode writes (read from what `opencode-ai` 1.18.33 writes, both in a live
`opencode run` and through `opencode import`; tests/fixtures/opencode/README.md):

- One SQLite file in OpenCode's data folder (`$XDG_DATA_HOME/opencode`, else
  `~/.local/share/opencode`): `opencode.db`, or `opencode-<channel>.db` for builds of other
  release channels; `$OPENCODE_DB` names another file. Tables `session` (id, parent_id for a
  sub-agent's session, directory = the working folder, title, version), `message` (id,
  session_id, time_created in ms, data = the message's JSON without its ids: role, time
  {created, completed}, agent, model, error, summary) and `part` (id, message_id,
  session_id, data: type text | reasoning | tool | file | step-start | step-finish | patch |
  snapshot | agent | subtask | compaction | retry, with the type's fields). Ids sort by time.
- Versions before the SQLite file wrote the same JSON objects as one file each under
  `storage/`; they are not read here (the installed CLI neither reads nor converts them).

Rules chosen here, and why:

- One turn per message: its text parts joined, in order. A part OpenCode marks `synthetic`
  (text it added itself, such as a file an `@` mention pulled in) or `ignored` is not what
  anyone said ("synthetic"); reasoning is the model thinking aloud ("reasoning").
- A message still being written is left for the next read ("in_progress"): an assistant
  message without `time.completed`, or a text part with a start time and no end. Its turn's
  id is the message's id, so reading the session again stores only what is new.
- A compaction summary (an assistant message with `summary: true`) restates the session
  ("compaction_summary").
- A sub-agent runs in its own session whose `parent_id` is the caller's: its prompts were
  written by the main agent ("sidechain_prompt"), its replies are kept with `agent_id` (its
  session id) and `session_id` the parent's, as for Claude Code.
- Tool parts give one event each: `completed` succeeded, `error` failed with its message;
  `pending` and `running` calls are left for the next read.

A session is addressed as `<database file>/<session id>` (the file and the row), so every
agent's sessions are paths to the importer: its read position is the session's size.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from server.agent_facts import opencode as about
from server.core.errors import InvalidInput
from server.core.models.journal import ACTION_CHARS, ERROR_CHARS, OUTPUT_PREVIEW_CHARS, AgentAction
from server.ingest.agent_format import AgentFormat
from server.ingest.discovery import TranscriptFile
from server.ingest.hook_sessions import absolute_path
from server.ingest.opencode_db import (
    SessionRecords,
    SessionRow,
    session_records,
    session_rows,
)
from server.ingest.prose import clean
from server.ingest.tool_calls import action_text, output_excerpt, tool_target
from server.ingest.transcript_chunk import PromptRecord, ToolEvent, TranscriptChunk, Turn

logger = logging.getLogger(__name__)

DB_PATTERN = "opencode*.db"
# OpenCode's tools name what they act on in these input fields, most telling first.
TARGET_FIELDS = ("command", "filePath", "pattern", "path", "url", "description")


def default_opencode_root(environ: Mapping[str, str], home: Path) -> Path:
    """OpenCode's data folder: `$XDG_DATA_HOME/opencode`, else `~/.local/share/opencode`."""
    data = environ.get("XDG_DATA_HOME")
    return (Path(data).expanduser() if data else home / ".local" / "share") / "opencode"


def session_path(db: Path, session_id: str) -> Path:
    """How the importer addresses one session: the database file, then the session's id."""
    return db / session_id


def discover_opencode_sessions(root: Path) -> list[TranscriptFile]:
    """Every session in the OpenCode databases directly under `root`, oldest first."""
    files = []
    for db in sorted(root.glob(DB_PATTERN)):
        if db.is_file():
            files += [
                _file(db, row.id, row.parent_id, row.directory, row.size) for row in _rows(db)
            ]
    return files


def _rows(db: Path) -> list[SessionRow]:
    try:
        return session_rows(db)
    except OSError as exc:  # not a database OpenCode wrote, or one we may not read
        logger.warning("%s; its sessions are left out", exc)
        return []


def _file(
    db: Path, session_id: str, parent_id: str | None, directory: str, size: int
) -> TranscriptFile:
    return TranscriptFile(
        path=session_path(db, session_id),
        kind="subagent" if parent_id else "session",
        project_dir=directory,
        session_id=parent_id,
        agent_id=session_id if parent_id else None,
        agent_type=None,
        parent_tool_use_id=None,
        size=size,
    )


def checked_opencode_session(raw: str) -> Path:
    """A session a hook names: `<data folder>/opencode*.db/<session id>`, the file existing."""
    path = absolute_path(raw)
    db = path.parent
    if not (db.match(DB_PATTERN) and path.name.startswith("ses_")):
        raise InvalidInput(
            "transcript_path must name an OpenCode session: <data folder>/opencode.db/ses_…"
        )
    if not db.is_file():
        raise InvalidInput(f"no OpenCode database at {db}")
    return path


def opencode_session_files(path: Path, session_id: str) -> list[TranscriptFile]:
    """A session and its sub-agents' sessions, each with its size now (one read of the
    database's session list)."""
    db, own_id = path.parent, path.name
    return [
        _file(db, row.id, row.parent_id, row.directory, row.size)
        for row in session_rows(db)
        if row.id == own_id or row.parent_id == own_id
    ]


def read_opencode_session(path: Path, start_offset: int = 0) -> TranscriptChunk:
    """Read one session (`path` as `session_path` makes it) whole.

    `start_offset` is not a place to resume from (a database has none); the chunk's
    `end_offset` is the session's size, so an unchanged session is not read again, and turns
    already stored are recognised by their message ids.
    """
    records = session_records(path.parent, path.name)
    if records is None:
        raise OSError(f"{path}: the session is no longer in OpenCode's database")
    return _SessionReader(records).chunk()


class _SessionReader:
    """One session's messages and parts, read into turns, tool events and prompts."""

    def __init__(self, records: SessionRecords) -> None:
        self.records = records
        self.parent = records.parent_id
        self.turns: list[Turn] = []
        self.events: list[ToolEvent] = []
        self.prompts: list[PromptRecord] = []
        self.actions: list[AgentAction] = []  # what the agent did, for the judge of memory use
        self.skipped: Counter[str] = Counter()
        self.malformed = 0
        self.prompt_key: str | None = None

    def chunk(self) -> TranscriptChunk:
        for number, (message_id, created_ms, data) in enumerate(self.records.messages, start=1):
            info = _json_object(data)
            parts = [_json_object(raw) for raw in self.records.parts.get(message_id, [])]
            if info is None:
                self.malformed += 1
                continue
            self.malformed += sum(part is None for part in parts)
            self._take(message_id, number, info, [p for p in parts if p is not None], created_ms)
        return TranscriptChunk(
            turns=self.turns,
            events=self.events,
            skipped=dict(self.skipped),
            malformed=self.malformed,
            lines_read=len(self.records.messages),
            end_offset=_size(self.records),
            cwd=self.records.directory or None,
            session_id=self.parent or self.records.id,
            title=self.records.title or None,
            version=self.records.version or None,
            prompts=self.prompts,
            actions=self.actions,
        )

    def _take(
        self,
        message_id: str,
        number: int,
        info: Mapping[str, Any],
        parts: list[Mapping[str, Any]],
        created_ms: int,
    ) -> None:
        role = info.get("role")
        times = _mapping(info.get("time"))
        at = _time(times.get("created")) or _time(created_ms)
        if role == "assistant" and times.get("completed") is None and info.get("error") is None:
            self.skipped["in_progress"] += 1
            return
        if any(_unfinished(part) for part in parts):
            self.skipped["in_progress"] += 1
            return
        if role == "assistant":
            self._take_calls(message_id, parts, at)
        text = self._prose(parts)
        if not text:
            return
        if role not in ("user", "assistant"):
            self.skipped["other_role"] += 1
            return
        if role == "assistant" and info.get("summary") is True:
            self.skipped["compaction_summary"] += 1
            return
        if role == "user" and self.parent:
            self.skipped["sidechain_prompt"] += 1
            return
        turn = Turn(
            uuid=message_id,
            session_id=self.parent or self.records.id,
            role=role,
            text=text,
            timestamp=at,
            cwd=self.records.directory or None,
            agent_id=self.records.id if self.parent else None,
            line_number=number,
            is_sidechain=bool(self.parent),
        )
        self.turns.append(turn)
        if role == "user":
            self.prompt_key = message_id
            self.prompts.append(PromptRecord.of_turn(turn, message_id))
        else:
            self.actions.append(AgentAction(self.prompt_key, turn.timestamp, None, turn.text))

    def _prose(self, parts: list[Mapping[str, Any]]) -> str:
        texts = []
        for part in parts:
            kind = part.get("type")
            text = part.get("text")
            if not isinstance(text, str) or not text.strip():
                continue
            if kind == "reasoning":
                self.skipped["reasoning"] += 1
            elif kind != "text":
                continue
            elif part.get("synthetic") is True or part.get("ignored") is True:
                self.skipped["synthetic"] += 1
            else:
                texts.append(clean(text.strip()))
        return "\n\n".join(texts)

    def _take_calls(
        self, message_id: str, parts: list[Mapping[str, Any]], at: datetime | None
    ) -> None:
        for part in parts:
            state = part.get("state")
            if part.get("type") != "tool" or not isinstance(state, Mapping):
                continue
            status = state.get("status")
            if status not in ("completed", "error"):
                continue  # pending or running: the next read sees how it ended
            failed = status == "error"
            output = _text(state.get("output"))
            error = _text(state.get("error"))
            times = _mapping(state.get("time"))
            self.events.append(
                ToolEvent(
                    uuid=message_id,
                    tool_use_id=str(part.get("callID") or part.get("id") or message_id),
                    session_id=self.parent or self.records.id,
                    timestamp=_time(times.get("start")) or at,
                    tool=str(part.get("tool") or "unknown"),
                    target=tool_target(state.get("input"), TARGET_FIELDS),
                    success=not failed,
                    agent_id=self.records.id if self.parent else None,
                    prompt_key=self.prompt_key,
                    output_preview=None if failed else output_excerpt(output, OUTPUT_PREVIEW_CHARS),
                    error=(output_excerpt(error, ERROR_CHARS) or "failed") if failed else None,
                )
            )
            called = action_text(state.get("input"), ACTION_CHARS)
            event = self.events[-1]
            self.actions.append(AgentAction(self.prompt_key, event.timestamp, event.tool, called))


def _size(records: SessionRecords) -> int:
    """The session's size as `opencode_db.session_rows` counts it."""
    parts = sum(len(raw) for raws in records.parts.values() for raw in raws)
    return sum(len(data) for _, _, data in records.messages) + parts


def _unfinished(part: Mapping[str, Any]) -> bool:
    """A text part OpenCode is still streaming: it has a start time and no end yet."""
    times = part.get("time")
    return (
        part.get("type") == "text"
        and isinstance(times, Mapping)
        and times.get("start") is not None
        and times.get("end") is None
    )


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _json_object(raw: str) -> dict[str, Any] | None:
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _time(value: object) -> datetime | None:
    """OpenCode's times: milliseconds since the epoch."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        return None
    try:
        return datetime.fromtimestamp(value / 1000, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


OPENCODE = AgentFormat(
    source=about.NAME,
    label=about.LABEL,
    folder="OpenCode data",
    default_folder="$XDG_DATA_HOME/opencode, else ~/.local/share/opencode (its opencode*.db)",
    default_root=default_opencode_root,
    discover=discover_opencode_sessions,
    read=read_opencode_session,
    hook_path=checked_opencode_session,
    hook_files=opencode_session_files,
)
