"""Find Google Gemini CLI saved sessions under `~/.gemini/tmp`, and the project each belongs to.

Layout (gemini-cli utils/paths.ts, services/chatRecordingService.ts; the versions read are
listed in tests/fixtures/gemini/README.md): `tmp/<project>/chats/session-….jsonl` (0.39.0 and
later) or `session-….json` (up to 0.38.2), and sub-agents in `chats/<parent session id>/`. No
session records its working directory, so the project root comes from the folder: older
versions name it `sha256(project root)`, newer ones a slug whose `.project_root` file (or the
`projects.json` registry beside `tmp/`) names the root. The reader (`gemini.py`) uses the same
lookup to give each turn its cwd.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from server.agent_facts.gemini import gemini_dir
from server.ingest.folders import file_size, list_folder

__all__ = [
    "GeminiSessionFile",
    "SessionFormat",
    "default_gemini_root",
    "discover_gemini_sessions",
    "project_hash",
    "project_registry",
    "project_root",
]

SessionFormat = Literal["jsonl", "json"]

_PROJECT_HASH = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class GeminiSessionFile:
    """A saved Gemini CLI session found under a tmp root, with what its location says about it."""

    path: Path
    format: SessionFormat  # "json": rewritten whole on every save (0.38.2 and older)
    project_dir: str  # the folder under tmp/: sha256 of the project root, or a slug (0.30+)
    project_hash: str | None  # sha256 of the project root, when the folder or its marker tells
    project_root: str | None  # from the folder's `.project_root` or `projects.json`
    is_subagent: bool
    parent_session_id: str | None  # sub-agents under `chats/<parent session id>/`
    size: int  # bytes when found


def default_gemini_root(environ: Mapping[str, str], home: Path) -> Path:
    """`$GEMINI_CLI_HOME/.gemini/tmp`, else `~/.gemini/tmp` (gemini-cli utils/paths.ts)."""
    return gemini_dir(environ, home) / "tmp"


def project_hash(root: str) -> str:
    """What Gemini records as a session's `projectHash`: the sha256 of its project root."""
    return hashlib.sha256(root.encode("utf-8")).hexdigest()


def project_registry(tmp_root: Path) -> dict[str, str]:
    """Slug -> project root, from `projects.json` beside the tmp root (the project registry)."""
    try:
        data = json.loads((tmp_root.parent / "projects.json").read_bytes())
    except (OSError, ValueError):
        return {}
    projects = data.get("projects") if isinstance(data, dict) else None
    if not isinstance(projects, dict):
        return {}
    return {slug: path for path, slug in projects.items() if isinstance(slug, str)}


def project_root(project_dir: Path, registry: Mapping[str, str]) -> str | None:
    """The root a project folder belongs to: its `.project_root` marker, else the registry."""
    try:
        marker = (project_dir / ".project_root").read_text("utf-8").strip()
    except (OSError, ValueError):
        marker = ""
    return marker or registry.get(project_dir.name)


def _format(name: str) -> SessionFormat | None:
    if name.endswith(".jsonl"):
        return "jsonl"
    return "json" if name.endswith(".json") else None


def _session_files(chats: Path) -> Iterator[tuple[Path, SessionFormat, bool, str | None]]:
    """(path, format, is_subagent, parent session id) of each session file under `chats/`."""
    entries = list_folder(chats)
    names = {entry.name for entry in entries}
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            for inner in list_folder(Path(entry.path)):
                fmt = _format(inner.name)
                if fmt is not None and inner.is_file():
                    yield Path(inner.path), fmt, True, entry.name
            continue
        fmt = _format(entry.name)
        if fmt is None or not entry.is_file():
            continue
        if fmt == "json" and entry.name + "l" in names:
            continue  # resumed in 0.39+: its whole record was copied into the .jsonl beside it
        yield Path(entry.path), fmt, not entry.name.startswith("session-"), None


def discover_gemini_sessions(root: Path) -> list[GeminiSessionFile]:
    """Every saved session under a tmp root (`default_gemini_root`), sorted by path.

    A missing root gives an empty list; folders that cannot be read are logged and skipped.
    Gemini's backups (`….jsonl.unreadable-<ms>`) and temp files are not sessions.
    """
    registry = project_registry(root)
    found: list[GeminiSessionFile] = []
    for project in list_folder(root):
        if not project.is_dir():
            continue
        folder_root = project_root(Path(project.path), registry)
        if _PROJECT_HASH.fullmatch(project.name):
            folder_hash: str | None = project.name
        else:
            folder_hash = project_hash(folder_root) if folder_root else None
        for path, fmt, subagent, parent in _session_files(Path(project.path) / "chats"):
            found.append(
                GeminiSessionFile(
                    path=path,
                    format=fmt,
                    project_dir=project.name,
                    project_hash=folder_hash,
                    project_root=folder_root,
                    is_subagent=subagent,
                    parent_session_id=parent,
                    size=file_size(path),
                )
            )
    return sorted(found, key=lambda item: item.path.relative_to(root).as_posix())
