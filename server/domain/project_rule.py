"""Whether what a user named is a given project: the rule the service reads projects by
(server/service/projects.py), for code that holds a project's name and folder in hand rather
than in the store (the importers' `--project` filters, the training export).

A project is named by its name or its folder, case-insensitively, or by a folder inside its
folder: a session in `/home/dev/shop` is what `--project shop`, `--project /home/dev/Shop/` and
`--project /home/dev/shop/src` all mean.

A folder no memory or session knows is the project with no folder known whose name it bears,
or its git remote names (`folder_match`): a project named before its folder, as MCP
save_memory's `project` is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Literal

from server.core.models.memories import ProjectSummary

MatchedBy = Literal["name", "remote", "user"]


def names_project(wanted: str, project: str, project_path: str) -> bool:
    """Whether `wanted` names the project called `project` whose folder is `project_path`."""
    folded = wanted.strip().lower().rstrip("/")
    if not folded:
        return False
    if folded == project.strip().lower():
        return True
    folder = project_path.strip().lower().rstrip("/")
    return bool(folder) and (folded == folder or folded.startswith(f"{folder}/"))


# `url = git@github.com:acme/shop-frontend.git` in a git config's [remote "..."] sections.
_REMOTE_URL = re.compile(r"^\s*url\s*=\s*(\S+)\s*$", re.M)


def remote_names(git_config: str) -> list[str]:
    """The repository names a git config's remote URLs end in ("shop-frontend" for
    git@github.com:acme/shop-frontend.git), lower case: data read from a repository, only
    ever compared with the names of projects the user already has."""
    names = []
    for url in _REMOTE_URL.findall(git_config):
        name = url.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1].removesuffix(".git")
        if name and name.lower() not in names:
            names.append(name.lower())
    return names


def folder_match(
    folder: str, remotes: Sequence[str], unplaced: Iterable[str]
) -> tuple[str, MatchedBy] | None:
    """The project of `unplaced` (the names of projects with no folder known) that `folder`
    is, by its last segment, else by a git remote's repository name; how it matched."""
    by_name = {name.strip().lower(): name for name in unplaced if name.strip()}
    segment = folder.rstrip("/").rsplit("/", 1)[-1].lower()
    if segment in by_name:
        return by_name[segment], "name"
    for remote in remotes:
        if remote in by_name:
            return by_name[remote], "remote"
    return None


def placed_projects(
    summaries: Sequence[ProjectSummary], claimed: Sequence[tuple[str, str]]
) -> list[ProjectSummary]:
    """Each project once per folder, most recently active first: a project's memories saved
    without a folder are counted with its folder's, the newest of its memories' folders or
    else the folder claimed for it (`claimed`: (project, folder), newest first), so a project
    named before its folder is not listed twice."""
    folder_of: dict[str, str] = {}
    for summary in summaries:  # newest first
        if summary.project and summary.project_path:
            folder_of.setdefault(summary.project, summary.project_path)
    for project, folder in claimed:
        folder_of.setdefault(project, folder)
    merged: dict[tuple[str, str], ProjectSummary] = {}
    for summary in summaries:
        path = summary.project_path or folder_of.get(summary.project, "")
        seen = merged.get((summary.project, path))
        merged[(summary.project, path)] = (
            replace(summary, project_path=path)
            if seen is None
            else replace(
                seen,
                count=seen.count + summary.count,
                last_at=max(seen.last_at, summary.last_at),
            )
        )
    return sorted(merged.values(), key=lambda summary: summary.last_at, reverse=True)
