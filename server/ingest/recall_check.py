"""Prompt recall checked against the code before the agent sees it (issue #37, first step).

When the server shares the machine with its user (single-user mode: no users, so the hook is
the owner's own), the memories prompt recall picked are checked against the working tree the
hook names (its `cwd`, up to the repository's top folder) with server/ingest/tree_check.py:
an **orphaned** memory (the files it is about are gone) is left out, a **drifted** one goes
after the others and says what changed ("drifted: go is now 1.23 (was 1.22)"); fresh and
unchecked ones are told as before. On a team's server the tree is the user's, not the
server's, so nothing is checked there (the hook process will do it, a later step); a value
read from a file is redacted like anything else before it is shown. The check has
CHECK_BUDGET_SECONDS: past it, the memories go out unchecked.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import anyio
from cachetools import LRUCache

from server.core.access import current_viewer
from server.core.models.search import SearchHit
from server.core.redact import redact
from server.domain.anchors import anchors_of
from server.ingest.tree_check import MemoryCheck, TreeChecker

logger = logging.getLogger(__name__)

CHECK_BUDGET_SECONDS = 0.25
MAX_TREES = 32  # checkers kept (each remembers the files it read, by modification time)


class WorkingTrees:
    """Checks recalled memories against the tree of a hook's `cwd`; one per app."""

    def __init__(self) -> None:
        self._checkers: LRUCache[Path, TreeChecker] = LRUCache(MAX_TREES)

    async def checked(
        self, cwd: str, hits: Sequence[SearchHit]
    ) -> tuple[list[SearchHit], dict[int, str]]:
        """`hits` without the orphaned ones, drifted ones last; and a note per drifted id."""
        root = _tree_root(cwd) if current_viewer() is None else None
        if root is None or not hits:
            return list(hits), {}
        checker = self._checkers.get(root)
        if checker is None:
            checker = self._checkers[root] = TreeChecker(root)
        memories = [
            ([(a.kind, a.name, a.value) for a in anchors_of(hit.content)], hit.created_at)
            for hit in hits
        ]
        checks: list[MemoryCheck] | None = None
        with anyio.move_on_after(CHECK_BUDGET_SECONDS):
            checks = await anyio.to_thread.run_sync(checker.check, memories, abandon_on_cancel=True)
        if checks is None:
            logger.info("recall check of %s ran out of time; memories go out unchecked", root)
            return list(hits), {}
        kept = [(hit, check) for hit, check in zip(hits, checks, strict=True)]
        fresh = [hit for hit, check in kept if check.verdict in ("fresh", "unchecked")]
        drifted = [hit for hit, check in kept if check.verdict == "drifted"]
        notes = {
            hit.id: redact(check.note()).text for hit, check in kept if check.verdict == "drifted"
        }
        return fresh + drifted, notes


def _tree_root(cwd: str) -> Path | None:
    """The repository's top folder holding `cwd` (or `cwd` itself outside one); None if no such
    folder is on this machine."""
    folder = Path(cwd.strip()) if cwd.strip() else None
    if folder is None or not folder.is_absolute() or not folder.is_dir():
        return None
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return folder
