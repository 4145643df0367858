"""The instruction files promote reads and writes (#58): where they are, their text, the diff,
and the backup kept before a write.

Only four names are ever touched, at the repository's root: CLAUDE.md (Claude Code), AGENTS.md
(Codex, OpenCode and several others), GEMINI.md (Gemini CLI) and
.github/copilot-instructions.md. The root is the repository holding the working folder, kept
inside the project's folder (a project that is a sub-folder of a repository keeps its own
files); nothing is written outside it.
"""

from __future__ import annotations

import difflib
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from server.core.errors import InvalidInput
from server.domain.instruction_section import InstructionText, SectionError, parse
from server.worktree.tree_check import tree_root

INSTRUCTION_FILES = ("CLAUDE.md", "AGENTS.md", "GEMINI.md", ".github/copilot-instructions.md")
CREATED_WHEN_NONE = "AGENTS.md"
BACKUP_SUFFIX = ".claude-memory-backup-"


@dataclass(frozen=True)
class InstructionFile:
    """One instruction file as read: its path, text and our section's place in it."""

    path: Path
    name: str
    exists: bool
    text: str
    parsed: InstructionText


def repository_root(folder: str, cwd: str | None) -> Path:
    """Where the instruction files are: the repository holding `cwd` (or `folder`), unless that
    reaches above the project's `folder`, then `folder` itself. InvalidInput when `cwd` is not
    inside `folder` or the folder is not on this machine."""
    base = _real(folder)
    if base is None or not base.is_dir():
        raise InvalidInput(f"the project's folder {folder!r} is not a folder on this machine")
    start = base
    if cwd:
        start_at = _real(cwd)
        if start_at is None or not start_at.is_relative_to(base):
            raise InvalidInput(f"cwd must be inside the project's folder {str(base)!r}")
        start = start_at
    root = tree_root(str(start)) or start
    return root if root.is_relative_to(base) else base


def read_files(root: Path) -> list[InstructionFile]:
    """The instruction files at `root`; AGENTS.md (not there yet) when there is none."""
    found = []
    for name in INSTRUCTION_FILES:
        path = root / name
        if path.is_file():
            try:
                text = _read(path)
                parsed = parse(text)
            except UnicodeDecodeError:
                raise InvalidInput(f"{name} is not UTF-8 text: promote leaves it alone") from None
            except SectionError as exc:
                raise InvalidInput(f"{name}: {exc}") from None
            found.append(InstructionFile(path, name, True, text, parsed))
    if not found:
        path = root / CREATED_WHEN_NONE
        found.append(InstructionFile(path, CREATED_WHEN_NONE, False, "", parse("")))
    return found


def unified_diff(name: str, old: str, new: str) -> str:
    """The change from `old` to `new` as a unified diff ("" when there is none)."""
    if old == new:
        return ""
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=f"a/{name}" if old else "/dev/null",
            tofile=f"b/{name}",
        )
    )


def write_with_backup(file: InstructionFile, text: str, now: datetime | None = None) -> str | None:
    """Write `text` to the file, a copy of the old one kept beside it first; the copy's path
    (None for a new file)."""
    backup = None
    if file.exists:
        stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%S%fZ")
        copy = file.path.with_name(f"{file.path.name}{BACKUP_SUFFIX}{stamp}")
        shutil.copy2(file.path, copy)
        backup = str(copy)
    with file.path.open("w", encoding="utf-8", newline="") as out:
        out.write(text)
    return backup


def _read(path: Path) -> str:
    with path.open(encoding="utf-8", newline="") as source:
        return source.read()


def _real(folder: str) -> Path | None:
    try:
        path = Path(folder.strip())
        return path.resolve() if path.is_absolute() else None
    except (OSError, ValueError):
        return None
