"""Careful edits of other agents' files: one TOML table, one JSON key, one marked Markdown block.

`claude-memory connect` changes files the user owns (Codex's `config.toml`, Gemini CLI's
`settings.json`, their instruction files), so every edit here touches only our entry and checks
its own result: the TOML edit is done on the text (comments, order and spacing elsewhere stay
byte for byte), then parsed again and compared with what the rest of the file meant before; a
file that does not parse, or an entry in a shape we do not edit, is refused with a message and
left alone. Writes copy the old file into our data dir (`backups_folder`) and replace it
atomically. Standard library only.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shutil
import tempfile
import tomllib
from datetime import datetime
from pathlib import Path
from typing import Any


class AgentFileError(Exception):
    """A file cannot be changed safely; the message says why and what to do instead."""


# --- TOML: one `[table.name]` and its sub-tables ------------------------------------------

_BARE_KEY = r"[A-Za-z0-9_-]+"
_BASIC_KEY = r'"(?:[^"\\\n]|\\.)*"'
_LITERAL_KEY = r"'[^'\n]*'"
_KEY = rf"(?:{_BARE_KEY}|{_BASIC_KEY}|{_LITERAL_KEY})"
_HEADER = re.compile(
    rf"^[ \t]*(\[\[?)[ \t]*({_KEY}(?:[ \t]*\.[ \t]*{_KEY})*)[ \t]*\]\]?[ \t]*(?:#.*)?$"
)
_KEY_PART = re.compile(_KEY)


def _header_keys(line: str) -> list[str] | None:
    """The dotted key of a `[table]` or `[[array]]` header line, unquoted; None for other lines."""
    match = _HEADER.match(line.rstrip("\r\n"))
    if match is None:
        return None
    keys = []
    for part in _KEY_PART.findall(match.group(2)):
        if part.startswith('"'):
            try:
                keys.append(str(json.loads(part)))
            except json.JSONDecodeError:
                return None
        elif part.startswith("'"):
            keys.append(part[1:-1])
        else:
            keys.append(part)
    return keys


def _is_blank_or_comment(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def parse_toml(text: str, path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise AgentFileError(
            f"{path} is not valid TOML ({exc}); fix it first, nothing was changed"
        ) from None


def _table_spans(lines: list[str], prefix: list[str], marker: str) -> list[tuple[int, int]]:
    """Line ranges of the tables whose header starts with `prefix`.

    A range runs from the header (or our marker comment right above it) to the next header,
    less the blank and comment lines just before that header: those belong to the next table.
    """
    starts = [i for i, line in enumerate(lines) if _header_keys(line) is not None]
    spans = []
    for n, index in enumerate(starts):
        keys = _header_keys(lines[index]) or []
        if keys[: len(prefix)] != prefix:
            continue
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        while end > index + 1 and _is_blank_or_comment(lines[end - 1]):
            end -= 1
        start = index - 1 if index > 0 and lines[index - 1].strip() == marker else index
        spans.append((start, end))
    return spans


def _without_spans(lines: list[str], spans: list[tuple[int, int]]) -> tuple[list[str], int]:
    """`lines` less the spans, and where the first span began in the result."""
    kept = list(lines)
    first = spans[0][0]
    for start, end in sorted(spans, reverse=True):
        del kept[start:end]
        # Drop the blank line that set the removed lines apart from what came before them.
        next_is_blank = start >= len(kept) or not kept[start].strip()
        if start > 0 and not kept[start - 1].strip() and next_is_blank:
            del kept[start - 1]
            if start - 1 < first:
                first -= 1
        elif start == 0 and kept and not kept[0].strip():
            del kept[0]
    return kept, min(first, len(kept))


def _comparable(data: dict[str, Any], table: str) -> dict[str, Any]:
    """`data` with an empty `table` left out: `[table]` and no table at all mean the same here."""
    if data.get(table) == {}:
        return {k: v for k, v in data.items() if k != table}
    return data


def toml_with_table(
    text: str, path: Path, table: str, name: str, values: dict[str, str], marker: str
) -> str:
    """`text` with `[table.name]` holding exactly `values`, everything else as it was.

    An existing `[table.name]` (with its sub-tables) is replaced where it stands; otherwise the
    new table goes at the end of the file, under `marker` (a comment line).
    """
    before = parse_toml(text, path)
    servers = before.get(table, {})
    if not isinstance(servers, dict):
        raise AgentFileError(f"`{table}` in {path} is not a table; nothing was changed")
    if servers.get(name) == values:
        return text
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    block = [f"{marker}\n", f"[{table}.{name}]\n"]
    block += [f"{key} = {json.dumps(value, ensure_ascii=False)}\n" for key, value in values.items()]
    spans = _table_spans(lines, [table, name], marker)
    if name in servers and not spans:
        raise AgentFileError(
            f"{path} defines {table}.{name} inline or with dotted keys, which connect does not "
            f"edit; remove that entry by hand, then run connect again (nothing was changed)"
        )
    if spans:
        kept, at = _without_spans(lines, spans)
        separator = ["\n"] if at > 0 and kept[at - 1].strip() else []
        after_block = ["\n"] if at < len(kept) and kept[at].strip() else []
        new_lines = kept[:at] + separator + block + after_block + kept[at:]
    else:
        separator = ["\n"] if lines and lines[-1].strip() else []
        new_lines = lines + separator + block
    new_text = "".join(new_lines)
    expected = {**before, table: {**servers, name: values}}
    _check(new_text, path, expected, table)
    return new_text


def toml_without_table(text: str, path: Path, table: str, name: str, marker: str) -> str:
    """`text` without `[table.name]` and its sub-tables (and our marker above it)."""
    before = parse_toml(text, path)
    servers = before.get(table, {})
    if not isinstance(servers, dict) or name not in servers:
        return text
    lines = text.splitlines(keepends=True)
    spans = _table_spans(lines, [table, name], marker)
    if not spans:
        raise AgentFileError(
            f"{path} defines {table}.{name} inline or with dotted keys, which disconnect does not "
            f"edit; remove it by hand (nothing was changed)"
        )
    kept, _ = _without_spans(lines, spans)
    new_text = "".join(kept)
    if not new_text.strip():
        new_text = ""
    expected = {**before, table: {k: v for k, v in servers.items() if k != name}}
    _check(new_text, path, expected, table)
    return new_text


def _check(new_text: str, path: Path, expected: dict[str, Any], table: str) -> None:
    """Refuse an edit whose result means anything but `expected`."""
    try:
        after = tomllib.loads(new_text)
    except tomllib.TOMLDecodeError:
        after = None
    if after is None or _comparable(after, table) != _comparable(expected, table):
        raise AgentFileError(
            f"could not edit {path} without changing other entries (an unusual layout of the "
            f"{table} tables?); nothing was changed"
        )


# --- JSON: one key of one object -------------------------------------------------------------


def read_json_object(path: Path, hint: str) -> tuple[str, dict[str, Any]]:
    """The file's text and its JSON object; an absent or empty file is `{}`."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return "", {}
    except OSError as exc:
        raise AgentFileError(f"cannot read {path}: {exc.strerror}") from None
    if not text.strip():
        return text, {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise AgentFileError(
            f"{path} is not valid JSON (line {exc.lineno}; comments are not supported); nothing "
            f"was changed. {hint}"
        ) from None
    if not isinstance(data, dict):
        raise AgentFileError(f"{path} does not hold a JSON object; nothing was changed")
    return text, data


def render_json(data: dict[str, Any], like: str) -> str:
    """`data` as JSON, indented the way the old text `like` was (two spaces for a new file)."""
    indent: str | int = 2
    for line in like.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and stripped != line:
            indent = line[: len(line) - len(stripped)]
            break
    return json.dumps(data, indent=indent, ensure_ascii=False) + "\n"


def with_json_entry(
    data: dict[str, Any], path: Path, key: str, name: str, value: dict[str, Any]
) -> dict[str, Any]:
    """`data` with `data[key][name] = value`, everything else kept in its order."""
    entries = data.get(key, {})
    if not isinstance(entries, dict):
        raise AgentFileError(f"`{key}` in {path} is not an object; nothing was changed")
    return {**data, key: {**entries, name: value}}


def without_json_entry(data: dict[str, Any], path: Path, key: str, name: str) -> dict[str, Any]:
    """`data` without `data[key][name]`; `key` goes too when that leaves it empty."""
    entries = data.get(key)
    if not isinstance(entries, dict) or name not in entries:
        return data
    rest = {k: v for k, v in entries.items() if k != name}
    if rest:
        return {**data, key: rest}
    return {k: v for k, v in data.items() if k != key}


def json_entry_edit(
    path: Path, key: str, name: str, entry: dict[str, Any] | None
) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """An agent's JSON config at `path`: its text, its data, and the data with
    `data[key][name]` set to `entry` (None: removed). A file that cannot be changed safely
    raises with what to write by hand."""
    hint = (
        f"Remove {key}.{name} by hand."
        if entry is None
        else f"Add this under {key} by hand: {json.dumps({name: entry})}"
    )
    old, data = read_json_object(path, hint)
    if entry is None:
        return old, data, without_json_entry(data, path, key, name)
    return old, data, with_json_entry(data, path, key, name, entry)


# --- Markdown: one marked block --------------------------------------------------------------


def _block_lines(lines: list[str], start: str, end: str, path: Path) -> tuple[int, int] | None:
    starts = [i for i, line in enumerate(lines) if line.strip().startswith(start)]
    if not starts:
        return None
    ends = [i for i, line in enumerate(lines) if line.strip().startswith(end) and i > starts[0]]
    if len(starts) > 1 or not ends:
        raise AgentFileError(
            f"{path} has a claude-memory block whose markers do not pair up; fix it by hand "
            f"(nothing was changed)"
        )
    return starts[0], ends[0] + 1


def with_block(text: str, path: Path, block: str, start: str, end: str) -> str:
    """`text` with our marked `block` (which starts with `start` and ends with `end`)."""
    lines = text.splitlines(keepends=True)
    span = _block_lines(lines, start, end, path)
    new = block.splitlines(keepends=True)
    if span is not None:
        return "".join(lines[: span[0]] + new + lines[span[1] :])
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    separator = ["\n"] if lines and lines[-1].strip() else []
    return "".join(lines + separator + new)


def without_block(text: str, path: Path, start: str, end: str) -> str:
    """`text` without our marked block (and the blank line that set it apart)."""
    lines = text.splitlines(keepends=True)
    span = _block_lines(lines, start, end, path)
    if span is None:
        return text
    kept, _ = _without_spans(lines, [span])
    return "".join(kept) if "".join(kept).strip() else ""


# --- writing -----------------------------------------------------------------------------------


def unified_diff(path: Path, old: str, new: str) -> str:
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=str(path),
            tofile=f"{path} (new)",
        )
    )


