"""Whether what a memory says about the code still holds in a working tree (issue #37).

Given a memory's anchors (server/domain/anchors.py, passed as plain values so that this module
needs the standard library only and can run wherever the tree is) and a working tree, each
anchor is checked:

- a **path** holds when it exists under the tree. A missing one was deleted or renamed if git
  says so since the memory was written (one `git log`, for all the memories of a check);
  otherwise it is left unchecked: a file named without its folder may live anywhere.
- a **symbol** holds when it still occurs in a file the same memory names, and drifted when
  none of them has it any more; without such a file it is left unchecked (the tree is not
  searched).
- a **setting** holds when a file the memory names still gives the key that value; another
  value is the news (drifted, with the value now); a key no longer there is left unchecked.
- a **version** holds when the project's manifests (go.mod, package.json, pyproject.toml,
  requirements*.txt, Cargo.toml, .nvmrc, .python-version, .tool-versions) still pin the
  package at the version stated or one it prefixes (1.22 holds for 1.22.3); another version is
  drift; a package no manifest names is left unchecked.

The memory's verdict: **drifted** when an anchor changed, **orphaned** when every file it
names is gone (and nothing else of it holds), **fresh** when every anchor checked holds and at
least one was checked, else **unchecked**. Only the files named and the manifests are read,
each once per check (kept by path and modification time across checks), at most
MAX_FILE_BYTES of each; git is called at most once per check. A name comes from a memory's
text, which anyone who can write a memory chooses: it is resolved (through `..` and links) and
read only when it lands inside the tree (#65), never a file elsewhere on the machine.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Literal, NamedTuple

Verdict = Literal["fresh", "drifted", "orphaned", "unchecked"]
AnchorValue = tuple[str, str, str | None]  # (kind, name, value), as domain.anchors.Anchor
MAX_FILE_BYTES = 256 * 1024
GIT_SECONDS = 2.0
MANIFESTS = (
    "go.mod",
    "package.json",
    "pyproject.toml",
    "requirements.txt",
    "requirements-dev.txt",
    "Cargo.toml",
    ".nvmrc",
    ".python-version",
    ".tool-versions",
)


class Finding(NamedTuple):
    """What the check found for one anchor that did not simply hold."""

    kind: str
    name: str
    stated: str | None
    now: str | None  # the value or version now, the new path, or None when gone
    commit: str | None = None  # the commit that renamed or deleted it, when git says


class MemoryCheck(NamedTuple):
    """One memory's verdict against a tree, with what changed."""

    verdict: Verdict
    checked: int  # anchors that could be checked
    findings: tuple[Finding, ...] = ()

    def note(self) -> str:
        """One line for the agent: "drifted: go.mod now says go 1.23" and the like."""
        said = []
        for f in self.findings:
            if f.kind == "path":
                moved = f"renamed to {f.now}" if f.now else "deleted"
                said.append(f"{f.name} was {moved}" + (f" in {f.commit}" if f.commit else ""))
            elif f.kind == "symbol":
                said.append(f"{f.name} is no longer in the files it names")
            else:
                said.append(f"{f.name} is now {f.now} (was {f.stated})")
        return f"{self.verdict}: " + "; ".join(said) if said else self.verdict


def tree_root(cwd: str) -> Path | None:
    """The repository's top folder holding `cwd` (or `cwd` itself outside one); None if no such
    folder is on this machine."""
    folder = Path(cwd.strip()) if cwd.strip() else None
    try:
        if folder is None or not folder.is_absolute() or not folder.is_dir():
            return None
        for candidate in (folder, *folder.parents):
            if (candidate / ".git").exists():
                return candidate
    except (OSError, ValueError):  # a name too long for the system, a NUL byte
        return None
    return folder


