"""`import --from trajectories`: trajectory files (task, what was done, what to avoid).

Stored as `learn` stores them (server/domain/trajectories.py): kind `trajectory`, the labelled
`Task:` / `What worked:` / `What to avoid:` text and the parts in `metadata.trajectory`, so a
file imported here and the same trajectory recorded with `learn` are one memory. Read:
- Markdown or text, one or more trajectories per file: parts opened by a heading or a label
  at the start of a line (`## Task`, `Task: …`, `**Did:** …`); `did`, `worked`, `what worked`
  and `solution` mean what worked; `avoid`, `what to avoid`, `didn't work` what to avoid. A new
  task starts the next trajectory; without one, the title is the task. Front matter gives
  `tags`, `project` and `date`.
- JSON (an object or a list) and JSON Lines: `{task, worked | did, avoid, tags, project,
  created_at}`, what `claude-memory export` writes for a trajectory, or the files of Agent
  Trajectories (github.com/AgentWorkforce/trajectories, `.trajectories/completed/…/*.json`):
  the task title, the retrospective's approach as what worked, rejected alternatives and
  challenges as what to avoid. Trajectories still active or abandoned are skipped (counted).
A trajectory without a task or without what worked is reported with its file and place.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from server.core.errors import InvalidInput
from server.core.models.memories import MemoryDraft
from server.domain.trajectories import (
    MAX_PART_CHARS,
    TRAJECTORY_KIND,
    Trajectory,
    checked,
    trajectory_content,
    trajectory_metadata,
)
from server.ingest.tool_reading import (
    ReadContext,
    ToolReading,
    ToolRecord,
    file_time,
    first_heading,
    project_names,
    read_markdown,
    tag_list,
    text_field,
    time_from,
)

SOURCE = "trajectories"
SUFFIXES = (".md", ".markdown", ".txt", ".json", ".jsonl")
_LABELS = {
    "task": "task",
    "did": "worked",
    "worked": "worked",
    "what worked": "worked",
    "what did": "worked",
    "solution": "worked",
    "avoid": "avoid",
    "what to avoid": "avoid",
    "didn't work": "avoid",
    "did not work": "avoid",
}
_LABEL = "|".join(sorted((re.escape(k) for k in _LABELS), key=len, reverse=True))
_PART = re.compile(
    rf"^\s*(?:#{{1,6}}\s+)?(?:\*\*)?({_LABEL})(?:\*\*)?\s*(?::(?:\*\*)?\s*(.*)|\s*$)", re.I
)
_HEADING = re.compile(r"^\s*#{1,6}\s")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
Parts = dict[str, str]


def default_paths(environ: Mapping[str, str], home: Path, cwd: Path) -> list[Path]:
    """Agent Trajectories' folder in this project, `./.trajectories`."""
    return [cwd / ".trajectories"]


def read_trajectories(paths: Sequence[Path], context: ReadContext) -> ToolReading:
    """Every trajectory in the files (or folders) given; one transaction per file."""
    reading = ToolReading()
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files += sorted(p for p in path.rglob("*") if _wanted(p, path))
        elif path.is_file():
            files.append(path)
        else:
            reading.fail(path, "no such file or folder")
    for file in files:
        reading.files_found += 1
        try:
            is_json = file.suffix.lower() in (".json", ".jsonl")
            found = _parse_json(file) if is_json else _parse_text(file)
            fallback_time = file_time(file)
        except (OSError, ValueError) as exc:
            reading.fail(file, str(exc))
            continue
        reading.files_read += 1
        records = [
            record
            for where, item in found
            if (record := _record(item, f"{file}{where}", file, fallback_time, context, reading))
        ]
        reading.add(records)
    return reading


def _wanted(path: Path, root: Path) -> bool:
    """Trajectory files in a folder, hidden folders left out; Agent Trajectories' index and
    the Markdown copy it writes next to each completed JSON file are not trajectories."""
    if not path.is_file() or path.suffix.lower() not in SUFFIXES or path.name == "index.json":
        return False
    folders = path.relative_to(root).parts[:-1]
    if any(part.startswith(".") and part != ".trajectories" for part in folders):
        return False
    return not (path.suffix.lower() == ".md" and path.with_suffix(".json").is_file())


def _parse_json(file: Path) -> list[tuple[str, dict[str, Any]]]:
    text = file.read_text(encoding="utf-8")
    if file.suffix.lower() == ".jsonl":
        items = []
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    item = json.loads(line)
                except json.JSONDecodeError as exc:
                    item = {"_error": f"not JSON: {exc.msg}"}
                items.append((f":{number}", item if isinstance(item, dict) else {}))
        return items
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    if isinstance(document, dict) and isinstance(document.get("trajectories"), list):
        document = document["trajectories"]
    if isinstance(document, list):
        return [(f"[{i}]", d if isinstance(d, dict) else {}) for i, d in enumerate(document, 1)]
    if isinstance(document, dict):
        return [("", document)]
    raise ValueError("not a trajectory: expected a JSON object or list")


