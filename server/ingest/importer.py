"""`claude-memory import --claude-code / --codex / --gemini`: agent sessions to raw-turn
memories, incrementally.

One importer for every agent: server/ingest/agents.py says how each agent's files are found
and read, and every reader returns the same chunk, so turns, tool calls and prompts of all
agents are stored alike, each with its agent as `source`.

Each transcript file is read from where the last run stopped (`imported_files`), so a session
still being written is picked up line by line and an unchanged file costs one `stat`. Read
positions and session rows are the owner's the run acts for (`--user`, or nobody): another
user's import of the same file neither advances nor claims them (#54). Turns of
many files are embedded in one batch (`BATCH_TURNS`), then each file's turns, tool events,
journal prompts and new read position are written in one transaction: a crash leaves every file
either imported up to a recorded point or untouched. Dedup is by record uuid and content hash,
in the service.

A run that will more than double the store (a first import, mostly) builds the vector indexes
once, when it ends, instead of growing them turn by turn (server/service/bulk_indexes.py). How
many turns are coming is known only roughly before the files are read: when the first batch
is full, the turns read so far per byte read, times the bytes still unread, is the estimate.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import anyio

from server.core.errors import ServiceError
from server.core.models.journal import JournalPrompt, SessionEvent
from server.core.models.memories import MemoryDraft
from server.core.models.receipts import SessionWork
from server.core.models.sessions import FileImport, FileProgress
from server.domain.project_rule import names_project
from server.ingest.agent_format import AgentFormat
from server.ingest.claude_code import (
    CLAUDE_CODE,
    PromptRecord,
    ToolEvent,
    TranscriptChunk,
    TranscriptFile,
    Turn,
    project_display_names,
)
from server.learning.child import is_child_folder
from server.learning.corrections import correction_cue
from server.service.memory import MemoryService

logger = logging.getLogger(__name__)

CORRECTION_CONTEXT_CHARS = 2_000  # of the turn before a prompt, for its correction cue

BATCH_TURNS = 512  # turns embedded together; large enough to keep the model busy

Progress = Callable[[int, int], None]


@dataclass(slots=True)
class ImportSummary:
    """What a run did, for the terminal and for `--json`."""

    source: str
    dry_run: bool
    files_found: int = 0
    files_read: int = 0
    files_unchanged: int = 0
    files_failed: int = 0
    sessions: int = 0
    turns_imported: int = 0
    turns_duplicate: int = 0
    turns_skipped: Counter[str] = field(default_factory=Counter)
    malformed_lines: int = 0
    events: int = 0
    prompts: int = 0  # human prompts read for the journal
    redactions: int = 0
    links_restored: int = 0  # supersession links an export file carried (import --memories)
    indexes_built_after: bool = False  # a large import: vector indexes built once, at the end
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def as_json(self) -> dict[str, object]:
        return {
            "source": self.source,
            "dry_run": self.dry_run,
            "files_found": self.files_found,
            "files_read": self.files_read,
            "files_unchanged": self.files_unchanged,
            "files_failed": self.files_failed,
            "sessions": self.sessions,
            "turns_imported": self.turns_imported,
            "turns_duplicate": self.turns_duplicate,
            "turns_skipped": {k: n for k, n in sorted(self.turns_skipped.items()) if n},
            "malformed_lines": self.malformed_lines,
            "events": self.events,
            "prompts": self.prompts,
            "redactions": self.redactions,
            "links_restored": self.links_restored,
            "indexes_built_after": self.indexes_built_after,
            "errors": self.errors,
            "seconds": round(self.seconds, 3),
        }

    @property
    def nothing_imported_and_failed(self) -> bool:
        """The run should exit non-zero: something failed and nothing at all got in."""
        return bool(self.errors) and self.turns_imported == 0 and self.files_read == 0


@dataclass(frozen=True, slots=True)
class ImportFilters:
    """Which turns a run takes. A run that leaves turns out does not advance past them."""

    project: str | None = None
    since: datetime | None = None
    min_length: int = 50


class SessionImporter:
    """One run over one agent's sessions folder (Claude Code's projects root by default)."""

    def __init__(
        self,
        service: MemoryService,
        filters: ImportFilters,
        *,
        agent: AgentFormat = CLAUDE_CODE,
        dry_run: bool = False,
        progress: Progress | None = None,
    ) -> None:
        self.service = service
        self.filters = filters
        self.agent = agent
        self.dry_run = dry_run
        self.progress = progress
        self.summary = ImportSummary(source=agent.source, dry_run=dry_run)
        self._pending: list[FileImport] = []
        self._work: list[SessionWork] = []  # what the agent did, to judge receipts by
        self._pending_turns = 0
        self._names: dict[str, str] = {}
        self._sessions: set[str] = set()
        self._bytes_unread = 0  # by this run, when it starts
        self._bytes_read = 0
        self._indexes_planned = False
        self._after_run: AsyncExitStack | None = None

    async def run(self, root: Path) -> ImportSummary:
        """Import every session file the agent's discovery finds under `root`."""
        started = time.monotonic()
        if not root.is_dir():
            self.summary.errors.append(f"{root} is not a folder of {self.agent.folder}")
            return self.summary
        files = await anyio.to_thread.run_sync(self.agent.discover, root)
        await self.run_files(files)
        self.summary.seconds = time.monotonic() - started  # discovery included
        return self.summary

    async def run_files(self, files: Sequence[TranscriptFile]) -> ImportSummary:
        """Import the given files (one session's, when a hook reports it) from where earlier
        imports stopped: the same read positions, dedup and project names as `run`."""
        started = time.monotonic()
        state = await self.service.import_state()
        self._names = dict(state.project_names)
        self.summary.files_found = len(files)
        self._bytes_unread = sum(
            _unread(transcript, state.offsets.get(str(transcript.path))) for transcript in files
        )
        async with AsyncExitStack() as self._after_run:
            for done, transcript in enumerate(files, start=1):
                await self._import_file(transcript, state.offsets.get(str(transcript.path)))
                if self.progress is not None:
                    self.progress(done, len(files))
            await self._flush()
        self.summary.sessions = len(self._sessions)
        self.summary.seconds = time.monotonic() - started
        return self.summary

    async def _import_file(self, transcript: TranscriptFile, done: tuple[int, int] | None) -> None:
        start = done[0] if done else 0
        if transcript.size == start:
            self.summary.files_unchanged += 1
            return
        if transcript.size < start:
            logger.warning(
                "%s is shorter than what was imported; reading it again", transcript.path
            )
            start = 0
        try:
            chunk = await anyio.to_thread.run_sync(self.agent.read, transcript.path, start)
        except OSError as exc:
            self.summary.files_failed += 1
            self.summary.errors.append(f"{transcript.path}: cannot read: {exc}")
            return
        if chunk.end_offset == start:
            self.summary.files_unchanged += 1  # only a half-written line so far
            return
        self.summary.files_read += 1
        self._bytes_read += chunk.end_offset - start
        self.summary.malformed_lines += chunk.malformed
        self.summary.turns_skipped.update(chunk.skipped)
        session_id = transcript.session_id or chunk.session_id or transcript.path.stem
        project_path = chunk.cwd or ""
        if is_child_folder(project_path, self.service.settings.claude_memory_home):
            # A session claude-memory ran to distil (#67): its own prompt, not the user's work.
            self.summary.turns_skipped["memory_model_session"] += len(chunk.turns)
            return
        project = self._project_name(project_path)
        if not self._wanted_project(project, project_path):
            self.summary.turns_skipped["other_project"] += len(chunk.turns)
            return
        drafts, filtered = self._drafts(chunk, transcript, session_id, project, project_path)
        events = [_event(e, session_id, project) for e in chunk.events]
        prompts = [_prompt(p, session_id, project) for p in chunk.prompts]
        progress = None
        if not filtered:
            # Turns a filter left out must stay readable by a later run without the filter.
            progress = FileProgress(
                file_path=str(transcript.path),
                session_id=session_id,
                agent_id=transcript.agent_id,
                source=self.agent.source,
                project=project,
                project_path=project_path,
                bytes_imported=chunk.end_offset,
                lines_imported=(done[1] if done and start else 0) + chunk.lines_read,
                main_file=transcript.kind == "session",
                title=chunk.title,
                first_at=min((t.timestamp for t in chunk.turns if t.timestamp), default=None),
                last_at=max((t.timestamp for t in chunk.turns if t.timestamp), default=None),
            )
        self._sessions.add(session_id)
        if chunk.actions and not self.dry_run:
            corrections = await anyio.to_thread.run_sync(_corrections, chunk)
            self._work.append(SessionWork(session_id, chunk.actions, corrections))
        self.summary.events += len(events)
        self.summary.prompts += len(prompts)
        self._pending.append(
            FileImport(
                drafts,
                events=events,
                results=chunk.late_results,
                progress=progress,
                prompts=prompts,
            )
        )
        self._pending_turns += len(drafts)
        if self._pending_turns >= BATCH_TURNS:
            if not self._indexes_planned:
                await self._plan_indexes()
            await self._flush()

    async def _plan_indexes(self) -> None:
        """Before the first full batch is written: estimate the run's turns from the bytes
        read so far, and let the service build the vector indexes after a large import."""
        self._indexes_planned = True
        if self.dry_run or self._after_run is None:
            return
        expected = self._pending_turns * self._bytes_unread // max(self._bytes_read, 1)
        self.summary.indexes_built_after = await self._after_run.enter_async_context(
            self.service.vector_indexes_after(expected)
        )

    def _project_name(self, project_path: str) -> str:
        if not project_path:
            return ""
        if project_path not in self._names:
            self._names.update(project_display_names([project_path], self._names))
        return self._names[project_path]

    def _wanted_project(self, project: str, project_path: str) -> bool:
        wanted = self.filters.project
        if wanted is None:
            return True
        return names_project(wanted, project, project_path)

    def _drafts(
        self,
        chunk: TranscriptChunk,
        transcript: TranscriptFile,
        session_id: str,
        project: str,
        project_path: str,
    ) -> tuple[list[MemoryDraft], bool]:
        """The chunk's turns as drafts, and whether a filter (not a rule) left any out."""
        drafts: list[MemoryDraft] = []
        filtered = False
        fallback_time = _modified_at(transcript.path)
        reply = ""  # the assistant's last words before the turn at hand
        for turn in chunk.turns:
            answered, reply = reply, turn.text if turn.role == "assistant" else reply
            if len(turn.text) < self.filters.min_length and not _short_correction(turn, answered):
                self.summary.turns_skipped["too_short"] += 1
                continue
            created_at = turn.timestamp or fallback_time
            if self.filters.since is not None and created_at < self.filters.since:
                self.summary.turns_skipped["before_since"] += 1
                filtered = True
                continue
            drafts.append(
                _draft(turn, self.agent.source, session_id, project, project_path, created_at)
            )
        return drafts, filtered

    async def _flush(self) -> None:
        batch, self._pending, self._pending_turns = self._pending, [], 0
        work, self._work = self._work, []
        await self._import(batch)
        await self._judge(work)

    async def _judge(self, work: list[SessionWork]) -> None:
        """Judge the receipts of the sessions read against what the agent did (after their
        prompts are stored). Judging is an estimate: a failure is logged, never the import's."""
        if not work:
            return
        try:
            await self.service.judge_injections(work)
        except ServiceError as exc:
            logger.warning("could not judge what the agent used of injected memory: %s", exc)

    async def _import(self, batch: list[FileImport]) -> None:
        if not batch:
            return
        if self.dry_run:
            uuids = [str(d.metadata["record_uuid"]) for item in batch for d in item.drafts]
            stored = await self.service.stored_record_uuids(uuids)
            self.summary.turns_duplicate += len(stored)
            self.summary.turns_imported += len(uuids) - len(stored)
            return
        for item, outcome in zip(batch, await self.service.import_files(batch), strict=True):
            self.summary.turns_imported += outcome.saved
            self.summary.turns_duplicate += outcome.duplicates
            self.summary.turns_skipped["invalid"] += outcome.invalid
            self.summary.redactions += outcome.redacted
            if outcome.errors:
                self.summary.errors.extend(outcome.errors)
                if item.progress is not None and outcome.saved == 0:
                    self.summary.files_failed += 1


