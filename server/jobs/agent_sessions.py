"""Import a Codex or Gemini CLI session as soon as its hooks report the end of a turn.

The counterpart of ingest/recall.py's transcript imports for Claude Code: the turn-end and
session-end hooks (Codex's Stop and SessionEnd, Gemini's AfterAgent and SessionEnd) send the
session file the agent is writing, and it is imported in the background, incrementally, with
that agent's reader (ingest/agents.py), the same way `claude-memory import --codex / --gemini`
would, with the same read positions, so the hourly import then finds nothing new.

Only the agent's own session files are read, recognised by where they sit; anything else is
refused, so a local caller cannot make the server read arbitrary files:
- Codex: `<CODEX_HOME>/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl` (the hooks'
  `transcript_path` is the rollout).
- Gemini CLI: `<~/.gemini>/tmp/<project>/chats/session-<time>-<id>.jsonl` (`.json` before
  0.39), with the session's sub-agent files in `chats/<session id>/`.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import anyio

from server.core.errors import InvalidInput
from server.ingest.agents import CODEX, GEMINI, AgentFormat
from server.ingest.discovery import TranscriptFile
from server.ingest.importer import ImportFilters, ImportSummary, SessionImporter
from server.ingest.recall import TranscriptImports
from server.service.memory import MemoryService

logger = logging.getLogger(__name__)

FORMATS = {"codex": CODEX, "gemini": GEMINI}
GEMINI_SUFFIXES = (".jsonl", ".json")


def _absolute(raw: str) -> Path:
    if not raw or not os.path.isabs(raw):
        raise InvalidInput("transcript_path must be an absolute path")
    return Path(os.path.normpath(raw))


def _existing(path: Path) -> Path:
    try:
        is_file = path.is_file()
    except OSError as exc:  # a name longer than the system allows, say
        raise InvalidInput(f"transcript_path cannot be read: {exc.strerror}") from exc
    if not is_file:
        raise InvalidInput(f"no session file at {path}")
    return path


def _numbered(name: str, digits: int) -> bool:
    return len(name) == digits and name.isdigit()


def checked_rollout(raw: str) -> Path:
    """A Codex rollout path, `…/sessions/YYYY/MM/DD/rollout-*.jsonl`, naming a file."""
    path = _absolute(raw)
    parents = path.parents
    if not (
        path.name.startswith("rollout-")
        and path.suffix == ".jsonl"
        and len(parents) > 4
        and _numbered(parents[0].name, 2)
        and _numbered(parents[1].name, 2)
        and _numbered(parents[2].name, 4)
        and parents[3].name == "sessions"
    ):
        raise InvalidInput(
            "transcript_path must be a Codex rollout: <CODEX_HOME>/sessions/YYYY/MM/DD/"
            "rollout-….jsonl"
        )
    return _existing(path)


def checked_gemini_session(raw: str) -> Path:
    """A Gemini CLI session path, `…/tmp/<project>/chats/session-*.jsonl` (or `.json`)."""
    path = _absolute(raw)
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
    return _existing(path)


def session_files(agent: str, path: Path, session_id: str) -> list[TranscriptFile]:
    """The files of one checked session, as the agent's discovery would list them."""
    if agent == "codex":
        return [_file(path, "session", "/".join(p.name for p in path.parents[2::-1]), None)]
    files = [_file(path, "session", path.parents[1].name, None)]
    if session_id and Path(session_id).name == session_id and session_id not in (".", ".."):
        folder = path.parent / session_id  # sub-agents of the session (Gemini 0.38 and later)
        try:
            names = sorted(entry.name for entry in os.scandir(folder) if entry.is_file())
        except OSError:
            names = []
        files += [
            _file(folder / name, "subagent", path.parents[1].name, session_id)
            for name in names
            if name.endswith(GEMINI_SUFFIXES)
        ]
    return files


def _file(path: Path, kind: str, folder: str, parent_session: str | None) -> TranscriptFile:
    try:
        size = path.stat().st_size
    except OSError:
        size = 0
    return TranscriptFile(
        path=path,
        kind="subagent" if kind == "subagent" else "session",
        project_dir=folder,
        session_id=parent_session,
        agent_id=path.stem if kind == "subagent" else None,
        agent_type=None,
        parent_tool_use_id=None,
        size=size,
    )


async def import_agent_session(
    service: MemoryService, agent: AgentFormat, files: list[TranscriptFile]
) -> ImportSummary:
    """Import one session's files from where earlier imports stopped, with `agent`'s reader."""
    return await SessionImporter(service, ImportFilters(), agent=agent).run_files(files)


class AgentSessionImports(TranscriptImports):
    """Background imports of Codex and Gemini sessions, one at a time, as for Claude Code.

    The queue, the repeat of a file asked for again while it is imported and the shutdown
    grace are TranscriptImports'; only what is read differs.
    """

    def __init__(self, service: MemoryService) -> None:
        super().__init__(service)
        # file -> (agent, session id), while the file is queued or being imported
        self._sessions: dict[Path, tuple[str, str]] = {}

    def request_session(self, agent: str, transcript_path: str, session_id: str) -> bool:
        """Start importing `agent`'s session file; False if it was already being imported."""
        if agent not in FORMATS:
            raise InvalidInput(f"agent must be one of {', '.join(FORMATS)}, got {agent!r}")
        check = checked_rollout if agent == "codex" else checked_gemini_session
        path = check(transcript_path)
        self._sessions[path] = (agent, session_id)
        return self.request(path)

    async def _run(self, transcript: Path) -> None:
        try:
            await super()._run(transcript)
        finally:
            # Nothing awaits between the queue forgetting the file and this, so a request for
            # it cannot slip in between: the next request records the session again.
            self._sessions.pop(transcript, None)

    async def _import_once(self, transcript: Path) -> None:
        agent, session_id = self._sessions[transcript]
        try:
            files = await anyio.to_thread.run_sync(session_files, agent, transcript, session_id)
            summary = await import_agent_session(self.service, FORMATS[agent], files)
        except Exception:
            logger.exception("hook import of %s session %s failed", agent, transcript)
            return
        for error in summary.errors[:5]:
            logger.error("hook import of %s: %s", transcript, error)
        logger.info(
            "hook import of %s session %s: %d turns imported, %d files unchanged, %.2f s",
            agent,
            transcript.name,
            summary.turns_imported,
            summary.files_unchanged,
            summary.seconds,
        )
