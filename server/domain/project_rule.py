"""Whether what a user named is a given project: the rule the service reads projects by
(server/service/projects.py), for code that holds a project's name and folder in hand rather
than in the store (the importers' `--project` filters, the training export).

A project is named by its name or its folder, case-insensitively, or by a folder inside its
folder: a session in `/home/dev/shop` is what `--project shop`, `--project /home/dev/Shop/` and
`--project /home/dev/shop/src` all mean.
"""

from __future__ import annotations


def names_project(wanted: str, project: str, project_path: str) -> bool:
    """Whether `wanted` names the project called `project` whose folder is `project_path`."""
    folded = wanted.strip().lower().rstrip("/")
    if not folded:
        return False
    if folded == project.strip().lower():
        return True
    folder = project_path.strip().lower().rstrip("/")
    return bool(folder) and (folded == folder or folded.startswith(f"{folder}/"))
