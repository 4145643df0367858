"""Checking the session file an agent's hook names, for every agent's own check.

The turn-end and session-end hooks (Claude Code's Stop and SessionEnd, Codex's Stop and
SessionEnd, Gemini's AfterAgent and SessionEnd) send the session file the agent is writing, and
the server imports it at once (server/ingest/session_imports.py). Only an agent's own session
files are read, recognised by where they sit (each agent's `AgentFormat.hook_path`, beside its
reader); anything else is refused, so a local caller cannot make the server read arbitrary
files. These are the checks they share.
"""

from __future__ import annotations

import os
from pathlib import Path

from server.core.errors import InvalidInput
from server.ingest.discovery import TranscriptFile


def absolute_path(raw: str) -> Path:
    """`raw` as a normalised absolute path; InvalidInput for a relative one."""
    if not raw or not os.path.isabs(raw):
        raise InvalidInput("transcript_path must be an absolute path")
    return Path(os.path.normpath(raw))


def existing_file(path: Path) -> Path:
    """`path`, when it names a file; InvalidInput otherwise."""
    try:
        is_file = path.is_file()
    except OSError as exc:  # a name longer than the system allows, say
        raise InvalidInput(f"transcript_path cannot be read: {exc.strerror}") from exc
    if not is_file:
        raise InvalidInput(f"no session file at {path}")
    return path


class NotWrittenYet(InvalidInput):
    """A session file of the right shape that its agent has not written yet (nothing is there)."""


def file_or_not_written_yet(path: Path) -> Path:
    """`path`, when it names a file; NotWrittenYet when nothing is there (yet); InvalidInput
    when something else is (a folder, a name too long to look up)."""
    if not os.path.lexists(path):
        raise NotWrittenYet(f"no session file at {path} yet")
    return existing_file(path)


def numbered(name: str, digits: int) -> bool:
    """A folder name of exactly `digits` digits (a year, month or day)."""
    return len(name) == digits and name.isdigit()


def session_file(path: Path, kind: str, folder: str, parent_session: str | None) -> TranscriptFile:
    """A session file (or a sub-agent's, `kind` "subagent") a hook's session is made of."""
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
