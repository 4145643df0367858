"""The one rule that reads a project from what a request names (#56): its name, its folder, or
a folder inside it. Every way in (REST, MCP, the CLI, the hooks) hands the service the project
as the user wrote it, and the service's reads resolve it here, once (`resolve_project`):
adapters never resolve a project themselves.
"""

from __future__ import annotations

import os
import stat
from dataclasses import replace
from typing import TypeVar

import anyio

from server.core.access import current_viewer
from server.core.errors import InvalidInput, NotFound
from server.core.models.journal import JournalFilter
from server.core.models.memories import FolderProject, MemoryFilter
from server.core.models.receipts import ReceiptFilter
from server.core.validation import blank_to_none
from server.domain.project_rule import folder_match, names_project, remote_names
from server.store import journal as journal_store
from server.store import lessons as lesson_store
from server.store import memories as memory_store
from server.store import project_folders as folder_store
from server.store import sessions as session_store
from server.store import users as user_store
from server.store.tx import Conn, Pool, transaction

MAX_GIT_CONFIG_BYTES = 64 * 1024
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

    async def claim_folder(self, folder: str) -> FolderProject | None:
        """The project a session's `folder` is taken to be when no memory, session or earlier
        claim knows the folder: the project with no folder known whose name the folder bears,
        or its git remote names (read only when this server shares the machine: acting for
        nobody). Recorded, so the claim is made (and said) once; None when nothing matches
        or the folder is known already."""
        folder = folder.strip().rstrip("/")
        if not folder.startswith("/") or await self.project_at_folder(folder) is not None:
            return None
        async with transaction(self.pool) as conn:
            if (await folder_store.projects_at(conn, _levels(folder.lower()))).get(
                folder.lower()
            ) is not None:
                return None  # the user said it is no project's
            unplaced = await _unplaced_projects(conn)
        if not unplaced:
            return None
        remotes = await anyio.to_thread.run_sync(_git_remotes, folder) if _on_this_machine() else []
        found = folder_match(folder, remotes, unplaced)
        if found is None:
            return None
        project, matched_by = found
        async with transaction(self.pool) as conn:
            await folder_store.record(conn, folder, project, matched_by)
        return _folder_project(folder, project, matched_by)

    async def name_folder(self, folder: str, project: str | None) -> FolderProject:
        """The user's word on `folder`: it is `project`'s (a known project), or no project's
        (None); replaces what a name or remote matched."""
        folder = folder.strip().rstrip("/")
        if not folder.startswith("/"):
            raise InvalidInput(f"name the folder by its absolute path, got {folder[:80]!r}")
        resolved = await self.resolve_project(project) if project else ""
        async with transaction(self.pool) as conn:
            await folder_store.record(conn, folder, resolved or "", "user")
        return _folder_project(folder, resolved or "", "user")

    async def _scoped(self, where: Scoped) -> Scoped:
        """`where` with its project resolved by the rule (NotFound when it names none)."""
        if where.project is None:
            return where
        return replace(where, project=await self.resolve_project(where.project))


async def _project_above(conn: Conn, folder: str) -> str | None:
    """The project whose folder is the closest parent of `folder` (case-folded) that is one:
    one index read for all the levels, and one of the folders claimed for projects (a level
    the user said is no project's ends the search)."""
    levels = _levels(folder)
    if not levels:
        return None
    found = await memory_store.projects_at_folders(conn, levels)
    claimed = await folder_store.projects_at(conn, levels)
    for level in levels:
        if level in found:
            return found[level]
        if level in claimed:
            return claimed[level] or None
    return None


def _levels(folder: str) -> list[str]:
    """`folder` and each folder above it, the closest first."""
    parts = folder.rstrip("/").split("/")
    return [level for level in ("/".join(parts[:end]) for end in range(len(parts), 0, -1)) if level]


async def _unplaced_projects(conn: Conn) -> set[str]:
    """The names of the projects with memories but no folder known: none of their memories,
    imported sessions or claimed folders has one."""
    summaries = await memory_store.project_summaries(conn)
    placed = {
        *(p.project for p in summaries if p.project_path),
        *(name for name, folder in await session_store.project_names(conn) if folder),
        *(name for name, _ in await folder_store.folders(conn)),
    }
    return {p.project for p in summaries if p.project and p.project not in placed}


def _on_this_machine() -> bool:
    """Whether a session's folder is this server's to read: acting for nobody (single-user
    mode), never on a team's server, whose folders are its users'."""
    return current_viewer() is None


def _git_remotes(folder: str) -> list[str]:
    """The repository names of `folder`'s git remotes (.git/config, a regular file, not a
    link, read up to 64 KB); none when it has none or cannot be read."""
    try:
        descriptor = os.open(os.path.join(folder, ".git", "config"), os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return []
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return []
        return remote_names(handle.read(MAX_GIT_CONFIG_BYTES).decode("utf-8", "replace"))


def _folder_project(folder: str, project: str, matched_by: str) -> FolderProject:
    how = {
        "name": "its name is the project's",
        "remote": "its git remote names the project",
        "user": "you said so",
    }[matched_by]
    if not project:
        note = f"Folder {folder} is no project's ({how})."
    else:
        note = (
            f"Folder {folder} is taken to be project {project!r}, whose memories were saved"
            f" without a folder ({how}). If it is not, run: claude-memory folder {folder}"
            " --project NAME (or --none)."
        )
    return FolderProject(folder, project, matched_by, note)


async def _other_projects(conn: Conn) -> set[tuple[str, str]]:
    """(name, folder) of the projects known without a memory: the reader's memberships, the
    imported sessions', the lessons' and the journal's (folder "" where none is kept)."""
    return {
        *((name, "") for name in await user_store.viewer_projects(conn)),
        *await session_store.project_names(conn),
        *((name, "") for name in await lesson_store.project_names(conn)),
        *((name, "") for name in await journal_store.project_names(conn)),
    }
