"""Read OpenAI Codex CLI session rollouts into the Claude Code reader's typed values.

Codex writes one JSONL file per session: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`
(`$CODEX_HOME` defaults to `~/.codex`). Since late 2025 each line is an envelope
`{"timestamp", "type", "payload"}` with `type` one of `session_meta` (first line: id, cwd,
cli_version), `turn_context` (cwd, model, policies), `response_item` (a Responses API item:
`message`, `reasoning`, `function_call`, `function_call_output`, `custom_tool_call[_output]`,
`local_shell_call`, `web_search_call`, ...), `event_msg` (UI events) and `compacted`. Older
rollouts start with a bare `{id, timestamp, instructions}` line, then hold bare response items
and `{"record_type": "state"}` lines. tests/fixtures/codex/README.md names the Codex sources
these facts come from. `read_codex_rollout` is pure and incremental like `read_transcript`, and
returns the same `TranscriptChunk`.

Rules chosen here, and why:

- Prose comes from `response_item` messages only. The `user_message` / `agent_message` events
  repeat them (and are missing from older rollouts), so they are counted as "duplicate_event".
  Developer messages are the harness's instructions ("developer"); reasoning is encrypted or a
  summary of thinking ("reasoning"); `compacted` lines quote earlier turns ("compacted").
- A user message part that is one of Codex's contextual fragments (environment context,
  AGENTS.md or user instructions, skills, `!` shell commands, aborted-turn notes, sub-agent
  notifications, editor context) is harness text; a message with nothing else is skipped as
  "boilerplate". IDE prompts keep only what follows "## My request for Codex:".
- Codex items carry no ids: a turn's uuid is `codex:<session id>:<line number>`, stable because
  rollouts are append-only. A call without a `call_id` is keyed the same way.
- Tool outcomes come from the call's output item: an exit code in the structured
  (`{"output", "metadata": {"exit_code"}}`) or header (`Exit code: N` / `Process exited with
  code N` ... `Output:`) form, an explicit `success`, else a known failure text ("aborted",
  "exec command rejected by user", "execution error: ..."). The `exec_command_end`,
  `patch_apply_end` and `mcp_tool_call_end` events repeat outputs and are not read.
- A read that starts past the beginning first scans the earlier lines whose start names a
  session meta, a turn context or a user message, so the session id, cwd and current prompt are
  the same whichever read a line falls in.
- Rollouts have no title (Codex keeps thread names in `session_index.jsonl`): `title` is None.

This module finds rollouts and walks their lines, keeping the session's state; what one item
says (prose, call target, outcome) is read in `codex_items`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO

from server.agent_facts import codex as about
from server.core.errors import InvalidInput
from server.core.models.journal import ACTION_CHARS, AgentAction, ToolOutcome
from server.ingest.agent_format import AgentFormat, file_size
from server.ingest.codex_items import (
    assistant_prose,
    call_input,
    call_outcome,
    call_summary,
    content_parts,
    context_cwd,
    unwrap_line,
    user_prose,
)
from server.ingest.discovery import TranscriptFile
from server.ingest.folders import list_folder
from server.ingest.hook_sessions import absolute_path, existing_file, numbered, session_file
from server.ingest.jsonl_lines import (
    MAX_LINE_BYTES,
    RECORD_SHAPE_ERRORS,
    JsonLines,
    lines_before,
    parse_json_object,
)
from server.ingest.timestamps import parse_timestamp
from server.ingest.tool_calls import action_text
from server.ingest.transcript_chunk import (
    PromptRecord,
    ToolEvent,
    TranscriptChunk,
    Turn,
    late_outcomes,
    with_outcomes,
)

__all__ = [
    "default_codex_root",
    "discover_codex_rollouts",
    "read_codex_rollout",
    "rollout_session_id",
]

_SESSION_ID = re.compile(
    r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$", re.IGNORECASE
)
_DUPLICATE_EVENTS = frozenset(
    {"user_message", "agent_message", "exec_command_end", "patch_apply_end", "mcp_tool_call_end"}
)
_REASONING_EVENTS = frozenset({"agent_reasoning", "agent_reasoning_raw_content"})
_COMPACTION_ITEMS = frozenset({"compaction", "compaction_summary", "context_compaction"})
_CALL_ITEMS = frozenset(
    {"function_call", "custom_tool_call", "local_shell_call", "web_search_call"}
)
_OUTPUT_ITEMS = frozenset({"function_call_output", "custom_tool_call_output"})
# A line of the part before a read's start is parsed only if its start names one of these.
_CONTEXT_LINE = re.compile(rb'"(?:session_meta|turn_context)"|"role"\s*:\s*"user"')
_CONTEXT_HEAD_BYTES = 512


def default_codex_root(environ: Mapping[str, str], home: Path) -> Path:
    """`$CODEX_HOME/sessions`, else `~/.codex/sessions`."""
    return about.codex_home(environ, home) / "sessions"


def _dated(directory: Path, digits: int) -> list[Path]:
    """Sub-folders named by a number of `digits` digits (a year, month or day), in order."""
    found = []
    for entry in sorted(list_folder(directory), key=lambda entry: entry.name):
        try:
            is_dir = entry.is_dir()
        except OSError:
            continue
        if is_dir and len(entry.name) == digits and entry.name.isdigit():
            found.append(Path(entry.path))
    return found


def discover_codex_rollouts(root: Path) -> list[Path]:
    """Every `rollout-*.jsonl` in the `YYYY/MM/DD` folders under `root`, oldest first.

    A missing root gives an empty list; folders that cannot be read are logged and skipped.
    """
    found: list[Path] = []
    for year in _dated(root, 4):
        for month in _dated(year, 2):
            for day in _dated(month, 2):
                found.extend(
                    Path(entry.path)
                    for entry in sorted(list_folder(day), key=lambda entry: entry.name)
                    if entry.name.startswith("rollout-") and entry.name.endswith(".jsonl")
                )
    return found


def rollout_session_id(path: Path) -> str | None:
    """The session id a rollout's file name ends with (`rollout-<time>-<id>.jsonl`)."""
    match = _SESSION_ID.search(path.name)
    return match.group(1).lower() if match else None