def _parse_text(file: Path) -> list[tuple[str, dict[str, Any]]]:
    """The trajectories of a Markdown/text file, each with the front matter's fields."""
    fields, body = read_markdown(file)
    common: dict[str, Any] = {
        "tags": tag_list(fields.get("tags")),
        "project": text_field(fields, "project"),
        "created_at": text_field(fields, "date", "created"),
    }
    found: list[Parts] = []
    current: Parts | None = None
    label = ""
    for line in body.splitlines():
        part = _PART.match(line)
        if part is None and _HEADING.match(line):
            label = ""  # another section: its lines belong to no part
            continue
        if part:
            label = _LABELS[part.group(1).lower()]
            if current is None or (label == "task" and current.get("task")):
                current = {}
                found.append(current)
            line = part.group(2) or ""
        if current is not None and label:
            current[label] = f"{current.get(label, '')}\n{line}"
    if not found:
        found = [{}]
    title = text_field(fields, "title") or first_heading(body)
    items = []
    for number, parts in enumerate(found, start=1):
        joined = {key: _joined(value) for key, value in parts.items()}
        if not joined.get("task") and len(found) == 1:
            joined["task"] = title
        items.append((f" (trajectory {number})" if len(found) > 1 else "", {**common, **joined}))
    return items


def _joined(text: str) -> str:
    """A part's lines as one line: list items separated by `; `."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if sum(1 for line in lines if _BULLET.match(line)) > 1:
        return "; ".join(_BULLET.sub("", line) for line in lines)
    return " ".join(_BULLET.sub("", line) for line in lines)


def _record(
    item: dict[str, Any],
    where: str,
    file: Path,
    fallback_time: datetime,
    context: ReadContext,
    reading: ToolReading,
) -> ToolRecord | None:
    status = str(item.get("status") or "")
    if status in ("active", "abandoned"):
        reading.skipped[status] += 1
        return None
    parts, original_id = _parts(item)
    directory = _project_directory(item, file)
    project = text_field(item, "project")
    if not project and directory:
        project = project_names([directory], context.project_names)[directory]
    try:
        trajectory = checked(
            Trajectory(
                parts.get("task", ""),
                parts.get("worked", ""),
                parts.get("avoid", ""),
                tag_list(item.get("tags")),
                project,
            )
        )
    except InvalidInput as exc:
        reading.skipped["invalid"] += 1
        reading.errors.append(f"{where}: {item.get('_error') or exc.message}")
        return None
    metadata = {**trajectory_metadata(trajectory), "original_file": str(file)}
    if original_id:
        metadata["original_id"] = original_id
    draft = MemoryDraft(
        content=trajectory_content(trajectory),
        kind=TRAJECTORY_KIND,
        source=SOURCE,
        project=trajectory.project,
        project_path=directory,
        tags=trajectory.tags,
        created_at=_time(item) or fallback_time,
        metadata=metadata,
    )
    return ToolRecord(draft, where)


def _parts(item: Mapping[str, Any]) -> tuple[Parts, str]:
    """(task, worked, avoid) of any JSON shape read, and the original id if it has one."""
    original_id = str(item.get("id") or "")
    metadata = item.get("metadata")
    inner = metadata.get("trajectory") if isinstance(metadata, dict) else None
    if isinstance(inner, dict):  # what `claude-memory export` wrote
        return {key: _flat(inner.get(key)) for key in ("task", "worked", "avoid")}, original_id
    task = item.get("task")
    if isinstance(task, dict):  # Agent Trajectories
        retro = item.get("retrospective")
        retro = retro if isinstance(retro, dict) else {}
        worked = _flat(retro.get("approach")) or _flat(retro.get("summary"))
        parts = {"task": _flat(task.get("title")), "worked": worked, "avoid": _avoid(retro)}
        return parts, original_id
    parts = {
        "task": _flat(task),
        "worked": _flat(item.get("worked")) or _flat(item.get("did")),
        "avoid": _flat(item.get("avoid")),
    }
    return parts, original_id


def _avoid(retro: Mapping[str, Any]) -> str:
    """Rejected alternatives (`option: reason`), then challenges, as long as they fit."""
    items: list[str] = []
    decisions = [d for d in retro.get("decisions") or [] if isinstance(d, dict)]
    for alternative in [a for d in decisions for a in d.get("alternatives") or []]:
        if isinstance(alternative, dict) and alternative.get("option"):
            reason = f": {alternative['reason']}" if alternative.get("reason") else ""
            items.append(f"{alternative['option']}{reason}")
    items += [str(c) for c in retro.get("challenges") or [] if str(c).strip()]
    kept: list[str] = []
    for entry in items:
        if len("; ".join([*kept, entry])) > MAX_PART_CHARS:
            break
        kept.append(entry)
    return "; ".join(kept)


def _flat(value: object) -> str:
    if isinstance(value, list):
        return "; ".join(str(v).strip() for v in value if str(v).strip())
    return str(value).strip() if isinstance(value, str | int | float) else ""


def _time(item: Mapping[str, Any]) -> datetime | None:
    for name in ("created_at", "completedAt", "startedAt", "date"):
        moment = time_from(item.get(name))
        if moment is not None:
            return moment
    return None


def _project_directory(item: Mapping[str, Any], file: Path) -> str:
    """A project directory: Agent Trajectories' `projectId` when it is a path, else the
    folder that holds the `.trajectories` folder the file is in."""
    project_id = item.get("projectId")
    if isinstance(project_id, str) and project_id.startswith("/"):
        return project_id
    for parent in file.resolve().parents:
        if parent.name == ".trajectories":
            return str(parent.parent)
    return ""
