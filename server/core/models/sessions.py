"""Imported sessions and the importer's files, read positions and turns."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from server.core.models.journal import JournalPrompt, SessionEvent, ToolOutcome
from server.core.models.memories import MemoryDraft


@dataclass(frozen=True, slots=True)
class ImportedSession:
    """A session the importers have read, with how far they got and what learning did."""

    session_id: str
    title: str | None
    source: str
    project: str
    project_path: str
    file_path: str | None
    bytes_imported: int
    lines_imported: int
    message_count: int
    first_message_at: datetime | None
    last_message_at: datetime | None
    imported_at: datetime
    distill_state: str
    distill_failures: int
    distill_last_error: str | None
    distilled_at: datetime | None
    signals_state: str
    behavior_state: str


@dataclass(frozen=True, slots=True)
class SessionPage:
    total: int
    limit: int
    offset: int
    sessions: list[ImportedSession]
    by_source: dict[str, int]


@dataclass(frozen=True, slots=True)
class FileProgress:
    """How far an importer has read one transcript file, and the session it belongs to.

    `main_file` is True for the session's own transcript (not a sub-agent's), whose offsets
    and title the session row shows. `file_path` is None for sessions that do not come from a
    file read by offset (a claude.ai conversation): only the session row is written.
    """

    file_path: str | None
    session_id: str
    agent_id: str | None
    source: str
    project: str
    project_path: str
    bytes_imported: int
    lines_imported: int
    main_file: bool
    title: str | None
    first_at: datetime | None
    last_at: datetime | None


@dataclass(frozen=True, slots=True)
class FileImport:
    """One file's new turns, events and progress: written in one transaction, or not at all.

    `results` carries tool outcomes for calls read in an earlier run (tool_use_id -> outcome).
    `prompts` are the file's human prompts for the journal. `progress` is None for sources
    without sessions (notes, memory files).
    """

    drafts: list[MemoryDraft]
    events: list[SessionEvent] = field(default_factory=list)
    results: dict[str, ToolOutcome] = field(default_factory=dict)
    progress: FileProgress | None = None
    prompts: list[JournalPrompt] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class FileImportOutcome:
    saved: int
    duplicates: int
    invalid: int
    redacted: int
    errors: list[str]


@dataclass(frozen=True, slots=True)
class ImportState:
    """What earlier imports left: file path -> (bytes, lines) read; project path -> name."""

    offsets: dict[str, tuple[int, int]]
    project_names: dict[str, str]


@dataclass(frozen=True, slots=True)
class PendingSession:
    """A session waiting for distillation; `new_turns` have not been distilled yet, `source` is
    the agent it came from (each distilled memory keeps it as `metadata.agent`)."""

    session_id: str
    source: str
    project: str
    title: str | None
    distill_failures: int
    new_turns: int
    owner_id: int | None = None  # the user whose session it is; distillation acts for them


@dataclass(frozen=True, slots=True)
class StoredTurn:
    """A raw turn as the learning jobs read it."""

    id: int
    role: str
    content: str
    created_at: datetime