def _draft(
    turn: Turn,
    source: str,
    session_id: str,
    project: str,
    project_path: str,
    created_at: datetime,
) -> MemoryDraft:
    metadata: dict[str, object] = {"record_uuid": turn.uuid, "line": turn.line_number}
    if turn.agent_id:
        metadata["agent_id"] = turn.agent_id
    if turn.git_branch:
        metadata["git_branch"] = turn.git_branch
    if turn.git_commit:
        metadata["git_commit"] = turn.git_commit
    return MemoryDraft(
        content=turn.text,
        kind="raw",
        source=source,
        project=project,
        project_path=project_path,
        session_id=session_id,
        role=turn.role,
        created_at=created_at,
        metadata=metadata,
    )


def _event(event: ToolEvent, session_id: str, project: str) -> SessionEvent:
    return SessionEvent(
        session_id=session_id,
        agent_id=event.agent_id,
        record_uuid=event.uuid,
        tool_use_id=event.tool_use_id,
        tool=event.tool,
        target=event.target,
        success=event.success,
        at=event.timestamp,
        project=project,
        prompt_key=event.prompt_key,
        output_preview=event.output_preview,
        error=event.error,
    )


def _prompt(prompt: PromptRecord, session_id: str, project: str) -> JournalPrompt:
    return JournalPrompt(
        session_id=session_id,
        prompt_key=prompt.key,
        text=prompt.text,
        at=prompt.timestamp,
        project=project,
    )


