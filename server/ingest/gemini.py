"""Read Google Gemini CLI saved sessions (`~/.gemini/tmp/<project>/chats/`) into typed values.

Pure and incremental, like `claude_code.read_transcript`, and returning the same `TranscriptChunk`.
What the files hold (gemini-cli `packages/core/src/services/chatRecordingService.ts`; the
versions read are listed in tests/fixtures/gemini/README.md):

- 0.39.0 and later append JSONL to `session-<YYYY-MM-DDTHH-MM>-<id8>.jsonl`: a metadata line
  (sessionId, projectHash, startTime, lastUpdated, kind, directories, summary), message lines
  (id, timestamp, type user | gemini | info | error | warning, content, displayContent; gemini
  lines add toolCalls, thoughts, tokens, model), `{"$set": {...}}` metadata patches and
  `{"$rewindTo": "<message id>"}`. A message is appended again, whole, whenever it changes (tool
  calls or tokens added), so one id can fill several lines.
- up to 0.38.2 one `session-….json` document `{sessionId, projectHash, startTime, lastUpdated,
  messages, summary?, kind?, directories?}` is rewritten on every save; resuming it in a newer
  version copies it into `<same name>.jsonl` beside it.
- sub-agents (0.38 and later) write `chats/<parent session id>/<session id>.jsonl` (`.json` in
  0.38), with `kind: "subagent"`.
- no line records a working directory. The project folder is `sha256(project root)` in older
  versions and a slug in newer ones, whose `.project_root` file (and `~/.gemini/projects.json`)
  names the root; `projectHash` stays the sha256 of the root.

Rules chosen here, and why:

- What was said was said: a `$rewindTo` drops messages from Gemini's own view of the session,
  but the turns already said are kept (as Claude Code's rewound branches are); it is counted as
  "rewind". `$set.messages` (the whole history rewritten after masking or a rollback) is
  skipped ("history_rewrite"): its entries are copies of messages already read.
- A message gives one turn, from the first line of it that has prose, and a tool call one event
  per outcome: an incremental read looks back at earlier lines only for the ids it meets again,
  so a message rewritten after a read is not read twice.
- Not spoken by the user or the model, so skipped and counted by reason: info / error / warning
  messages, thoughts, slash commands and `?` help (Gemini drops them on resume too), injected
  `<session_context>`, compression summaries (`<state_snapshot>`) and their canned reply, and
  `<hook_context>` blocks (what a hook, maybe ours, added to a prompt). The files a prompt
  references with `@` are expanded after `--- Content from referenced files ---`: cut there.
- Sub-agents: their user messages were written by the main agent ("sidechain_prompt"); their
  replies are kept with `agent_id` (the sub-agent's session id) and `is_sidechain`; `session_id`
  is the parent's, as for Claude Code.
- Tool outcomes: `status` success / error / cancelled; a shell call that reports a non-zero
  `Exit Code:` failed (Gemini records it as a success), one cut short by a timeout or the user
  was interrupted and keeps its partial output as preview.

This module reads the lines and keeps the session's state; finding the files and their
project is `gemini_discovery`, what one message says is `gemini_messages`. Both modules' public
entry points are re-exported here.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from server.agent_facts import gemini as about
from server.core.errors import InvalidInput
from server.core.models.journal import ACTION_CHARS, AgentAction
from server.ingest.agent_format import AgentFormat
from server.ingest.discovery import TranscriptFile
from server.ingest.gemini_discovery import (
    GeminiSessionFile,
    default_gemini_root,
    discover_gemini_sessions,
    project_hash,
    project_registry,
    project_root,
)
from server.ingest.gemini_messages import (
    call_outcome,
    gemini_prose,
    gemini_tool_target,
    message_calls,
    user_prose,
)
from server.ingest.hook_sessions import absolute_path, existing_file, session_file
from server.ingest.jsonl_lines import (
    MAX_LINE_BYTES,
    RECORD_SHAPE_ERRORS,
    JsonLines,
    lines_before,
    parse_json_object,
)
from server.ingest.timestamps import parse_timestamp
from server.ingest.tool_calls import action_text
from server.ingest.transcript_chunk import PromptRecord, ToolEvent, TranscriptChunk, Turn

__all__ = [
    "GeminiSessionFile",
    "default_gemini_root",
    "discover_gemini_sessions",
    "gemini_tool_target",
    "read_gemini_session",
]

# A `.json` session is parsed whole, so one larger than a JSONL line may be is not read:
# memory stays bounded whatever file lands in Gemini's folder.
MAX_DOCUMENT_BYTES = MAX_LINE_BYTES
# JSON.stringify writes a message's `id` first; earlier lines are matched by it without parsing.
_LINE_ID = re.compile(rb'^\{"id":"([^"\\]+)"')
_USER_TYPE = b'"type":"user"'
_NOT_SPOKEN = frozenset({"info", "error", "warning"})


def _location(path: Path) -> tuple[Path | None, str | None]:
    """(the `chats` folder, the parent session id for a sub-agent file nested in it)."""
    if path.parent.name == "chats":
        return path.parent, None
    if path.parent.parent.name == "chats":
        return path.parent.parent, path.parent.name
    return None, None


class _SessionReader:
    """State of one read of a session file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.chats, self.parent_id = _location(path)
        self.meta: dict[str, Any] = {}
        self.turns: list[Turn] = []
        self.events: dict[str, ToolEvent] = {}  # by call id, in the order first met
        self.prompts: list[PromptRecord] = []
        self.actions: list[AgentAction] = []  # what the agent did, for the judge of memory use
        self.skipped: Counter[str] = Counter()
        self.seen: set[str] = set()  # message ids met in this read or earlier lines
        self.spoken: set[str] = set()  # message ids whose turn is out (here or earlier)
        self.reported: dict[str, Any] = {}  # call id -> status an earlier line reported
        self.prompt_key: str | None = None  # the human prompt being worked on
        self.last_time: datetime | None = None
        self.title: str | None = None
        self._cwd: tuple[str | None] | None = None

    @property
    def own_id(self) -> str:
        session = self.meta.get("sessionId")
        return session if isinstance(session, str) and session else self.path.stem

    @property
    def is_subagent(self) -> bool:
        return self.meta.get("kind") == "subagent" or self.parent_id is not None

    @property
    def session_id(self) -> str:
        """The session the turns belong to: the parent's for a sub-agent, when known."""
        return (self.parent_id if self.is_subagent else None) or self.own_id

    def uuid(self, message_id: str) -> str:
        return f"gemini:{self.own_id}:{message_id}"

    def cwd(self) -> str | None:
        """The project root: a recorded directory or the folder's root whose sha256 is the
        session's projectHash, else the folder's root as the registry gives it."""
        if self._cwd is None:
            root = None
            if self.chats is not None:
                tmp = self.chats.parent.parent
                root = project_root(self.chats.parent, project_registry(tmp))
            dirs = self.meta.get("directories")
            candidates = [d for d in dirs if isinstance(d, str)] if isinstance(dirs, list) else []
            candidates += [root] if root else []
            expected = self.meta.get("projectHash")
            verified = next((c for c in candidates if project_hash(c) == expected), None)
            self._cwd = (verified or root,)
        return self._cwd[0]

    def take_meta(self, data: Mapping[str, Any]) -> None:
        for key in ("sessionId", "projectHash", "kind", "directories"):
            if key in data:
                self.meta[key] = data[key]
        summary = data.get("summary")
        if isinstance(summary, str) and summary.strip():
            self.title = summary.strip()

    def take(self, record: Mapping[str, Any], line_number: int) -> None:
        if isinstance(record.get("$rewindTo"), str):
            self.skipped["rewind"] += 1
        elif isinstance(record.get("$set"), Mapping):
            if "messages" in record["$set"]:
                self.skipped["history_rewrite"] += 1
            self.take_meta(record["$set"])
        elif isinstance(record.get("id"), str):
            self.take_message(record, line_number)
        elif isinstance(record.get("sessionId"), str):
            self.take_meta(record)

    def remember(self, record: Mapping[str, Any]) -> None:
        """An earlier version (before this read) of a message this read meets again."""
        message_id = record["id"]
        self.seen.add(message_id)
        kind = record.get("type")
        if kind == "user" and user_prose(record, self.is_subagent)[1] is None:
            self.spoken.add(message_id)
        elif kind == "gemini":
            if gemini_prose(record)[1] is None:
                self.spoken.add(message_id)
            for call in message_calls(record):
                self.reported[call["id"]] = call.get("status")

    def take_message(self, message: Mapping[str, Any], line_number: int) -> None:
        message_id = message["id"]
        again = message_id in self.seen
        self.seen.add(message_id)
        if again:
            self.skipped["rewritten"] += 1  # the same message, appended again with more in it
        self.last_time = parse_timestamp(message.get("timestamp")) or self.last_time
        kind = message.get("type")
        if kind == "gemini":
            self._take_calls(message)
            if not again and message.get("thoughts"):
                self.skipped["thoughts"] += 1
        if kind not in ("user", "gemini"):
            if not again:
                self.skipped[kind if kind in _NOT_SPOKEN else "unknown_type"] += 1
            return
        if message_id in self.spoken:
            return
        if kind == "user":
            text, reason = user_prose(message, self.is_subagent)
        else:
            text, reason = gemini_prose(message)
        if reason is not None:
            if not again:
                self.skipped[reason] += 1
            if reason == "command" and not self.is_subagent:
                self.prompt_key = None  # what follows was caused by the command
            return
        self.spoken.add(message_id)
        turn = Turn(
            uuid=self.uuid(message_id),
            session_id=self.session_id,
            role="user" if kind == "user" else "assistant",
            text=text,
            timestamp=self.last_time,
            cwd=self.cwd(),
            agent_id=self.own_id if self.is_subagent else None,
            line_number=line_number,
            is_sidechain=self.is_subagent,
        )
        self.turns.append(turn)
        if kind == "user":
            self.prompt_key = turn.uuid
            self.prompts.append(PromptRecord.of_turn(turn, turn.uuid))
        else:
            self.actions.append(AgentAction(self.prompt_key, turn.timestamp, None, turn.text))

    def _take_calls(self, message: Mapping[str, Any]) -> None:
        for call in message_calls(message):
            call_id = call["id"]
            status = call.get("status")
            known = self.events.get(call_id)
            if known is None and call_id in self.reported and self.reported[call_id] == status:
                continue  # an earlier read reported this call with this outcome
            outcome = call_outcome(call)
            event = ToolEvent(
                uuid=self.uuid(message["id"]),
                tool_use_id=call_id,
                session_id=self.session_id,
                timestamp=parse_timestamp(call.get("timestamp")) or self.last_time,
                tool=str(call.get("name") or "unknown"),
                target=gemini_tool_target(call.get("args")),
                success=None,
                agent_id=self.own_id if self.is_subagent else None,
                prompt_key=known.prompt_key if known else self.prompt_key,
            )
            self.events[call_id] = event.with_outcome(outcome) if outcome is not None else event
            if known is None:
                called = action_text(call.get("args"), ACTION_CHARS)
                self.actions.append(
                    AgentAction(event.prompt_key, event.timestamp, event.tool, called)
                )

    def chunk(self, *, malformed: int, lines_read: int, end_offset: int) -> TranscriptChunk:
        return TranscriptChunk(
            turns=self.turns,
            events=list(self.events.values()),
            skipped=dict(sorted(self.skipped.items())),
            malformed=malformed,
            lines_read=lines_read,
            end_offset=end_offset,
            cwd=self.cwd(),
            session_id=self.session_id if self.meta or self.turns else None,
            title=self.title,
            version=None,  # Gemini CLI does not record its version in a session
            prompts=self.prompts,
            actions=self.actions,
        )