class _RolloutReader:
    """State of one pass over a rollout's lines; the session facts outlive `start_chunk`."""

    def __init__(self, path: Path) -> None:
        self.file_session_id = rollout_session_id(path)
        self.stem = path.stem
        self.session_id: str | None = None
        self.cwd: str | None = None
        self.git_branch: str | None = None
        self.git_commit: str | None = None
        self.version: str | None = None
        self.last_time: datetime | None = None
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

    @property
    def sid(self) -> str | None:
        return self.session_id or self.file_session_id

    def line_uuid(self, line_number: int) -> str:
        return f"codex:{self.sid or self.stem}:{line_number}"

    def take(self, record: Mapping[str, Any], line_number: int) -> None:
        kind, payload = unwrap_line(record)
        self.last_time = parse_timestamp(record.get("timestamp")) or self.last_time
        if kind == "session_meta":
            self._take_meta(payload)
        elif kind == "turn_context" and isinstance(payload.get("cwd"), str) and payload["cwd"]:
            self.cwd = payload["cwd"]
        elif kind == "response_item":
            self._take_item(payload, line_number)
        elif kind == "compacted":
            self.skipped["compacted"] += 1
        elif kind == "event_msg" and payload.get("type") in _DUPLICATE_EVENTS:
            self.skipped["duplicate_event"] += 1
        elif kind == "event_msg" and payload.get("type") in _REASONING_EVENTS:
            self.skipped["reasoning"] += 1

    def _take_meta(self, meta: Mapping[str, Any]) -> None:
        meta_id = meta.get("id")
        if self.session_id is not None and meta_id != self.session_id:
            return  # a fork copies its parent's records: the file's own meta comes first
        if isinstance(meta_id, str) and meta_id:
            self.session_id = meta_id
        if isinstance(meta.get("cwd"), str) and meta["cwd"]:
            self.cwd = meta["cwd"]
        if isinstance(meta.get("cli_version"), str) and meta["cli_version"]:
            self.version = meta["cli_version"]
        git = meta.get("git")
        if isinstance(git, Mapping):
            self.git_branch = _text(git.get("branch"))
            self.git_commit = _text(git.get("commit_hash"))

    def _take_item(self, item: Mapping[str, Any], line_number: int) -> None:
        kind = item.get("type")
        if kind == "message":
            self._take_message(item, line_number)
        elif kind in _CALL_ITEMS:
            self._take_call(item, line_number)
        elif kind in _OUTPUT_ITEMS and isinstance(item.get("call_id"), str):
            self.outcomes.setdefault(item["call_id"], call_outcome(item.get("output")))
        elif kind == "reasoning":
            self.skipped["reasoning"] += 1
        elif kind in _COMPACTION_ITEMS:
            self.skipped["compacted"] += 1

    def _take_message(self, item: Mapping[str, Any], line_number: int) -> None:
        role, parts = item.get("role"), content_parts(item.get("content"))
        if role == "user":
            self.cwd = context_cwd(parts) or self.cwd
            prose = user_prose(parts)
        elif role == "assistant":
            prose = assistant_prose(parts)
        else:
            self.skipped["developer"] += 1  # developer / system: the harness's instructions
            return
        if prose.skip is not None:
            self.skipped[prose.skip] += 1
            return
        turn = Turn(
            uuid=self.line_uuid(line_number),
            session_id=self.sid,
            role="user" if role == "user" else "assistant",
            text=prose.text,
            timestamp=self.last_time,
            cwd=self.cwd,
            agent_id=None,
            line_number=line_number,
            is_sidechain=False,
            git_branch=self.git_branch,
            git_commit=self.git_commit,
        )
        self.turns.append(turn)
        if turn.role == "user":
            self.prompt_key = turn.uuid
            self.prompts.append(PromptRecord.of_turn(turn, turn.uuid))
        else:
            self.actions.append(AgentAction(self.prompt_key, turn.timestamp, None, turn.text))

    def _take_call(self, item: Mapping[str, Any], line_number: int) -> None:
        tool, target, success = call_summary(item)
        call_id = item.get("call_id") or item.get("id")
        call_id = call_id if isinstance(call_id, str) and call_id else self.line_uuid(line_number)
        if call_id in self.call_ids:
            self.skipped["duplicate"] += 1
            return
        self.call_ids.add(call_id)
        self.events.append(
            ToolEvent(
                uuid=self.line_uuid(line_number),
                tool_use_id=call_id,
                session_id=self.sid,
                timestamp=self.last_time,
                tool=tool,
                target=target,
                success=success,
                agent_id=None,
                prompt_key=self.prompt_key,
            )
        )
        called = action_text(call_input(item), ACTION_CHARS)
        self.actions.append(AgentAction(self.prompt_key, self.last_time, tool, called))