def backups_folder(data_dir: Path) -> Path:
    """Where the old versions of agents' files go: in our data dir, never beside the file, so
    no `.bak-` file is left in an agent's folder (or a repository) for it or the user to trip on."""
    return data_dir / "backups" / "agent-files"


# A file name is at most 255 bytes; the time suffix takes 28 and a collision counter a few more.
_NAME_LIMIT = 200


def backup_name(path: Path, now: datetime) -> str:
    """`path` flattened (`/root/.codex/config.toml` -> `root_.codex_config.toml`) and the UTC
    time: which file it was and when. A very long path keeps its end, the file's own name."""
    flat = "_".join(part for part in path.parts if part != path.anchor)
    flat = flat.encode()[-_NAME_LIMIT:].decode(errors="ignore")
    return f"{flat}.bak-{now:%Y%m%dT%H%M%S%fZ}"


def back_up(path: Path, now: datetime, backups: Path) -> Path | None:
    """Copy `path` (a symlink's target) into the `backups` folder (made owner-only), the copy
    readable by its owner only; None if absent. AgentFileError, the file untouched, if the
    copy cannot be made."""
    target = path.resolve() if path.is_symlink() else path
    if not target.exists():
        return None
    try:
        return _copy_into(target, backups, backup_name(target.absolute(), now))
    except OSError as exc:
        raise AgentFileError(
            f"cannot back up {target} into {backups} ({exc.strerror or exc}); {target} was left "
            "as it was"
        ) from None


