"""Read GitHub Copilot CLI sessions into the typed values every agent's reader returns.

Copilot CLI (@github/copilot, read from 1.0.102) keeps each session in its own folder,
`$COPILOT_HOME/session-state/<session id>/` (`$COPILOT_HOME` defaults to `~/.copilot`): an
`events.jsonl` it appends one event a line while it runs, and a `workspace.yaml` (id, cwd,
name) that is not read here. Every event is `{"type", "data", "id", "timestamp", "parentId"}`,
plus `agentId` on a sub-agent's events; the package ships the full schema
(`schemas/session-events.schema.json`, `copilot-sdk/generated/session-events.d.ts` in the bundle
it unpacks). tests/fixtures/copilot/README.md names the events read and what each holds.
`read_copilot_events` is pure and incremental like the other readers, and returns the same
`TranscriptChunk`.

Rules chosen here, and why:

- A human prompt is a `user.message`'s `content`, what the user typed; its `transformedContent`
  is what the model got, with Copilot's own context (the current time, attached files) added.
  A message with a `source` (a skill's hidden text, a prompt from another agent) or marked
  `isAutopilotContinuation` was not typed by anyone ("injected").
- A reply is an `assistant.message`'s `content`; its reasoning (`reasoningText`, encrypted
  blobs) is not read, nor `assistant.reasoning` events ("reasoning"). `system.message` is the
  harness's prompt ("system").
- A sub-agent's events carry its `agentId`: its replies are kept with that id, its prompts were
  written by the main agent ("sidechain_prompt"), as for the other agents.
- Tool calls are the model's `toolRequests` in an `assistant.message`, keyed by their
  `toolCallId` (the model's own call id); the `tool.execution_complete` with that id says how it
  went: `success`, a shell's exit code (`shellExecution.exitCode`, a failure when not 0), the
  result's `content` or the `error.message`. `tool.execution_start` repeats the call and is not
  read.
- Every event has its own id: a turn's uuid is the event's, so reading a session again stores
  only what is new. The session's id, folder and version come from `session.start` (`context.cwd`,
  `copilotVersion`), later `session.resume` and `session.context_changed` events move the folder.
- A read that starts past the beginning first replays the earlier events that set those facts
  (and the prompt being worked on), so a line reads the same in whichever read it falls.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO

from server.agent_facts import copilot as about
from server.core.errors import InvalidInput
from server.core.models.journal import (
    ACTION_CHARS,
    ERROR_CHARS,
    OUTPUT_PREVIEW_CHARS,
    AgentAction,
    ToolOutcome,
)
from server.ingest.agent_format import AgentFormat, file_size
from server.ingest.discovery import TranscriptFile
from server.ingest.folders import list_folder
from server.ingest.hook_sessions import absolute_path, file_or_not_written_yet, session_file
from server.ingest.jsonl_lines import (
    MAX_LINE_BYTES,
    RECORD_SHAPE_ERRORS,
    JsonLines,
    lines_before,
    parse_json_object,
)
from server.ingest.prose import clean
from server.ingest.timestamps import parse_timestamp
from server.ingest.tool_calls import action_text, output_excerpt, tool_target
from server.ingest.transcript_chunk import (
    PromptRecord,
    ToolEvent,
    TranscriptChunk,
    Turn,
    late_outcomes,
    with_outcomes,
)

__all__ = [
    "COPILOT",
    "default_copilot_root",
    "discover_copilot_sessions",
    "read_copilot_events",
]

SESSIONS_FOLDER = "session-state"
EVENTS_FILE = "events.jsonl"
# Copilot's tools name what they act on in these input fields (bash, view/edit/create, rg/glob,
# web_fetch), most telling first.
TARGET_FIELDS = ("command", "path", "pattern", "url", "query", "description")
# A line before a read's start is parsed only if it is one of these events (Copilot writes the
# type first: `{"type":"session.start",...`).
_CONTEXT_LINE = re.compile(
    rb'"type"\s*:\s*"(?:session\.start|session\.resume|session\.context_changed'
    rb'|session\.title_changed|user\.message)"'
)
_CONTEXT_HEAD_BYTES = 128
_SKIPPED_EVENTS = {
    "system.message": "system",
    "assistant.reasoning": "reasoning",
    "session.compaction_complete": "compacted",
}


def default_copilot_root(environ: Mapping[str, str], home: Path) -> Path:
    """`$COPILOT_HOME/session-state`, else `~/.copilot/session-state`."""
    return about.copilot_home(environ, home) / SESSIONS_FOLDER


def discover_copilot_sessions(root: Path) -> list[TranscriptFile]:
    """Every `<session id>/events.jsonl` under `root`, by session id; a missing root gives none."""
    files = []
    for entry in sorted(list_folder(root), key=lambda entry: entry.name):
        try:
            is_dir = entry.is_dir()
        except OSError:
            continue
        path = Path(entry.path) / EVENTS_FILE
        size = file_size(path) if is_dir else None
        if size is not None:
            files.append(session_file(path, "session", entry.name, entry.name))
    return files


class _EventsReader:
    """State of one pass over a session's events; the session facts outlive `start_chunk`."""

    def __init__(self, path: Path) -> None:
        self.session_id: str | None = path.parent.name or None
        self.cwd: str | None = None
        self.git_branch: str | None = None
        self.git_commit: str | None = None
        self.version: str | None = None
        self.title: str | None = None
        self.prompt_key: str | None = None  # the human prompt being worked on
        self.start_chunk()

    def start_chunk(self) -> None:
        self.turns: list[Turn] = []
        self.events: list[ToolEvent] = []
        self.outcomes: dict[str, ToolOutcome] = {}
        self.prompts: list[PromptRecord] = []
        self.actions: list[AgentAction] = []  # what the agent did, for the judge of memory use
        self.call_ids: set[str] = set()
        self.skipped: Counter[str] = Counter()

    def take(self, record: Mapping[str, Any], line_number: int) -> None:
        kind, data = record.get("type"), record.get("data")
        if not isinstance(data, Mapping):
            raise TypeError(f"a {kind} event whose data is not an object")
        at = parse_timestamp(record.get("timestamp"))
        agent = _text(record.get("agentId"))
        if kind == "session.start":
            self._take_start(data)
        elif kind == "session.resume" and isinstance(data.get("context"), Mapping):
            self._take_context(data["context"])
        elif kind == "session.context_changed":
            self._take_context(data)
        elif kind == "session.title_changed":
            self.title = _text(data.get("title")) or self.title
        elif kind == "user.message":
            self._take_prompt(record, data, at, agent, line_number)
        elif kind == "assistant.message":
            self._take_reply(record, data, at, agent, line_number)
        elif kind == "tool.execution_complete" and isinstance(data.get("toolCallId"), str):
            self.outcomes.setdefault(data["toolCallId"], _outcome(data, self.prompt_key))
        elif kind in _SKIPPED_EVENTS:
            self.skipped[_SKIPPED_EVENTS[kind]] += 1

    def _take_start(self, data: Mapping[str, Any]) -> None:
        self.session_id = _text(data.get("sessionId")) or self.session_id
        self.version = _text(data.get("copilotVersion")) or self.version
        if isinstance(data.get("context"), Mapping):
            self._take_context(data["context"])

    def _take_context(self, context: Mapping[str, Any]) -> None:
        self.cwd = _text(context.get("cwd")) or self.cwd
        self.git_branch = _text(context.get("branch")) or self.git_branch
        self.git_commit = _text(context.get("headCommit")) or self.git_commit

    def _turn(
        self, record: Mapping[str, Any], role: str, text: str, at: datetime | None, line: int
    ) -> Turn:
        agent = _text(record.get("agentId"))
        return Turn(
            uuid=str(record.get("id") or f"copilot:{self.session_id}:{line}"),
            session_id=self.session_id,
            role="user" if role == "user" else "assistant",
            text=text,
            timestamp=at,
            cwd=self.cwd,
            agent_id=agent,
            line_number=line,
            is_sidechain=agent is not None,
            git_branch=self.git_branch,
            git_commit=self.git_commit,
        )

    def _take_prompt(
        self,
        record: Mapping[str, Any],
        data: Mapping[str, Any],
        at: datetime | None,
        agent: str | None,
        line: int,
    ) -> None:
        text = _text(data.get("content"))
        if text is None:
            return
        if agent is not None:
            self.skipped["sidechain_prompt"] += 1
            return
        if data.get("source") or data.get("isAutopilotContinuation") is True:
            self.skipped["injected"] += 1
            return
        turn = self._turn(record, "user", clean(text.strip()), at, line)
        self.turns.append(turn)
        self.prompt_key = turn.uuid
        self.prompts.append(PromptRecord.of_turn(turn, turn.uuid))

    def _take_reply(
        self,
        record: Mapping[str, Any],
        data: Mapping[str, Any],
        at: datetime | None,
        agent: str | None,
        line: int,
    ) -> None:
        requests = data.get("toolRequests")
        for request in requests if isinstance(requests, list) else []:
            if isinstance(request, Mapping):
                self._take_call(record, request, at, agent, line)
        text = _text(data.get("content"))
        if text is None:
            return
        turn = self._turn(record, "assistant", clean(text.strip()), at, line)
        self.turns.append(turn)
        self.actions.append(AgentAction(self.prompt_key, at, None, turn.text))

    def _take_call(
        self,
        record: Mapping[str, Any],
        request: Mapping[str, Any],
        at: datetime | None,
        agent: str | None,
        line: int,
    ) -> None:
        call_id = _text(request.get("toolCallId")) or f"copilot:{self.session_id}:{line}"
        if call_id in self.call_ids:
            self.skipped["duplicate"] += 1
            return
        self.call_ids.add(call_id)
        tool = _text(request.get("name")) or "unknown"
        arguments = request.get("arguments")
        self.events.append(
            ToolEvent(
                uuid=str(record.get("id") or call_id),
                tool_use_id=call_id,
                session_id=self.session_id,
                timestamp=at,
                tool=tool,
                target=tool_target(arguments, TARGET_FIELDS),
                success=None,
                agent_id=agent,
                prompt_key=self.prompt_key,
            )
        )
        self.actions.append(
            AgentAction(self.prompt_key, at, tool, action_text(arguments, ACTION_CHARS))
        )