def _look_back(reader: _SessionReader, path: Path, offset: int, wanted: set[str]) -> int:
    """Take what a read from `offset` needs from the lines before it; return their count.

    The metadata line, earlier versions of the messages in `wanted`, and the last human prompt
    (so calls before the first prompt of this read are linked to it). Only those lines are parsed.
    """
    count = 0
    prompt: Mapping[str, Any] | None = None
    with path.open("rb") as handle:
        for count, raw in lines_before(handle, offset):
            if raw is None:
                continue
            if count == 1:
                record = parse_json_object(raw)
                if record is not None and "id" not in record:
                    reader.take_meta(record)
                continue
            match = _LINE_ID.match(raw)
            if match is None:
                continue
            message_id = match.group(1).decode("utf-8", "replace")
            is_user = _USER_TYPE in raw[:256]
            if message_id not in wanted and not is_user:
                continue
            record = parse_json_object(raw)
            if record is None or record.get("id") != message_id:
                continue
            if message_id in wanted:
                reader.remember(record)
            if record.get("type") == "user" and not reader.is_subagent:
                reason = user_prose(record, False)[1]
                if reason is None:
                    prompt = record
                elif reason == "command":
                    prompt = None
    if prompt is not None:
        reader.prompt_key = reader.uuid(prompt["id"])
    return count


