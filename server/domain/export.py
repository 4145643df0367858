"""Formats for exporting memories: a JSON array, JSON Lines, or Markdown.

Each format is written piece by piece (start, one item at a time, end) so an export of any
size streams without holding every memory in memory. JSON and JSON Lines carry the same object
per memory, which `claude-memory import --memories` reads back.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from server.core.models.memories import Memory


def memory_record(memory: Memory) -> dict[str, Any]:
    """The exported shape of one memory: every field, times in ISO 8601 UTC."""
    return {
        "id": memory.id,
        "content": memory.content,
        "content_hash": memory.content_hash,
        "kind": memory.kind,
        "tags": list(memory.tags),
        "source": memory.source,
        "project": memory.project,
        "project_path": memory.project_path,
        "session_id": memory.session_id,
        "role": memory.role,
        "created_at": memory.created_at.isoformat(),
        "updated_at": memory.updated_at.isoformat(),
        "deleted_at": memory.deleted_at.isoformat() if memory.deleted_at else None,
        "metadata": memory.metadata,
        "supersedes": memory.supersedes,
        "archived_at": memory.archived_at.isoformat() if memory.archived_at else None,
        "supersede_reason": memory.supersede_reason,
        "superseded_by": memory.superseded_by,
        "owner": memory.owner,
        "visibility": memory.visibility,
    }


class ExportWriter(Protocol):
    def start(self) -> str: ...
    def item(self, memory: Memory, *, first: bool) -> str: ...
    def end(self) -> str: ...


class JsonArrayWriter:
    def start(self) -> str:
        return "[\n"

    def item(self, memory: Memory, *, first: bool) -> str:
        return ("" if first else ",\n") + json.dumps(memory_record(memory), ensure_ascii=False)

    def end(self) -> str:
        return "\n]\n"


class JsonLinesWriter:
    def start(self) -> str:
        return ""

    def item(self, memory: Memory, *, first: bool) -> str:
        return json.dumps(memory_record(memory), ensure_ascii=False) + "\n"

    def end(self) -> str:
        return ""


class MarkdownWriter:
    def start(self) -> str:
        return "# claude-memory export\n"

    def item(self, memory: Memory, *, first: bool) -> str:
        details = [
            f"- kind: {memory.kind}",
            f"- created: {memory.created_at.isoformat()}",
        ]
        if memory.project:
            details.append(f"- project: {memory.project}")
        if memory.source:
            details.append(f"- source: {memory.source}")
        if memory.tags:
            details.append(f"- tags: {', '.join(memory.tags)}")
        if memory.deleted_at:
            details.append(f"- deleted: {memory.deleted_at.isoformat()}")
        return f"\n## Memory {memory.id}\n\n" + "\n".join(details) + f"\n\n{memory.content}\n"

    def end(self) -> str:
        return ""


def writer_for(output_format: str) -> ExportWriter:
    writers: dict[str, ExportWriter] = {
        "json": JsonArrayWriter(),
        "jsonl": JsonLinesWriter(),
        "markdown": MarkdownWriter(),
    }
    return writers[output_format]
