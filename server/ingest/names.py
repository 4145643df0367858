"""Short display names for projects, from the real working directories of their sessions.

A project is named by the last segment of its `cwd` (`/home/dev/acme-api` → `acme-api`). When
two directories end alike (`~/work/api`, `~/oss/api`) each gets as many trailing segments as it
takes to tell them apart (`work/api`, `oss/api`). Names already stored never change, so memories
keep the project name they were saved under.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping

_SEPARATORS = re.compile(r"[/\\]+")


def _segments(path: str) -> list[str]:
    return [part for part in _SEPARATORS.split(path.strip()) if part]


def _normal(path: str) -> str:
    """One spelling per directory: `/a/b/` and `/a/b` are the same project."""
    stripped = path.strip()
    return stripped.rstrip("/\\") or stripped


def _tail(segments: list[str], depth: int, fallback: str) -> str:
    return "/".join(segments[-depth:]) if segments else fallback


def project_display_names(
    paths: Iterable[str], taken: Mapping[str, str] | None = None
) -> dict[str, str]:
    """A display name for each path in `paths`, unique among themselves and `taken`.

    `taken` maps paths that already have a name (from the database) to that name; those paths
    keep it and no other path may use it. Deterministic: the result depends only on the inputs.
    """
    known = {_normal(path): name for path, name in (taken or {}).items()}
    wanted = {path: _normal(path) for path in paths}
    names: dict[str, str] = {normal: known[normal] for normal in wanted.values() if normal in known}
    used = set(known.values())
    pending = sorted({normal for normal in wanted.values() if normal not in known})
    segments = {normal: _segments(normal) for normal in pending}
    depth = dict.fromkeys(pending, 1)
    while pending:
        candidates = {normal: _tail(segments[normal], depth[normal], normal) for normal in pending}
        counts = Counter(candidates.values())
        growing = []
        for normal in pending:
            name = candidates[normal]
            if counts[name] == 1 and name not in used:
                names[normal] = name
            elif depth[normal] < len(segments[normal]):
                depth[normal] += 1
                growing.append(normal)
                continue
            else:
                # Every segment is used and the name is still taken: number it.
                base, number = name, 2
                while name in used:
                    name, number = f"{base} ({number})", number + 1
                names[normal] = name
            used.add(names[normal])
        pending = growing
    return {path: names[normal] for path, normal in wanted.items()}