def _copy_into(target: Path, backups: Path, name: str) -> Path:
    backups.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    backups.mkdir(mode=0o700, exist_ok=True)
    backups.chmod(0o700)
    for n in range(100):
        backup = backups / (name if n == 0 else f"{name}-{n}")
        try:
            handle = os.open(backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        try:
            with os.fdopen(handle, "wb") as out, target.open("rb") as source:
                shutil.copyfileobj(source, out)
        except BaseException:
            backup.unlink(missing_ok=True)
            raise
        stat = target.stat()
        os.utime(backup, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        return backup
    raise FileExistsError(f"100 backups named {name} already")


def write_with_backup(path: Path, text: str, now: datetime, backups: Path) -> Path | None:
    """Back the old file up into `backups`, then replace it atomically; a symlink's target is
    what changes."""
    target = path.resolve() if path.is_symlink() else path
    backup = back_up(target, now, backups)
    replace_file(target, text)
    return backup


def replace_file(path: Path, text: str) -> None:
    """Replace the file atomically, keeping its mode; a symlink's target is what changes."""
    target = path.resolve() if path.is_symlink() else path
    target.parent.mkdir(parents=True, exist_ok=True)
    mode = target.stat().st_mode & 0o777 if target.exists() else 0o600
    handle, temporary = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"
    )
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def remove_with_backup(path: Path, now: datetime, backups: Path) -> Path | None:
    """Back the file up into `backups`, then delete it; a symlink (say, into dotfiles) stays,
    its target empty."""
    if path.is_symlink():
        return write_with_backup(path, "", now, backups)
    backup = back_up(path, now, backups)
    path.unlink(missing_ok=True)
    return backup
