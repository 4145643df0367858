"""Find Claude Code transcripts under a projects root (`~/.claude/projects`).

Three layouts (FORMATS.md §1.1, §1.7): `<project>/<session>.jsonl` for sessions,
`<project>/<session>/subagents/agent-<id>.jsonl` for 2.1.x sub-agents (workflow sub-folders
included) and flat `<project>/agent-<id>.jsonl` for 2.0.x sub-agents, whose parent session only
the lines' `sessionId` tells. Claude Code's own `memory/`, spilled `tool-results/` and
`.meta.json` files are not transcripts.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from server.agent_facts import claude_code
from server.ingest.folders import file_size, list_folder

__all__ = ["TranscriptFile", "TranscriptKind", "default_projects_root", "discover_transcripts"]

logger = logging.getLogger(__name__)

TranscriptKind = Literal["session", "subagent"]


@dataclass(frozen=True, slots=True)
class TranscriptFile:
    """A transcript found under a projects root, with what its location says about it.

    `project_dir` is the encoded folder name, only for display and grouping: the real project
    path is the `cwd` inside the lines, because the encoding is lossy (FORMATS.md §1.1).
    """

    path: Path
    kind: TranscriptKind
    project_dir: str
    session_id: str | None  # for a 2.0.x flat agent file only its lines' sessionId tells
    agent_id: str | None  # sub-agents: from the file name `agent-<id>.jsonl`
    agent_type: str | None  # sub-agents with a `.meta.json`: e.g. "Explore"
    parent_tool_use_id: str | None  # the Agent/Task tool_use that spawned it (`.meta.json`)
    size: int  # bytes when found; less than a stored offset means the file was replaced


def default_projects_root(environ: Mapping[str, str], home: Path) -> Path:
    """`$CLAUDE_CONFIG_DIR/projects`, else `~/.claude/projects` (FORMATS.md §1.1)."""
    return claude_code.claude_dir(environ, home) / "projects"


def _read_meta(transcript: Path) -> Mapping[str, Any]:
    meta = transcript.with_name(transcript.name.removesuffix(".jsonl") + ".meta.json")
    try:
        data = json.loads(meta.read_bytes())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, Mapping) else {}


def _text_field(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) and value else None


def _subagent_files(folder: Path) -> Iterator[Path]:
    """`agent-*.jsonl` under a session's `subagents/`, workflow sub-folders included."""
    for entry in list_folder(folder):
        if entry.is_dir(follow_symlinks=False):  # a linked folder could loop
            yield from _subagent_files(Path(entry.path))
        elif entry.name.startswith("agent-") and entry.name.endswith(".jsonl"):
            yield Path(entry.path)


def discover_transcripts(root: Path) -> list[TranscriptFile]:
    """Every session and sub-agent transcript under a projects root, sorted by path.

    Skips Claude Code's own `memory/`, spilled `tool-results/`, `.meta.json` and anything else;
    folders that cannot be read are logged and skipped.
    """
    found: list[TranscriptFile] = []
    for project in list_folder(root):
        if not project.is_dir():
            continue
        for entry in list_folder(Path(project.path)):
            path = Path(entry.path)
            if entry.is_file() and entry.name.endswith(".jsonl"):
                stem = entry.name.removesuffix(".jsonl")
                legacy_agent = stem.startswith("agent-")
                found.append(
                    TranscriptFile(
                        path=path,
                        kind="subagent" if legacy_agent else "session",
                        project_dir=project.name,
                        session_id=None if legacy_agent else stem,
                        agent_id=stem.removeprefix("agent-") if legacy_agent else None,
                        agent_type=None,
                        parent_tool_use_id=None,
                        size=file_size(path),
                    )
                )
            elif entry.is_dir() and entry.name != "memory":
                for agent in _subagent_files(path / "subagents"):
                    meta = _read_meta(agent)
                    found.append(
                        TranscriptFile(
                            path=agent,
                            kind="subagent",
                            project_dir=project.name,
                            session_id=entry.name,
                            agent_id=agent.name.removesuffix(".jsonl").removeprefix("agent-"),
                            agent_type=_text_field(meta, "agentType"),
                            parent_tool_use_id=_text_field(meta, "toolUseId"),
                            size=file_size(agent),
                        )
                    )
    return sorted(found, key=lambda item: item.path.relative_to(root).as_posix())