def _read_lines(path: Path, start_offset: int) -> TranscriptChunk:
    """Complete lines from `start_offset` on; a last line without a newline is left for later."""
    with path.open("rb") as handle:
        lines = JsonLines(handle, start_offset)
        records = list(lines)  # all first: the look-back needs the ids this read meets
    reader = _SessionReader(path)
    reader.skipped.update(lines.skipped)
    before = 0
    if start_offset and lines.lines_read:
        wanted = {r["id"] for _, r in records if isinstance(r.get("id"), str)}
        before = _look_back(reader, path, start_offset, wanted)
    for index, record in records:
        try:
            reader.take(record, before + index)
        except RECORD_SHAPE_ERRORS:
            lines.malformed += 1
    return reader.chunk(
        malformed=lines.malformed, lines_read=lines.lines_read, end_offset=lines.end_offset
    )


def _read_document(path: Path, start_offset: int) -> TranscriptChunk:
    """A whole `.json` session (rewritten on every save, so `start_offset` cannot resume it).

    A document that does not parse (caught mid-write) is one malformed record, and the offset
    stays at `start_offset` so the next read tries again.
    """
    with path.open("rb") as handle:
        data = handle.read(MAX_DOCUMENT_BYTES + 1)
    if len(data) > MAX_DOCUMENT_BYTES:
        raise OSError(
            f"{path} is larger than {MAX_DOCUMENT_BYTES:,} bytes, the limit for a Gemini"
            " `.json` session; it is not read"
        )
    reader = _SessionReader(path)
    document = parse_json_object(data)
    messages = document.get("messages") if document is not None else None
    if document is None or not isinstance(messages, list):
        return reader.chunk(malformed=1, lines_read=0, end_offset=start_offset)
    reader.take_meta(document)
    malformed = 0
    for number, message in enumerate(messages, start=1):
        if not isinstance(message, Mapping) or not isinstance(message.get("id"), str):
            malformed += 1
            continue
        try:
            reader.take_message(message, number)
        except RECORD_SHAPE_ERRORS:
            malformed += 1
    return reader.chunk(malformed=malformed, lines_read=len(messages), end_offset=len(data))