class TreeChecker:
    """Checks memories against one working tree; keeps what it read by path and mtime."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._real_root = _resolved(root)
        self._files: dict[Path, tuple[float, str | None]] = {}

    def check(
        self, memories: Sequence[tuple[Sequence[AnchorValue], datetime | None]]
    ) -> list[MemoryCheck]:
        """Each memory's verdict; a memory is its anchors and when it was written."""
        if not self.root.is_dir():
            return [MemoryCheck("unchecked", 0) for _ in memories]
        missing = {
            name
            for anchors, _ in memories
            for kind, name, _ in anchors
            if kind == "path" and not self._exists(name)
        }
        since = min((written for _, written in memories if written), default=None)
        moves = self._git_moves(since) if missing else {}
        versions = self._manifest_versions() if _any(memories, "version") else {}
        return [self._one(list(anchors), moves, versions) for anchors, _ in memories]

    def _one(
        self,
        anchors: list[AnchorValue],
        moves: dict[str, tuple[str | None, str]],
        versions: dict[str, str],
    ) -> MemoryCheck:
        findings: list[Finding] = []
        held = 0
        gone = 0
        texts = [
            text
            for kind, name, _ in anchors
            if kind == "path" and (text := self._read(name)) is not None
        ]
        for kind, name, value in anchors:
            if kind == "path":
                if self._exists(name):
                    held += 1
                elif name in moves:
                    new, commit = moves[name]
                    findings.append(Finding("path", name, None, new, commit))
                    gone += new is None
            elif kind == "symbol" and texts:
                if any(re.search(rf"(?<![\w$]){re.escape(name)}(?![\w$])", t) for t in texts):
                    held += 1
                else:
                    findings.append(Finding("symbol", name, None, None))
            elif kind == "setting" and texts and value is not None:
                now = _setting_value(name, texts)
                if now == value:
                    held += 1
                elif now is not None:
                    findings.append(Finding("setting", name, value, now))
            elif kind == "version" and value is not None and name in versions:
                now = versions[name]
                if _same_version(value, now):
                    held += 1
                else:
                    findings.append(Finding("version", name, value, now))
        checked = held + len(findings)
        if any(f.kind != "path" or f.now for f in findings):  # something changed, not gone
            return MemoryCheck("drifted", checked, tuple(findings))
        if gone and not held:
            return MemoryCheck("orphaned", checked, tuple(findings))
        if findings:
            return MemoryCheck("drifted", checked, tuple(findings))
        return MemoryCheck("fresh" if held else "unchecked", checked)

    def _path(self, name: str) -> Path | None:
        """Where `name` is in the tree; None for a name that leads out of it (`/`, `~`,
        `src/../../x`, a link to elsewhere)."""
        relative = name.removeprefix("./")
        if relative.startswith(("/", "~")) or self._real_root is None:
            return None
        path = _resolved(self.root / relative)
        if path is None or not path.is_relative_to(self._real_root):
            return None
        return path

    def _exists(self, name: str) -> bool:
        path = self._path(name)
        return path is not None and (path.is_dir() if name.endswith("/") else path.exists())

    def _read(self, name: str) -> str | None:
        path = self._path(name)
        if path is None or name.endswith("/"):
            return None
        try:
            mtime = path.stat().st_mtime
        except OSError:
            return None
        cached = self._files.get(path)
        if cached is None or cached[0] != mtime:
            try:
                with path.open("rb") as handle:
                    text = handle.read(MAX_FILE_BYTES).decode("utf-8", "replace")
            except OSError:
                text = None
            cached = self._files[path] = (mtime, text)
        return cached[1]

    def _git_moves(self, since: datetime | None) -> dict[str, tuple[str | None, str]]:
        """Paths renamed (to their new path) or deleted (None) since `since`, by commit."""
        command = ["git", "-C", str(self.root), "log", "--format=@%h", "--name-status", "-M"]
        command += ["--diff-filter=DR"] + ([f"--since={since.isoformat()}"] if since else [])
        import subprocess  # here: the hook client pays for it only when a file is missing

        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=GIT_SECONDS, check=False
            )
        except (OSError, subprocess.SubprocessError):
            return {}
        moves: dict[str, tuple[str | None, str]] = {}
        commit = ""
        for line in done.stdout.splitlines() if done.returncode == 0 else []:
            if line.startswith("@"):
                commit = line[1:]
                continue
            status, *paths = line.split("\t")
            if status.startswith("D") and paths and paths[0] not in moves:
                moves[paths[0]] = (None, commit)
            elif status.startswith("R") and len(paths) == 2 and paths[0] not in moves:
                moves[paths[0]] = (paths[1], commit)
        return moves

    def _manifest_versions(self) -> dict[str, str]:
        """Package or tool name (lower case) -> the version the manifests pin now."""
        versions: dict[str, str] = {}
        for name in MANIFESTS:
            text = self._read(name)
            if text:
                versions.update(_pins(name, text))
        return versions


