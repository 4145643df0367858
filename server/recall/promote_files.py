"""The instruction files promote reads and writes (#58): where they are, their text, the diff,
and the backup kept (in the data dir) before a write.

Only the agents' own instruction files are ever touched (each agent's INSTRUCTIONS_FILE in
server/agent_facts/: CLAUDE.md, AGENTS.md, GEMINI.md, .github/copilot-instructions.md), at the
repository's root. The root is the repository holding the working folder, kept
inside the project's folder (a project that is a sub-folder of a repository keeps its own
files); nothing is written outside it. A cloned repository is hostile input (#65): every name
is looked at without following it (`lstat`), a link whose target, there or not, lies outside
the root is refused before anything is written, and the write itself never follows a link: a
new file is created with O_EXCL|O_NOFOLLOW, an existing one is replaced by a file written beside
it the same way and renamed over it; the backup is created the same way, in the data dir
(`backups/instructions/`), never in the repository. The new text is parsed before any of
that, so text that would break the section is refused with nothing written.
"""

from __future__ import annotations

import difflib
import os
import secrets
import stat
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from server.agent_facts.every import ABOUT
from server.core.errors import InvalidInput
from server.domain.instruction_section import InstructionText, SectionError, parse
from server.worktree.tree_check import tree_root

INSTRUCTION_FILES = tuple(dict.fromkeys(about.INSTRUCTIONS_FILE for about in ABOUT.values()))
# The file most agents read (AGENTS.md): created when the project's agents differ.
SHARED_FILE: str = Counter(about.INSTRUCTIONS_FILE for about in ABOUT.values()).most_common(1)[0][0]


@dataclass(frozen=True)
class InstructionFile:
    """One instruction file as read: its path, text and our section's place in it."""

    path: Path
    name: str
    exists: bool
    text: str
    parsed: InstructionText
    key: str = ""  # the file's real path (through links): what its records are kept under

    @property
    def target(self) -> Path:
        """Where the text is written: the real file behind a link (inside the root), else the
        path itself."""
        return Path(self.key) if self.key else self.path


def repository_root(folder: str, cwd: str | None) -> Path:
    """Where the instruction files are: the repository holding `cwd` (or `folder`), unless that
    reaches above the project's `folder`, then `folder` itself. InvalidInput when `cwd` is not
    inside `folder` or the folder is not on this machine."""
    base = _real(folder)
    if base is None or not base.is_dir():
        raise InvalidInput(f"the project's folder {folder!r} is not a folder on this machine")
    start = base
    if cwd:
        start_at = _real(cwd)
        if start_at is None or not start_at.is_relative_to(base):
            raise InvalidInput(f"cwd must be inside the project's folder {str(base)!r}")
        start = start_at
    root = tree_root(str(start)) or start
    return root if root.is_relative_to(base) else base


def read_files(root: Path, to_create: str = SHARED_FILE) -> list[InstructionFile]:
    """The instruction files at `root`; `to_create` (not there yet) when there is none. A file
    that is a link to one read already is read once; a link out of `root` (its target there or
    not) is refused, and so is a file to create that is already some other thing."""
    found = []
    seen: set[Path] = set()
    for name in INSTRUCTION_FILES:
        path = root / name
        real = _inside(root, name)
        if real is None or not _is_regular(real):
            continue  # nothing there, or a link to nothing inside the root: not a file
        if real in seen:
            continue  # a link to a file already read (CLAUDE.md -> AGENTS.md): one section
        seen.add(real)
        try:
            text = _read(real)
            parsed = parse(text)
        except UnicodeDecodeError:
            raise InvalidInput(f"{name} is not UTF-8 text: promote leaves it alone") from None
        except SectionError as exc:
            raise InvalidInput(f"{name}: {exc}") from None
        found.append(InstructionFile(path, name, True, text, parsed, str(real)))
    if not found:
        path = root / to_create
        if _lstat(path) is not None:
            raise InvalidInput(
                f"{to_create} is there but is not a file promote can read (a link to"
                " nothing, a folder): promote leaves it alone"
            )
        found.append(InstructionFile(path, to_create, False, "", parse(""), str(path)))
    return found


