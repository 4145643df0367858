"""The coding agents whose sessions are imported, and how each one's files are found and read.

Every agent's reader returns the same TranscriptChunk (turns, tool events, prompts, where to
resume), so one importer (server/ingest/importer.py) stores them all alike; only finding the
files and reading them differ. `source` is what every memory, session and journal row of that
agent records, so search, lists and the UI can tell and filter the agents. An entry also says
which session files the agent's hooks may send and which files make up such a session
(server/ingest/hook_sessions.py), so one queue imports every agent's sessions when its hooks
fire (server/ingest/session_imports.py), and `import`'s options are made from the entries.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from server.ingest.claude_code import (
    TranscriptChunk,
    TranscriptFile,
    discover_transcripts,
    read_transcript,
)
from server.ingest.codex import (
    default_codex_root,
    discover_codex_rollouts,
    read_codex_rollout,
    rollout_session_id,
)
from server.ingest.discovery import default_projects_root
from server.ingest.gemini import default_gemini_root, discover_gemini_sessions, read_gemini_session
from server.ingest.hook_sessions import (
    checked_gemini_session,
    checked_rollout,
    checked_transcript,
    gemini_session_files,
    rollout_files,
    transcript_files,
)
from server.ingest.opencode import (
    checked_opencode_session,
    default_opencode_root,
    discover_opencode_sessions,
    opencode_session_files,
    read_opencode_session,
)

AgentName = Literal["claude-code", "codex", "gemini", "opencode"]


@dataclass(frozen=True, slots=True)
class AgentFormat:
    """One agent's sessions: where they live by default, how to list and read them."""

    source: AgentName  # recorded on every memory, session and event it brings
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


def _codex_files(root: Path) -> list[TranscriptFile]:
    """Codex rollouts: one file per session, its id in the file name, no sub-agent files."""
    files = []
    for path in discover_codex_rollouts(root):
        size = _size(path)
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


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except OSError:
        return None


CLAUDE_CODE = AgentFormat(
    source="claude-code",
    label="Claude Code",
    folder="Claude Code projects",
    default_folder="$CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects",
    default_root=default_projects_root,
    discover=discover_transcripts,
    read=read_transcript,
    hook_path=checked_transcript,
    hook_files=transcript_files,
)
CODEX = AgentFormat(
    source="codex",
    label="Codex CLI",
    folder="Codex CLI sessions",
    default_folder="$CODEX_HOME/sessions, else ~/.codex/sessions",
    default_root=default_codex_root,
    discover=_codex_files,
    read=read_codex_rollout,
    hook_path=checked_rollout,
    hook_files=rollout_files,
)
GEMINI = AgentFormat(
    source="gemini",
    label="Gemini CLI",
    folder="Gemini CLI sessions",
    default_folder="~/.gemini/tmp, or under $GEMINI_CLI_HOME",
    default_root=default_gemini_root,
    discover=_gemini_files,
    read=read_gemini_session,
    hook_path=checked_gemini_session,
    hook_files=gemini_session_files,
)
OPENCODE = AgentFormat(
    source="opencode",
    label="OpenCode",
    folder="OpenCode data",
    default_folder="$XDG_DATA_HOME/opencode, else ~/.local/share/opencode (its opencode*.db)",
    default_root=default_opencode_root,
    discover=discover_opencode_sessions,
    read=read_opencode_session,
    hook_path=checked_opencode_session,
    hook_files=opencode_session_files,
)
AGENTS: dict[str, AgentFormat] = {
    agent.source: agent for agent in (CLAUDE_CODE, CODEX, GEMINI, OPENCODE)
}


def option_dest(agent: AgentFormat) -> str:
    """The argparse destination of the agent's `import --<source>` option."""
    return agent.source.replace("-", "_")
