"""Read Claude Code session transcripts (`~/.claude/projects/**.jsonl`) into typed values.

Pure and incremental: `read_transcript` reads from a byte offset, consumes only complete lines
and returns the offset to resume from, so the importer can re-read a session that is still being
written. Which lines count as prose is decided in `server.ingest.prose` (FORMATS.md §1.9).
Finding the files (`discovery`), naming projects (`names`) and the values every agent's reader
returns (`transcript_chunk`) live in their own modules and are re-exported here, so the
importer needs this one import; reading complete lines from an offset is `jsonl_lines`.

Rules chosen here, and why:

- Branches (FORMATS.md §1.6): every record's prose is kept, whichever branch it sits on, keyed
  by its uuid. Rewinds leave abandoned branches in the file, but what the user said there was
  still said; the importer dedupes by uuid and content hash, and picking a "live" leaf would
  make the result depend on how much of the file has been written yet.
- Streaming: the lines of one API response share `message.id`; their text blocks become one
  assistant turn (joined in order) when they fall in the same chunk. The turn takes the uuid,
  timestamp and line number of the first line that carries text, not of a leading thinking
  line, so the turn is the same whether or not that thinking line was in the chunk. A line
  whose uuid was already read in the chunk is skipped ("duplicate"), and a line of a message
  that repeats text the turn already holds adds nothing.
- Timestamps: a record without a readable `timestamp` gets the previous good one in the chunk,
  or None if there was none yet.
- Sub-agents: the user lines of a sub-agent were written by the main agent and are skipped
  ("sidechain_prompt"); all of its assistant prose is kept, with `agent_id` and
  `is_sidechain` set. In the fixtures a sub-agent speaks once, in its final report (the finding
  a memory system should learn), and "only the last text" cannot be known while a file is
  still being read incrementally. The parent's copy of that report is a tool result, skipped.
- `queue-operation` records are skipped: `enqueue` copies the prompt that follows (counted as
  "queued_copy"), and the others carry no uuid to key a turn by.
- Journal prompts: a main-thread user line whose prose is a human prompt becomes the current
  prompt, keyed by its `promptId` (2.1+, the hooks' `prompt_id`), else by its uuid. A tool call
  is linked to the current prompt; its result line's `promptId`, when present, overrides (it
  is authoritative, and links calls in a chunk that starts after their prompt). A slash-command
  echo ends the current prompt: what follows it was caused by the command, not the prompt
  before. Sub-agent files have no current prompt (their user lines are the main agent's).
- Tool outcomes: a call failed when its result has `is_error`, was rejected by the user
  (`toolDenialKind`, `toolUseResult: "User rejected tool use"`), is an interrupted Bash run, or
  has an `"Error: …"` string as `toolUseResult`. `toolUseResult` is only read on a line with
  one result, the only case where it is known which call it describes. A failed call's result
  text becomes its error (wrappers stripped) and it has no preview; an interrupted run keeps
  its partial output as the preview, with the error "interrupted", as the hooks report it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from server.agent_facts import claude_code as about
from server.core.errors import InvalidInput
from server.core.models.journal import ACTION_CHARS, AgentAction, ToolOutcome
from server.ingest.agent_format import AgentFormat
from server.ingest.discovery import TranscriptFile, default_projects_root, discover_transcripts
from server.ingest.hook_sessions import absolute_path, existing_file
from server.ingest.jsonl_lines import MAX_LINE_BYTES, JsonLines, count_lines_before
from server.ingest.names import project_display_names
from server.ingest.prose import assistant_prose, tool_results, tool_uses, user_prose
from server.ingest.timestamps import parse_timestamp
from server.ingest.tool_calls import action_text, outcome_of_result, tool_target
from server.ingest.transcript_chunk import (
    PromptRecord,
    Role,
    ToolEvent,
    TranscriptChunk,
    Turn,
    late_outcomes,
    with_outcomes,
)

__all__ = [
    "PromptRecord",
    "ToolEvent",
    "TranscriptChunk",
    "TranscriptFile",
    "Turn",
    "discover_transcripts",
    "project_display_names",
    "read_records",
    "read_transcript",
    "tool_target",
]


@dataclass(slots=True)
class _Reply:
    """An assistant turn being assembled from the streamed lines of one message."""

    first: Turn
    parts: list[str]


class _ChunkReader:
    """State of one pass over the lines of a chunk."""

    def __init__(self) -> None:
        self.entries: list[Turn | _Reply] = []
        self.replies: dict[str, _Reply] = {}
        self.events: list[ToolEvent] = []
        self.results: dict[str, ToolOutcome] = {}
        self.prompts: dict[str, PromptRecord] = {}
        self.actions: list[AgentAction] = []  # what the agent did, for the judge of memory use
        self.prompt_key: str | None = None  # the human prompt being worked on
        self.skipped: Counter[str] = Counter()
        self.seen_uuids: set[str] = set()
        self.titles: dict[str, str] = {}
        self.summaries: list[tuple[str, str | None]] = []
        self.cwd: str | None = None
        self.session_id: str | None = None
        self.version: str | None = None
        self.last_time: datetime | None = None

    def take(self, record: Mapping[str, Any], line_number: int) -> None:
        kind = record.get("type")
        if kind == "summary":
            self._take_summary(record)
            return
        if kind in ("ai-title", "custom-title"):
            key = "aiTitle" if kind == "ai-title" else "customTitle"
            if isinstance(record.get(key), str) and record[key].strip():
                self.titles[kind] = record[key].strip()
        # Read before the record is handled, so its turn gets its own time or the one before.
        self.last_time = parse_timestamp(record.get("timestamp")) or self.last_time
        if isinstance(record.get("cwd"), str) and record["cwd"]:
            self.cwd = record["cwd"]
        if isinstance(record.get("version"), str) and record["version"]:
            self.version = record["version"]
        if self.session_id is None and isinstance(record.get("sessionId"), str):
            self.session_id = record["sessionId"]
        uuid = record.get("uuid")
        if isinstance(uuid, str):
            if uuid in self.seen_uuids and kind in ("user", "assistant"):
                self.skipped["duplicate"] += 1  # a line written twice: keep the first
                return
            self.seen_uuids.add(uuid)
        if kind == "user":
            self._take_user(record, line_number)
        elif kind == "assistant":
            self._take_assistant(record, line_number)
        elif kind == "attachment":
            self._take_attachment(record)
        elif kind == "queue-operation" and record.get("operation") == "enqueue":
            self.skipped["queued_copy"] += 1

    def _take_summary(self, record: Mapping[str, Any]) -> None:
        summary = record.get("summary")
        if isinstance(summary, str) and summary.strip():
            leaf = record.get("leafUuid")
            self.summaries.append((summary.strip(), leaf if isinstance(leaf, str) else None))

    def _take_attachment(self, record: Mapping[str, Any]) -> None:
        # Hook output is what a memory server injected: never learn from it again.
        attachment = record.get("attachment")
        if not isinstance(attachment, Mapping):
            return
        kind = attachment.get("type")
        if kind == "hook_additional_context" or (
            kind == "hook_success" and (attachment.get("stdout") or attachment.get("content"))
        ):
            self.skipped["hook_context"] += 1

    def _turn(self, record: Mapping[str, Any], role: Role, text: str, line: int) -> Turn | None:
        uuid = record.get("uuid")
        if not isinstance(uuid, str) or not uuid:
            return None
        sidechain = bool(record.get("isSidechain"))
        agent = record.get("agentId") if sidechain else None
        cwd = record.get("cwd")
        session = record.get("sessionId")
        branch = record.get("gitBranch")
        return Turn(
            uuid=uuid,
            session_id=session if isinstance(session, str) else self.session_id,
            role=role,
            text=text,
            timestamp=self.last_time,
            cwd=cwd if isinstance(cwd, str) and cwd else None,
            agent_id=agent if isinstance(agent, str) else None,
            line_number=line,
            is_sidechain=sidechain,
            # "HEAD" is a detached checkout, "" no repository (FORMATS.md): no branch to name.
            git_branch=branch if isinstance(branch, str) and branch not in ("", "HEAD") else None,
        )

    def _take_user(self, record: Mapping[str, Any], line_number: int) -> None:
        blocks = tool_results(record)
        for block in blocks:
            tool_use_id = block.get("tool_use_id")
            if isinstance(tool_use_id, str):
                self.results[tool_use_id] = outcome_of_result(block, record, len(blocks) == 1)
        prose = user_prose(record)
        prompt_id = record.get("promptId")
        prompt_id = prompt_id if isinstance(prompt_id, str) and prompt_id else None
        if blocks and prompt_id:
            # A result line names the prompt it answers (2.1+): a read that starts mid-turn
            # learns from it which prompt the calls after it follow.
            self.prompt_key = prompt_id
        if prose.skip is not None:
            self.skipped[prose.skip] += 1
            if prose.skip == "command" and not record.get("isSidechain"):
                self.prompt_key = prompt_id
            return
        turn = self._turn(record, "user", prose.text, line_number)
        if turn is None:
            self.skipped["no_uuid"] += 1
            return
        self.entries.append(turn)
        # user_prose skips every sub-agent line, so this is a prompt of the main thread.
        self.prompt_key = prompt_id or turn.uuid
        if self.prompt_key not in self.prompts:
            self.prompts[self.prompt_key] = PromptRecord.of_turn(turn, self.prompt_key)

    def _take_assistant(self, record: Mapping[str, Any], line_number: int) -> None:
        turn = self._turn(record, "assistant", "", line_number)
        for block in tool_uses(record):
            if turn is not None and isinstance(block.get("id"), str):
                self.events.append(
                    ToolEvent(
                        uuid=turn.uuid,
                        tool_use_id=block["id"],
                        session_id=turn.session_id,
                        timestamp=turn.timestamp,
                        tool=str(block.get("name") or "unknown"),
                        target=tool_target(block.get("input")),
                        success=None,
                        agent_id=turn.agent_id,
                        prompt_key=self.prompt_key,
                    )
                )
                self.actions.append(
                    AgentAction(
                        self.prompt_key,
                        turn.timestamp,
                        str(block.get("name") or "unknown"),
                        action_text(block.get("input"), ACTION_CHARS),
                    )
                )
        prose = assistant_prose(record)
        if prose.skip is None and turn is not None:
            self.actions.append(AgentAction(self.prompt_key, turn.timestamp, None, prose.text))
        if prose.skip is not None:
            self.skipped[prose.skip] += 1
            return
        if turn is None:
            self.skipped["no_uuid"] += 1
            return
        message = record.get("message")
        message_id = message.get("id") if isinstance(message, Mapping) else None
        reply = self.replies.get(message_id) if isinstance(message_id, str) else None
        if reply is not None:
            if prose.text not in reply.parts:  # a replayed line adds nothing new
                reply.parts.append(prose.text)
            return
        reply = _Reply(turn, [prose.text])
        if isinstance(message_id, str):
            self.replies[message_id] = reply
        self.entries.append(reply)

    def title(self) -> str | None:
        if "custom-title" in self.titles or "ai-title" in self.titles:
            return self.titles.get("custom-title") or self.titles["ai-title"]
        # A summary's leafUuid may point into another session file; prefer one about this file.
        local = [text for text, leaf in self.summaries if leaf in self.seen_uuids]
        candidates = local or [text for text, _ in self.summaries]
        return candidates[-1] if candidates else None

    def turns(self) -> list[Turn]:
        return [
            replace(entry.first, text="\n\n".join(entry.parts))
            if isinstance(entry, _Reply)
            else entry
            for entry in self.entries
        ]


def read_records(
    path: Path, *, max_line_bytes: int = MAX_LINE_BYTES
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(1-based line number, record) of every complete line of a transcript that is a JSON object.

    For readers that need whole records (the training export) rather than `read_transcript`'s
    prose and summaries. Lines that are not a JSON object, lines over `max_line_bytes` and a last
    line without a newline are passed over, as `read_transcript` does.
    """
    with path.open("rb") as handle:
        yield from JsonLines(handle, 0, max_line_bytes)


