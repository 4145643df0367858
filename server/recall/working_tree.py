"""Prompt recall checked against the code before the agent sees it (issue #37).

When the server shares the machine with its user (single-user mode: no users, so the hook is
the owner's own), the memories prompt recall picked (and those the session-start context
shows) are checked against the working tree the
hook names (its `cwd`, up to the repository's top folder) with server/worktree/tree_check.py:
an **orphaned** memory (the files it is about are gone) is left out, a **drifted** one goes
after the others and says what changed ("drifted: go is now 1.23 (was 1.22)"); fresh and
unchecked ones are told as before. On a team's server the tree is the user's, not the
server's, so nothing is checked there: the hook answer carries the anchors of what it shows
(`hook_check_items`) and the hook process checks them where the tree is
(server/worktree/context_check.py), as it does when the folder is not on the server's machine.
A value read from a file is redacted like anything else before it is shown. The check has
CHECK_BUDGET_SECONDS: past it, the memories go out unchecked.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, TypeVar

import anyio
from cachetools import LRUCache

from server.core.access import current_viewer
from server.core.models.search import SearchResult
from server.domain.anchors import anchors_of
from server.worktree.context_check import check_items, shown_note
from server.worktree.tree_check import MemoryCheck, TreeChecker, tree_root

logger = logging.getLogger(__name__)


class Recalled(Protocol):
    """What the check reads of a memory: a search hit and a stored memory both have it."""

    @property
    def id(self) -> int: ...

    @property
    def content(self) -> str: ...

    @property
    def created_at(self) -> datetime: ...


R = TypeVar("R", bound=Recalled)

CHECK_BUDGET_SECONDS = 0.25
MAX_TREES = 32  # checkers kept (each remembers the files it read, by modification time)


class WorkingTrees:
    """Checks memories against the tree of a `cwd`; the checkers it keeps remember the files
    they read (by path and mtime), so one per process (WORKING_TREES) serves the hooks, REST
    and MCP."""

    def __init__(self) -> None:
        self._checkers: LRUCache[Path, TreeChecker] = LRUCache(MAX_TREES)

    def checks_here(self, cwd: str) -> bool:
        """Whether this process checks memories against the tree of `cwd`: single-user mode
        and the folder on this machine. Otherwise the hook process does
        (server/worktree/context_check.py)."""
        return current_viewer() is None and tree_root(cwd) is not None

    async def verdicts(
        self, cwd: str, hits: Sequence[Recalled], budget: float = CHECK_BUDGET_SECONDS
    ) -> list[MemoryCheck] | None:
        """Each memory's check against the tree of `cwd`; None when nothing could be checked
        (a team's server, no such folder here, or the `budget` in seconds ran out)."""
        root = tree_root(cwd) if current_viewer() is None else None
        if root is None or not hits:
            return None
        memories = [
            ([(a.kind, a.name, a.value) for a in anchors_of(hit.content)], hit.created_at)
            for hit in hits
        ]
        if not any(anchors for anchors, _ in memories):
            return [MemoryCheck("unchecked", 0) for _ in hits]  # nothing to read: no thread
        checker = self._checkers.get(root)
        if checker is None:
            checker = self._checkers[root] = TreeChecker(root)
        checks: list[MemoryCheck] | None = None
        with anyio.move_on_after(budget):
            checks = await anyio.to_thread.run_sync(checker.check, memories, abandon_on_cancel=True)
        if checks is None:
            logger.info("the check of %s ran out of time; memories go out unchecked", root)
        return checks

    async def with_verdicts(self, result: SearchResult, cwd: str | None) -> SearchResult:
        """A search's hits, in the same order, each with its verdict against `cwd`'s tree."""
        if cwd is None:
            return result
        checks = await self.verdicts(cwd, result.hits)
        if checks is None:
            return replace(result, hits=[replace(h, verdict="unchecked") for h in result.hits])
        hits = [
            replace(hit, verdict=check.verdict, verdict_note=shown_note(check))
            for hit, check in zip(result.hits, checks, strict=True)
        ]
        return replace(result, hits=hits)

    async def checked(self, cwd: str, hits: Sequence[R]) -> tuple[list[R], dict[int, str]]:
        """`hits` (search hits or memories) without the orphaned ones, drifted ones last; and
        a note per drifted id."""
        checks = await self.verdicts(cwd, hits)
        if checks is None:
            return list(hits), {}
        kept = list(zip(hits, checks, strict=True))
        fresh = [hit for hit, check in kept if check.verdict in ("fresh", "unchecked")]
        drifted = [hit for hit, check in kept if check.verdict == "drifted"]
        notes = {hit.id: note for hit, check in kept if (note := shown_note(check))}
        return fresh + drifted, notes


WORKING_TREES = WorkingTrees()


def hook_check_items(memories: Sequence[Recalled]) -> list[Any]:
    """What the hook process needs to check `memories` itself: their ids, dates and anchors
    (server/worktree/context_check.py); memories without anchors are left out."""
    return check_items(
        [
            (m.id, m.created_at, [(a.kind, a.name, a.value) for a in anchors_of(m.content)])
            for m in memories
        ]
    )