def _outcome(data: Mapping[str, Any], prompt_key: str | None) -> ToolOutcome:
    """How a call went, from its `tool.execution_complete`."""
    shell = data.get("shellExecution")
    exit_code = shell.get("exitCode") if isinstance(shell, Mapping) else None
    failed = data.get("success") is not True or exit_code not in (None, 0)
    result = data.get("result")
    output = _text(result.get("content")) if isinstance(result, Mapping) else None
    error = data.get("error")
    message = _text(error.get("message")) if isinstance(error, Mapping) else None
    if not failed:
        return ToolOutcome(
            True, output_excerpt(output or "", OUTPUT_PREVIEW_CHARS), None, prompt_key
        )
    why = output_excerpt(message or output or "", ERROR_CHARS)
    if why is None and exit_code not in (None, 0):
        why = f"exit code {exit_code}"
    return ToolOutcome(False, None, why or "failed", prompt_key)


def _read_context(handle: BinaryIO, reader: _EventsReader, end: int, max_bytes: int) -> int:
    """Replay the events before byte `end` that set session facts; return how many lines."""
    count = 0
    for count, raw in lines_before(handle, end, max_bytes):
        if raw is None or not _CONTEXT_LINE.search(raw[:_CONTEXT_HEAD_BYTES]):
            continue
        record = parse_json_object(raw)
        if record is not None:
            try:
                reader.take(record, count)
            except RECORD_SHAPE_ERRORS:
                continue
    return count


