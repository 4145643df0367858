"""The one rule that reads a project from what a request names (#56): its name, its folder, or
a folder inside it. Every way in (REST, MCP, the CLI, the hooks) hands the service the project
as the user wrote it, and the service's reads resolve it here, once (`resolve_project`):
adapters never resolve a project themselves.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TypeVar

from server.core.errors import NotFound
from server.core.models.journal import JournalFilter
from server.core.models.memories import MemoryFilter
from server.core.models.receipts import ReceiptFilter
from server.core.validation import blank_to_none
from server.domain.project_rule import names_project
from server.store import journal as journal_store
from server.store import lessons as lesson_store
from server.store import memories as memory_store
from server.store import sessions as session_store
from server.store import users as user_store
from server.store.tx import Conn, Pool, transaction

Scoped = TypeVar("Scoped", MemoryFilter, JournalFilter, ReceiptFilter)


class ProjectRule:
    """A mixin of MemoryService and its parts: the project rule and the filters it scopes."""

    pool: Pool

    async def resolve_project(self, name: str | None) -> str | None:
        """The stored name of the project `name` means: every way in (REST, MCP, the CLI and
        the hooks) reads a project through this one rule.

        1. A project's name or folder, case-insensitively, among the projects with memories
           the reader may see (the most recently written when a name and a folder match two).
        2. For a folder (a name with a "/"), the closest parent folder that is a project's,
           so a session or a request from a sub-folder of a repository finds its project.
        3. Projects known without a memory: for a name, those the reader is a member of and
           those only lessons, the journal or imported sessions know (hooks may record work in
           a project before any memory of it is stored); for a folder, the imported sessions'
           folders and the folders inside them (only sessions keep a folder).

        None for no name; NotFound naming the known projects when nothing matches. Read with
        an index, not from the project list: every filtered read pays it, and the list costs a
        scan of the store whenever anything was committed since.
        """
        wanted = blank_to_none(name)
        if wanted is None:
            return None
        found = await self._find_project(wanted.lower())
        if found is not None:
            return found
        async with transaction(self.pool) as conn:  # only to say what is known, on the error
            projects = await memory_store.project_summaries(conn)
            others = await _other_projects(conn)
        names = {p.project for p in projects if p.project} | {name for name, _ in others}
        known = ", ".join(sorted(names)[:20]) or "none yet"
        raise NotFound(f"no project {wanted[:80]!r}; known projects: {known}")

    async def session_folders(self, project: str) -> list[str]:
        """The folders the reader's own sessions of `project` ran in (their agents' working
        folders, as the imported transcripts say): the only folders on this machine promote
        may write in. A memory's `project_path` is not one: an import or any writer sets it."""
        async with transaction(self.pool) as conn:
            named = await session_store.project_names(conn)
        return sorted({folder for name, folder in named if name == project and folder})

    async def project_at_folder(self, folder: str) -> str | None:
        """`resolve_project` for the folder a hook names: None, not an error, when no project
        is there (the hooks then answer with the general context), found without listing the
        projects an error would name."""
        wanted = folder.strip().lower()  # as sent: a folder holding NUL is no folder
        return await self._find_project(wanted) if wanted else None

    async def _find_project(self, folded: str) -> str | None:
        """The project `folded` names by `resolve_project`'s rule, or None. A folder is read
        against the folders memories and imported sessions were written in (only they have
        one), never against the journal: a hook asks this on every call."""
        async with transaction(self.pool) as conn:
            found = await memory_store.project_named(conn, folded)
            if found is not None:
                return found
            if "/" in folded:
                found = await _project_above(conn, folded)
                others = set(await session_store.project_names(conn))
            else:
                others = await _other_projects(conn)
        if found is not None:
            return found
        return next(
            (other for other, folder in sorted(others) if names_project(folded, other, folder)),
            None,
        )

    async def _scoped(self, where: Scoped) -> Scoped:
        """`where` with its project resolved by the rule (NotFound when it names none)."""
        if where.project is None:
            return where
        return replace(where, project=await self.resolve_project(where.project))


async def _project_above(conn: Conn, folder: str) -> str | None:
    """The project whose folder is the closest parent of `folder` (case-folded) that is one:
    one index read for all the levels."""
    parts = folder.rstrip("/").split("/")
    levels = [
        level for level in ("/".join(parts[:end]) for end in range(len(parts), 0, -1)) if level
    ]
    if not levels:
        return None
    found = await memory_store.projects_at_folders(conn, levels)
    return next((found[level] for level in levels if level in found), None)


async def _other_projects(conn: Conn) -> set[tuple[str, str]]:
    """(name, folder) of the projects known without a memory: the reader's memberships, the
    imported sessions', the lessons' and the journal's (folder "" where none is kept)."""
    return {
        *((name, "") for name in await user_store.viewer_projects(conn)),
        *await session_store.project_names(conn),
        *((name, "") for name in await lesson_store.project_names(conn)),
        *((name, "") for name in await journal_store.project_names(conn)),
    }