def _resolved(path: Path) -> Path | None:
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError):  # a loop of links, a NUL byte
        return None


def _any(memories: Iterable[tuple[Sequence[AnchorValue], object]], kind: str) -> bool:
    return any(k == kind for anchors, _ in memories for k, _, _ in anchors)


_VERSION = r"v?(\d+(?:\.\d+){0,3}(?:-[\w.]+)?)"


def _pins(manifest: str, text: str) -> dict[str, str]:
    """The versions one manifest pins, by lower-case name."""
    if manifest == "package.json":
        try:
            data = json.loads(text)
        except ValueError:
            return {}
        pins = {}
        for section in ("dependencies", "devDependencies", "engines", "packageManager"):
            entries = data.get(section) if isinstance(data, dict) else None
            if isinstance(entries, str) and "@" in entries:  # "packageManager": "pnpm@9.12.0"
                name, _, version = entries.rpartition("@")
                entries = {name: version}
            for name, spec in (entries or {}).items() if isinstance(entries, dict) else []:
                found = re.search(r"\d+(?:\.\d+){0,3}(?:-[\w.]+)?", str(spec))
                if found:
                    pins[name.lower()] = found.group(0)
        return pins
    if manifest in (".nvmrc", ".python-version"):
        found = re.search(r"\d+(?:\.\d+){0,3}", text)
        tool = "node" if manifest == ".nvmrc" else "python"
        return {tool: found.group(0)} if found else {}
    if manifest == "go.mod":
        pattern = rf"^\s*(?:require\s+)?(go|toolchain|[\w.-]+/[\w./-]+)\s+{_VERSION}"
    elif manifest == ".tool-versions":
        pattern = rf"^\s*([\w.-]+)\s+{_VERSION}"
    elif manifest.startswith("requirements"):
        pattern = rf"^\s*([\w.-]+)\s*(?:==|~=|>=)\s*{_VERSION}"
    else:  # pyproject.toml, Cargo.toml: `name = "1.2"`, or "name==1.2" inside a list
        pattern = rf"^\s*\"?([\w.-]+)\"?\s*(?:=\s*\"[~^=>]*|==|~=|>=)\s*{_VERSION}"
    return {m.group(1).lower(): m.group(2) for m in re.finditer(pattern, text, re.M)}


def _same_version(stated: str, now: str) -> bool:
    """1.22 holds for 1.22 and 1.22.3; 1.22 does not for 1.23 or 1.2."""
    stated_parts = stated.lstrip("v").split(".")
    now_parts = now.lstrip("v").split(".")
    return now_parts[: len(stated_parts)] == stated_parts


def _setting_value(key: str, texts: Sequence[str]) -> str | None:
    """The value a file gives `key` now (`KEY=value`, `key = value`, `key: value`)."""
    name = re.escape(key.lstrip("-"))
    pattern = re.compile(
        rf"^\s*(?:export\s+)?-{{0,2}}{name}\s*(?:=|:)\s*(\"[^\"]*\"|'[^']*'|[^\s#,;]+)", re.M
    )
    for text in texts:
        found = pattern.search(text)
        if found:
            value = found.group(1)
            return value[1:-1] if value[:1] in "\"'" and value[-1:] == value[:1] else value
    return None
