"""`import --from mem0`: memories exported from mem0 or OpenMemory.

Shapes read (tests/fixtures/other_tools/mem0/README.md names the sources):
- OpenMemory's backup (`POST /api/v1/backup/export`): a zip holding `memories.json` (user,
  apps, categories, memories with `content`, `state`, `category_ids`, ISO times) and
  `memories.jsonl.gz` (one memory per line with `app` and category names); either file alone.
- mem0's `get_all()` saved as JSON: `{"results": [...]}` (a bare list before v1.1), items with
  `memory`, `hash`, `metadata`, `created_at`, `updated_at`, `user_id` / `agent_id` / `run_id`;
  the platform's pages add `categories`. OpenMemory's list pages (`{"items": [...]}`) too.

Each memory is a fact mem0 already extracted, so it is stored `distilled`, with its category
names as tags and its own times. Deleted memories are left out (counted); archived and paused
ones are kept and say so in `metadata.state`. A file that is not JSON, or a line that is not a
memory, is reported by name and line; the rest is imported.
"""

from __future__ import annotations

import gzip
import json
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from server.core.models.memories import MemoryDraft
from server.ingest.tool_reading import ReadContext, ToolReading, ToolRecord, time_from

SOURCE = "mem0"
KIND = "distilled"
GROUP_SIZE = 512  # memories per transaction: a whole export may hold thousands
SUFFIXES = (".json", ".jsonl", ".gz", ".zip")
_CONTENT_FIELDS = ("memory", "content", "data", "text")
_IDENTITY_FIELDS = ("user_id", "agent_id", "run_id", "actor_id", "app_id", "app", "hash")
Item = tuple[str, dict[str, Any]]  # (where in the file, the memory object)


def default_paths(environ: Mapping[str, str], home: Path, cwd: Path) -> list[Path]:
    """mem0 keeps no export on disk: the user names one (`--from mem0 FILE`)."""
    return []


def read_mem0(paths: Sequence[Path], context: ReadContext) -> ToolReading:
    """Every memory in the files given (folders are searched for .json/.jsonl/.gz/.zip)."""
    reading = ToolReading()
    for path in _files(paths, reading):
        reading.files_found += 1
        try:
            items = list(_items(path))
        except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
            reading.fail(path, _reason(exc))
            continue
        reading.files_read += 1
        records = []
        for where, item in items:
            record = _record(item, f"{path}{where}", reading)
            if record is not None:
                records.append(record)
        for start in range(0, len(records), GROUP_SIZE):
            reading.add(records[start : start + GROUP_SIZE])
    return reading


def _files(paths: Sequence[Path], reading: ToolReading) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(
                p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES
            )
        elif path.is_file():
            found.append(path)
        else:
            reading.fail(path, "no such file or folder")
    return found


def _reason(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
    if isinstance(exc, zipfile.BadZipFile):
        return f"not a zip file: {exc}"
    if isinstance(exc, gzip.BadGzipFile | EOFError):
        return f"not a gzip file: {exc}"
    return str(exc)


def _items(path: Path) -> Iterator[Item]:
    """(where, memory object) for every memory in one file, whatever its packaging."""
    name = path.name.lower()
    if name.endswith(".zip"):
        yield from _zip_items(path)
    elif name.endswith(".gz"):
        yield from _lines(gzip.decompress(path.read_bytes()).decode("utf-8"))
    elif name.endswith(".jsonl"):
        yield from _lines(path.read_text(encoding="utf-8"))
    else:
        yield from _document(json.loads(path.read_text(encoding="utf-8")))


def _zip_items(path: Path) -> Iterator[Item]:
    """OpenMemory's backup: memories.json when present (it has states), else the JSONL."""
    with zipfile.ZipFile(path) as archive:
        members = {Path(n).name: n for n in archive.namelist() if not n.endswith("/")}
        if "memories.json" in members:
            document = json.loads(archive.read(members["memories.json"]).decode("utf-8"))
            for where, item in _document(document):
                yield f"!memories.json{where}", item
        elif "memories.jsonl.gz" in members:
            text = gzip.decompress(archive.read(members["memories.jsonl.gz"])).decode("utf-8")
            for where, item in _lines(text):
                yield f"!memories.jsonl.gz{where}", item
        else:
            raise ValueError("no memories.json or memories.jsonl.gz in the zip")


def _lines(text: str) -> Iterator[Item]:
    """JSON Lines: a bad line is yielded as an empty object, to be reported by number."""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            item = {"_error": f"not JSON: {exc.msg}"}
        yield f":{number}", item if isinstance(item, dict) else {}


def _document(document: Any) -> Iterator[Item]:
    """The memories of one JSON document, with OpenMemory's category ids made names."""
    if isinstance(document, list):
        items: Any = document
    elif isinstance(document, dict):
        items = next((document[k] for k in ("memories", "results", "items") if k in document), None)
        if items is None and any(f in document for f in _CONTENT_FIELDS):
            items = [document]
    else:
        items = None
    if not isinstance(items, list):
        raise ValueError("no memories: expected a list, or memories / results / items")
    names = _category_names(document)
    apps = _app_names(document)
    for position, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            yield f"[{position}]", {}
            continue
        extra: dict[str, Any] = {}
        if names and isinstance(item.get("category_ids"), list):
            extra["categories"] = [names.get(str(i), str(i)) for i in item["category_ids"]]
        if item.get("app_id") and str(item["app_id"]) in apps:
            extra["app"] = apps[str(item["app_id"])]
        yield f"[{position}]", {**item, **extra}


def _category_names(document: Any) -> dict[str, str]:
    if not isinstance(document, dict) or not isinstance(document.get("categories"), list):
        return {}
    return {
        str(c["id"]): str(c["name"])
        for c in document["categories"]
        if isinstance(c, dict) and c.get("id") and c.get("name")
    }


def _app_names(document: Any) -> dict[str, str]:
    if not isinstance(document, dict) or not isinstance(document.get("apps"), list):
        return {}
    return {
        str(a["id"]): str(a["name"])
        for a in document["apps"]
        if isinstance(a, dict) and a.get("id") and a.get("name")
    }


def _record(item: dict[str, Any], where: str, reading: ToolReading) -> ToolRecord | None:
    """One memory object as a draft; None (counted or reported) when it is not one to keep."""
    content = next((item[f] for f in _CONTENT_FIELDS if isinstance(item.get(f), str)), "")
    if not content.strip():
        reading.skipped["invalid"] += 1
        reading.errors.append(f"{where}: {item.get('_error') or 'not a memory: no text'}")
        return None
    state = str(item.get("state") or "active")
    if state == "deleted" or item.get("deleted_at"):
        reading.skipped["deleted_in_file"] += 1
        return None
    raw_metadata = item.get("metadata")
    own: dict[str, Any] = raw_metadata if isinstance(raw_metadata, dict) else {}
    metadata: dict[str, Any] = {"original_id": str(item.get("id") or ""), "state": state}
    metadata.update({f: item[f] for f in _IDENTITY_FIELDS if item.get(f) not in (None, "")})
    if item.get("updated_at"):
        metadata["updated_at"] = str(item["updated_at"])
    if own:
        metadata["mem0_metadata"] = own
    categories = item.get("categories")
    tags = [str(c) for c in categories if str(c).strip()] if isinstance(categories, list) else []
    draft = MemoryDraft(
        content=content,
        kind=KIND,
        source=SOURCE,
        project=own["project"] if isinstance(own.get("project"), str) else "",
        tags=tags,
        created_at=time_from(item.get("created_at")),
        metadata=metadata,
    )
    return ToolRecord(draft, where)
