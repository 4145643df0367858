"""Where an agent CLI that claude-memory runs to distil works, and the mark it carries (#67).

Standard library only: the importer asks `is_child_folder` of every session it reads, and the
hook client (server/hooks.py, which keeps its own copy of the marker's name) must not import
the learning jobs.
"""

from __future__ import annotations

from pathlib import Path

# Set in the child's environment; our hook client does nothing when it sees it.
CHILD_MARKER = "CLAUDE_MEMORY_CHILD"
# The child's working folder, under the data dir: no session run there is ever imported.
CHILD_FOLDER = "llm-child"


def child_folder(home: Path) -> Path:
    return home / CHILD_FOLDER


def is_child_folder(cwd: str, home: Path) -> bool:
    """Whether a session's `cwd` is the distilling child's folder (or inside it)."""
    if not cwd:
        return False
    folder = child_folder(home)
    path = Path(cwd)
    return path == folder or folder in path.parents