def read_transcript(
    path: Path, start_offset: int = 0, *, max_line_bytes: int = MAX_LINE_BYTES
) -> TranscriptChunk:
    """Read the complete lines of a transcript from byte `start_offset` on.

    Lines that are not a JSON object are counted in `malformed` and skipped (blank lines are
    passed over), as are records whose fields have shapes no Claude Code version writes; lines
    longer than `max_line_bytes` are skipped as "oversize"; unknown record types are ignored.
    Invalid UTF-8 is replaced, never fatal. If the file is now shorter than `start_offset`,
    nothing is read.
    """
    reader = _ChunkReader()
    first_line = count_lines_before(path, start_offset) if start_offset else 0
    with path.open("rb") as handle:
        lines = JsonLines(handle, start_offset, max_line_bytes)
        lines.take_all(reader.take, first_line)
    reader.skipped.update(lines.skipped)
    return TranscriptChunk(
        turns=reader.turns(),
        events=with_outcomes(reader.events, reader.results),
        skipped=dict(sorted(reader.skipped.items())),
        malformed=lines.malformed,
        lines_read=lines.lines_read,
        end_offset=lines.end_offset,
        cwd=reader.cwd,
        session_id=reader.session_id,
        title=reader.title(),
        version=reader.version,
        late_results=late_outcomes(reader.results, {e.tool_use_id for e in reader.events}),
        prompts=list(reader.prompts.values()),
        actions=reader.actions,
    )


# --- Claude Code as the importer knows it --------------------------------------------------


def checked_transcript(raw: str) -> Path:
    """A Claude Code transcript path, `<config dir>/projects/<project>/<session>.jsonl`."""
    path = absolute_path(raw)
    if path.suffix != ".jsonl" or path.parent.parent.name != "projects":
        raise InvalidInput(
            "transcript_path must be a Claude Code transcript: <config dir>/projects/"
            "<project>/<session>.jsonl"
        )
    return existing_file(path)


def transcript_files(path: Path, session_id: str) -> list[TranscriptFile]:
    """A Claude Code session's transcript and its sub-agents' files, as discovery lists them."""
    found = discover_transcripts(path.parent.parent)
    return [
        f
        for f in found
        if f.path == path
        or (
            f.kind == "subagent" and f.session_id == path.stem and f.project_dir == path.parent.name
        )
    ]


CLAUDE_CODE = AgentFormat(
    source=about.NAME,
    label=about.LABEL,
    folder="Claude Code projects",
    default_folder="$CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects",
    default_root=default_projects_root,
    discover=discover_transcripts,
    read=read_transcript,
    hook_path=checked_transcript,
    hook_files=transcript_files,
)