def _read_context(handle: BinaryIO, reader: _RolloutReader, end: int, max_bytes: int) -> int:
    """Replay the lines before byte `end` that set session facts; return how many there are.

    Only the first line and lines whose start names a session meta, a turn context or a user
    message are parsed: nothing else changes the session id, cwd, version or current prompt.
    """
    count = 0
    for count, raw in lines_before(handle, end, max_bytes):
        if raw is None or (count > 1 and not _CONTEXT_LINE.search(raw[:_CONTEXT_HEAD_BYTES])):
            continue
        record = parse_json_object(raw)
        if record is not None:
            try:
                reader.take(record, count)
            except RECORD_SHAPE_ERRORS:
                continue
    return count


def read_codex_rollout(
    path: Path, start_offset: int = 0, *, max_line_bytes: int = MAX_LINE_BYTES
) -> TranscriptChunk:
    """Read the complete lines of a Codex rollout from byte `start_offset` on.

    Lines that are not a JSON object, and records of a shape no Codex version writes, are
    counted in `malformed` and skipped (blank lines are passed over); lines longer than
    `max_line_bytes` are skipped as "oversize"; unknown record types are ignored. A last line
    without a newline is left for the next read. A file shorter than `start_offset` gives
    nothing.
    """
    reader = _RolloutReader(path)
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
        session_id=reader.sid,
        title=None,
        version=reader.version,
        late_results=late_outcomes(reader.outcomes, reader.call_ids),
        prompts=reader.prompts,
        actions=reader.actions,
    )


# --- Codex as the importer knows it --------------------------------------------------------


def _codex_files(root: Path) -> list[TranscriptFile]:
    """Codex rollouts: one file per session, its id in the file name, no sub-agent files."""
    files = []
    for path in discover_codex_rollouts(root):
        size = file_size(path)
        if size is None:
            continue
        files.append(
            TranscriptFile(
                path=path,
                kind="session",
                project_dir=path.parent.relative_to(root).as_posix(),
                session_id=rollout_session_id(path),
                agent_id=None,
                agent_type=None,
                parent_tool_use_id=None,
                size=size,
            )
        )
    return files


def checked_rollout(raw: str) -> Path:
    """A Codex rollout path, `…/sessions/YYYY/MM/DD/rollout-*.jsonl`, naming a file."""
    path = absolute_path(raw)
    parents = path.parents
    if not (
        path.name.startswith("rollout-")
        and path.suffix == ".jsonl"
        and len(parents) > 4
        and numbered(parents[0].name, 2)
        and numbered(parents[1].name, 2)
        and numbered(parents[2].name, 4)
        and parents[3].name == "sessions"
    ):
        raise InvalidInput(
            "transcript_path must be a Codex rollout: <CODEX_HOME>/sessions/YYYY/MM/DD/"
            "rollout-….jsonl"
        )
    return existing_file(path)


def rollout_files(path: Path, session_id: str) -> list[TranscriptFile]:
    """A Codex session: its rollout alone, in the folder of its day."""
    return [session_file(path, "session", "/".join(p.name for p in path.parents[2::-1]), None)]


CODEX = AgentFormat(
    source=about.NAME,
    label=about.LABEL,
    folder="Codex CLI sessions",
    default_folder="$CODEX_HOME/sessions, else ~/.codex/sessions",
    default_root=default_codex_root,
    discover=_codex_files,
    read=read_codex_rollout,
    hook_path=checked_rollout,
    hook_files=rollout_files,
)


def _text(value: Any) -> str | None:
    """A non-empty string, else None."""
    return value if isinstance(value, str) and value.strip() else None
