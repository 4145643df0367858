"""Which session files an agent's hooks may send, and the files of such a session.

The turn-end and session-end hooks (Claude Code's Stop and SessionEnd, Codex's Stop and
SessionEnd, Gemini's AfterAgent and SessionEnd) send the session file the agent is writing, and
the server imports it at once (server/ingest/session_imports.py). Only an agent's own session
files are read, recognised by where they sit; anything else is refused, so a local caller
cannot make the server read arbitrary files:
- Claude Code: `<config dir>/projects/<project>/<session>.jsonl`, with its sub-agents' files
  in `<session>/subagents/`.
- Codex: `<CODEX_HOME>/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl` (the hooks'
  `transcript_path` is the rollout).
- Gemini CLI: `<~/.gemini>/tmp/<project>/chats/session-<time>-<id>.jsonl` (`.json` before
  0.39), with the session's sub-agent files in `chats/<session id>/`.

Each agent's pair (the path check, the session's files) is part of its entry in
server/ingest/agents.py.
"""

from __future__ import annotations

import os
from pathlib import Path

from server.core.errors import InvalidInput
from server.ingest.discovery import TranscriptFile, discover_transcripts

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


def checked_transcript(raw: str) -> Path:
    """A Claude Code transcript path, `<config dir>/projects/<project>/<session>.jsonl`."""
    path = _absolute(raw)
    if path.suffix != ".jsonl" or path.parent.parent.name != "projects":
        raise InvalidInput(
            "transcript_path must be a Claude Code transcript: <config dir>/projects/"
            "<project>/<session>.jsonl"
        )
    return _existing(path)


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


def rollout_files(path: Path, session_id: str) -> list[TranscriptFile]:
    """A Codex session: its rollout alone, in the folder of its day."""
    return [_file(path, "session", "/".join(p.name for p in path.parents[2::-1]), None)]


def gemini_session_files(path: Path, session_id: str) -> list[TranscriptFile]:
    """A Gemini CLI session's file and, from 0.38, its sub-agents' files."""
    files = [_file(path, "session", path.parents[1].name, None)]
    if session_id and Path(session_id).name == session_id and session_id not in (".", ".."):
        folder = path.parent / session_id
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