def read_copilot_events(
    path: Path, start_offset: int = 0, *, max_line_bytes: int = MAX_LINE_BYTES
) -> TranscriptChunk:
    """Read the complete lines of a Copilot `events.jsonl` from byte `start_offset` on.

    Lines that are not a JSON object, and events of a shape no Copilot version writes, are
    counted in `malformed` and skipped, the rest read; a last line without a newline (still
    being written) is left for the next read. Unknown event types are passed over.
    """
    reader = _EventsReader(path)
    with path.open("rb") as handle:
        first_line = 0
        if start_offset:
            first_line = _read_context(handle, reader, start_offset, max_line_bytes)
            reader.start_chunk()
        lines = JsonLines(handle, start_offset, max_line_bytes)
        lines.take_all(reader.take, first_line)
    reader.skipped.update(lines.skipped)
    return TranscriptChunk(
        turns=reader.turns,
        events=with_outcomes(reader.events, reader.outcomes),
        skipped=dict(sorted(reader.skipped.items())),
        malformed=lines.malformed,
        lines_read=lines.lines_read,
        end_offset=lines.end_offset,
        cwd=reader.cwd,
        session_id=reader.session_id,
        title=reader.title,
        version=reader.version,
        late_results=late_outcomes(reader.outcomes, reader.call_ids),
        prompts=reader.prompts,
        actions=reader.actions,
    )


def checked_copilot_session(raw: str) -> Path:
    """A Copilot session's events, `…/session-state/<session id>/events.jsonl`, naming a file;
    NotWrittenYet when nothing is there: Copilot may run its Stop hook before it first writes
    the session's events (the next Stop, or the next import run, reads them)."""
    path = absolute_path(raw)
    if not (
        path.name == EVENTS_FILE
        and len(path.parents) > 2
        and path.parents[1].name == SESSIONS_FOLDER
    ):
        raise InvalidInput(
            "transcript_path must be a Copilot session: <COPILOT_HOME>/session-state/<session id>/"
            "events.jsonl"
        )
    return file_or_not_written_yet(path)


def copilot_session_files(path: Path, session_id: str) -> list[TranscriptFile]:
    """A Copilot session: its events file alone (sub-agents write into the same file)."""
    return [session_file(path, "session", path.parent.name, path.parent.name)]


def _text(value: object) -> str | None:
    """A non-empty string, else None."""
    return value if isinstance(value, str) and value.strip() else None


COPILOT = AgentFormat(
    source=about.NAME,
    label=about.LABEL,
    folder="Copilot CLI sessions",
    default_folder="$COPILOT_HOME/session-state, else ~/.copilot/session-state",
    default_root=default_copilot_root,
    discover=discover_copilot_sessions,
    read=read_copilot_events,
    hook_path=checked_copilot_session,
    hook_files=copilot_session_files,
)
