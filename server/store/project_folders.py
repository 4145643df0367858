"""SQL for the folders projects were found at when nothing else knew them (`project_folders`,
migration 027, #68): a project named before its folder, matched by the folder's name or git
remote, or the user's own word.

Rows are their owner's (the default stamps them) and read only by them; acting for nobody
(single-user mode, the CLI) reads every row, the newest first.
"""

from __future__ import annotations

from collections.abc import Sequence

from server.store.tx import Conn

_MINE = "(current_viewer() IS NULL OR owner_id = current_viewer())"


async def projects_at(conn: Conn, folders: Sequence[str]) -> dict[str, str]:
    """For each of `folders` (lower case, no trailing '/') recorded here, its project ("" when
    the user said it is none)."""
    folders = [folder for folder in folders if "\x00" not in folder]
    if not folders:
        return {}
    cur = await conn.execute(
        "SELECT DISTINCT ON (lower(folder)) lower(folder), project FROM project_folders"
        f" WHERE lower(folder) = ANY(%(folders)s) AND {_MINE}"
        " ORDER BY lower(folder), at DESC",
        {"folders": list(folders)},
    )
    return {str(folder): str(project) for folder, project in await cur.fetchall()}


async def record(conn: Conn, folder: str, project: str, matched_by: str) -> None:
    """Record `folder` as `project`'s (the caller's row; replaces what it said before)."""
    await conn.execute(
        "INSERT INTO project_folders (folder, project, matched_by)"
        " VALUES (%(folder)s, %(project)s, %(matched_by)s)"
        " ON CONFLICT (lower(folder), coalesce(owner_id, 0)) DO UPDATE"
        " SET folder = EXCLUDED.folder, project = EXCLUDED.project,"
        " matched_by = EXCLUDED.matched_by, at = now()",
        {"folder": folder, "project": project, "matched_by": matched_by},
    )


async def folders(conn: Conn) -> list[tuple[str, str]]:
    """(project, folder) of every folder recorded as a project's, the newest first."""
    cur = await conn.execute(
        "SELECT project, folder FROM project_folders"
        f" WHERE project <> '' AND {_MINE} ORDER BY at DESC"
    )
    return [(str(project), str(folder)) for project, folder in await cur.fetchall()]
