"""What the importer needs to know of a coding agent's sessions: where they live, how to list
and read them, and which of them a hook may name.

Every agent's reader returns the same TranscriptChunk (turns, tool events, prompts, where to
resume), so one importer (server/ingest/importer.py) stores them all alike; only finding the
files and reading them differ. Each agent's reader module defines its `AgentFormat`
(claude_code.py, codex.py, gemini.py, opencode.py), and the agent's entry in the registry
(server/agents/registry.py) carries it, so `import`'s options, the hook route's `agent` field
and the session-end import follow from the registry. `source` is what every memory, session and
journal row of that agent records, so search, lists and the UI can tell and filter the agents.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from server.ingest.discovery import TranscriptFile
from server.ingest.transcript_chunk import TranscriptChunk


@dataclass(frozen=True, slots=True)
class AgentFormat:
    """One agent's sessions: where they live by default, how to list and read them."""

    source: str  # the agent's name, recorded on every memory, session and event it brings
    label: str  # for people: "Codex CLI"
    folder: str  # what the default folder holds, for messages: "Codex CLI sessions"
    default_folder: str  # where that is by default, for `import --help`
    default_root: Callable[[Mapping[str, str], Path], Path]
    discover: Callable[[Path], list[TranscriptFile]]
    read: Callable[[Path, int], TranscriptChunk]
    # The session file a hook sends, checked (InvalidInput when it is not one of the agent's),
    # and that session's files (the file and its sub-agents'), given the hook's session id.
    hook_path: Callable[[str], Path]
    hook_files: Callable[[Path, str], list[TranscriptFile]]


def file_size(path: Path) -> int | None:
    """A found file's size; None when it is gone already."""
    try:
        return path.stat().st_size
    except OSError:
        return None