def unified_diff(name: str, old: str, new: str) -> str:
    """The change from `old` to `new` as a unified diff ("" when there is none)."""
    if old == new:
        return ""
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=f"a/{name}" if old else "/dev/null",
            tofile=f"b/{name}",
        )
    )


def write_with_backup(file: InstructionFile, text: str, backups: Path) -> str | None:
    """Write `text` to the file, a copy of the old one kept first in `backups` (a folder of the
    data dir: a copy beside the file would sit untracked in the repository, where `git add -A`
    commits it); the copy's path (None for a new file). InvalidInput, with nothing written, when
    `text` would not parse as one section or the file is no longer what was read (a link now,
    or there when it was not)."""
    try:
        parse(text)
    except SectionError as exc:
        raise InvalidInput(f"{file.name}: the new text would break the file ({exc})") from None
    target = file.target
    data = text.encode("utf-8")
    try:
        if not file.exists:
            _create(target, data)
            return None
        old = _read_bytes(target)
        backups.mkdir(mode=0o700, parents=True, exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        flat = str(target).strip("/").replace("/", "_")[-200:]
        copy = backups / f"{flat}.bak-{stamp}"
        _create(copy, old.data, 0o600)
        _replace(target, data, old.mode)
        return str(copy)
    except OSError as exc:  # ELOOP: a link now; EEXIST: there now; both since it was read
        raise InvalidInput(
            f"{file.name} could not be written ({exc.strerror}): it is as it was; run promote again"
        ) from None


@dataclass(frozen=True)
class _Contents:
    data: bytes
    mode: int


def _inside(root: Path, name: str) -> Path | None:
    """The real path behind `root / name`, or None when nothing is there. InvalidInput when
    it (or a link on the way, its target there or not) leads outside `root`."""
    path = root / name
    if _lstat(path) is None:
        return None
    try:
        real = path.resolve()  # follows links whose targets do not exist too
    except (OSError, RuntimeError):  # a loop of links
        raise InvalidInput(f"{name} is a loop of links: promote leaves it alone") from None
    if not real.is_relative_to(root):
        raise InvalidInput(f"{name} points outside {str(root)!r}: promote leaves it alone")
    return real


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return path.lstat()
    except (FileNotFoundError, NotADirectoryError):
        return None


def _is_regular(path: Path) -> bool:
    found = _lstat(path)
    return found is not None and stat.S_ISREG(found.st_mode)


def _read(path: Path) -> str:
    return _read_bytes(path).data.decode("utf-8")


def _read_bytes(path: Path) -> _Contents:
    """A regular file's bytes and mode, never through a link."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as source:
        found = os.fstat(source.fileno())
        if not stat.S_ISREG(found.st_mode):
            raise InvalidInput(f"{path.name} is not a regular file: promote leaves it alone")
        return _Contents(source.read(), stat.S_IMODE(found.st_mode))


def _create(path: Path, data: bytes, mode: int | None = None) -> None:
    """A new file holding `data`: fails if anything, a link included, is there already. With
    `mode` it gets exactly that mode, else what the umask leaves (as open("w") would)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    fd = os.open(path, flags, 0o600 if mode is not None else 0o666)
    with os.fdopen(fd, "wb") as out:
        if mode is not None:
            os.fchmod(out.fileno(), mode)
        out.write(data)


def _replace(path: Path, data: bytes, mode: int) -> None:
    """`path` replaced by a file holding `data`, written beside it and renamed over it (a
    rename replaces a link there, never writes through it)."""
    partial = path.with_name(f".{path.name}.claude-memory-{secrets.token_hex(6)}")
    try:
        _create(partial, data, mode)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def _real(folder: str) -> Path | None:
    try:
        path = Path(folder.strip())
        return path.resolve() if path.is_absolute() else None
    except (OSError, ValueError):
        return None