def read_gemini_session(path: Path, start_offset: int = 0) -> TranscriptChunk:
    """Read a saved Gemini CLI session: a `.jsonl` from byte `start_offset`, a `.json` whole.

    Turns are keyed `gemini:<session id>:<message id>`, so a re-read (always, for `.json`)
    gives the same uuids. `line_number` is the JSONL line, or the message's 1-based index in a
    `.json`, where `lines_read` counts messages. Malformed lines are counted, never fatal; a
    line over `jsonl_lines.MAX_LINE_BYTES` is skipped as "oversize", as for the other agents.
    """
    if path.suffix == ".json":
        return _read_document(path, start_offset)
    return _read_lines(path, start_offset)


# --- Gemini CLI as the importer knows it ---------------------------------------------------

GEMINI_SUFFIXES = (".jsonl", ".json")


def _gemini_files(root: Path) -> list[TranscriptFile]:
    """Gemini sessions: sub-agent sessions belong to their parent session."""
    return [
        TranscriptFile(
            path=found.path,
            kind="subagent" if found.is_subagent else "session",
            project_dir=found.project_dir,
            session_id=found.parent_session_id if found.is_subagent else None,
            agent_id=found.path.stem if found.is_subagent else None,
            agent_type=None,
            parent_tool_use_id=None,
            size=found.size,
        )
        for found in discover_gemini_sessions(root)
    ]


def checked_gemini_session(raw: str) -> Path:
    """A Gemini CLI session path, `…/tmp/<project>/chats/session-*.jsonl` (or `.json`)."""
    path = absolute_path(raw)
    if not (
        path.name.startswith("session-")
        and path.suffix in GEMINI_SUFFIXES
        and path.parent.name == "chats"
        and len(path.parents) > 3
    ):
        raise InvalidInput(
            "transcript_path must be a Gemini CLI session: <gemini dir>/tmp/<project>/chats/"
            "session-….jsonl"
        )
    return existing_file(path)


def gemini_session_files(path: Path, session_id: str) -> list[TranscriptFile]:
    """A Gemini CLI session's file and, from 0.38, its sub-agents' files."""
    files = [session_file(path, "session", path.parents[1].name, None)]
    if session_id and Path(session_id).name == session_id and session_id not in (".", ".."):
        folder = path.parent / session_id
        try:
            names = sorted(entry.name for entry in os.scandir(folder) if entry.is_file())
        except OSError:
            names = []
        files += [
            session_file(folder / name, "subagent", path.parents[1].name, session_id)
            for name in names
            if name.endswith(GEMINI_SUFFIXES)
        ]
    return files


GEMINI = AgentFormat(
    source=about.NAME,
    label=about.LABEL,
    folder="Gemini CLI sessions",
    default_folder="~/.gemini/tmp, or under $GEMINI_CLI_HOME",
    default_root=default_gemini_root,
    discover=_gemini_files,
    read=read_gemini_session,
    hook_path=checked_gemini_session,
    hook_files=gemini_session_files,
)