def _unread(transcript: TranscriptFile, done: tuple[int, int] | None) -> int:
    """Bytes of the file a run will read: past the stored position, or all of a file that
    shrank (it was replaced)."""
    start = done[0] if done else 0
    return transcript.size - start if transcript.size >= start else transcript.size


def _modified_at(path: Path) -> datetime:
    """A file's mtime: the time of turns whose records carry none."""
    try:
        return datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)
    except OSError:
        return datetime.now(tz=UTC)


def _corrections(chunk: TranscriptChunk) -> dict[str, str]:
    """The chunk's prompts that read as a correction of what the agent did in the turn
    before (its calls and words): prompt key -> the quote, for the judge of memory use."""
    done: dict[str, list[str]] = {}
    for action in chunk.actions:
        if action.prompt_key:
            done.setdefault(action.prompt_key, []).append(action.text)
    found: dict[str, str] = {}
    before: str | None = None
    for prompt in chunk.prompts:
        context = "\n".join(done.get(before, [])) if before else ""
        cue = correction_cue(prompt.text, context[-CORRECTION_CONTEXT_CHARS:])
        if cue is not None:
            found[prompt.key] = cue[1]
        before = prompt.key
    return found


def _short_correction(turn: Turn, answered: str) -> bool:
    """Whether a user turn below --min-length reads as a correction ("no, use pnpm").

    Such turns are kept whatever their length: they are what the signals job learns
    preferences from, and they are rarely long.
    """
    return turn.role == "user" and correction_cue(turn.text, answered) is not None
