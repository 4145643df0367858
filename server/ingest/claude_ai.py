"""Read a claude.ai data export (the zip, its folder, or `conversations.json`) into typed values.

Anthropic does not document the export (FORMATS.md §2), so everything is read defensively: a
conversation, message, project or memory of an unexpected shape is left out and reported in
`warnings`, and only input that is not a claude.ai export at all raises `ExportFormatError`.

Rules chosen here, and why:

- A message's text is its `text` content blocks, joined; the flat `text` field only when the
  blocks hold none (old exports fill one or the other). Thinking, web searches and other tool
  calls are left out: they are the model's working, not what was said.
- An artifact the assistant wrote (`artifacts` tool, `create` or `rewrite`) is part of its
  answer, often the decision itself (an ADR): its full content is appended, marked
  `[artifact: <title>]` … `[end of artifact]`. `update` commands hold only a fragment and are
  left out.
- What the human attached as text (`extracted_content`, including long pastes with an empty
  file name) is appended marked `[attachment: <name>]` … `[end of attachment]`, so it is never
  mistaken for something the human typed. Binary `files` have no content in the export; their
  names are kept in `file_names`.
- Edited questions and regenerated answers are siblings under one parent: every branch is
  kept, in export order, with `parent_uuid`, since what was said on an abandoned branch was
  still said. The root sentinel parent becomes None.
- Messages with no text after this are left out.
- Projects (`projects.json`) become documents: one per project (name, description and custom
  instructions) and one per knowledge file. Memories (`memories.json`) become one document for
  the account memory and one per project memory.
"""

from __future__ import annotations

import json
import zipfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from server.ingest.timestamps import parse_timestamp

__all__ = [
    "ClaudeAiConversation",
    "ClaudeAiExport",
    "ClaudeAiMessage",
    "ExportDocument",
    "ExportFormatError",
    "read_claude_ai_export",
]

Role = Literal["user", "assistant"]
DocumentKind = Literal["project", "project_doc", "account_memory", "project_memory"]

ROOT_PARENT = "00000000-0000-4000-8000-000000000000"
_SENDERS: dict[str, Role] = {"human": "user", "user": "user", "assistant": "assistant"}
_MEMBERS = ("conversations.json", "projects.json", "memories.json")
# An export is read into memory, so its files are capped: one file, all of them together, and
# how far a zip member may inflate beyond its compressed size (JSON text deflates about 10x; a
# zip bomb thousands of times). The ratio is judged once a member has inflated past a MiB.
MAX_MEMBER_BYTES = 1024**3
MAX_EXPORT_BYTES = 2 * 1024**3
MAX_INFLATION_RATIO = 100
_RATIO_FLOOR_BYTES = 1024**2
_READ_CHUNK_BYTES = 1024**2


class ExportFormatError(ValueError):
    """The input is not a claude.ai data export; the message says what was expected."""


@dataclass(frozen=True, slots=True)
class ClaudeAiMessage:
    """One message of a conversation, as prose (attachments and artifacts marked inline)."""

    uuid: str
    role: Role
    text: str
    created_at: datetime | None
    parent_uuid: str | None  # None at the root; siblings sharing a parent are edits/retries
    file_names: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ClaudeAiConversation:
    """One conversation with its messages in export order, every branch included."""

    uuid: str
    name: str  # the title; may be ""
    summary: str
    created_at: datetime | None
    updated_at: datetime | None
    messages: list[ClaudeAiMessage]


@dataclass(frozen=True, slots=True)
class ExportDocument:
    """A text from the export that is not a conversation: project knowledge or a memory."""

    kind: DocumentKind
    source_id: str  # stable across exports: the doc/project uuid, or "memory:<uuid>"
    title: str
    text: str
    project_uuid: str | None
    project_name: str | None
    created_at: datetime | None


@dataclass(frozen=True, slots=True)
class ClaudeAiExport:
    """Everything worth importing from one export."""

    conversations: list[ClaudeAiConversation]
    documents: list[ExportDocument]
    warnings: list[str]  # what was left out because its shape was unexpected


def _string(value: Any) -> str:
    if not isinstance(value, str):
        return ""
    # A `\udXXX` escape left alone (e.g. an emoji cut in half) would fail to encode on storage.
    return value.encode("utf-8", "replace").decode("utf-8")


def _load_members(path: Path) -> dict[str, bytes]:
    """The raw bytes of the export files that exist, by file name."""
    if path.is_dir():
        files = [path / name for name in _MEMBERS if (path / name).is_file()]
        return _capped_total({file.name: _read_file(file) for file in files})
    if zipfile.is_zipfile(path):
        return _zip_members(path)
    return {"conversations.json": _read_file(path)}


def _read_file(path: Path) -> bytes:
    with path.open("rb") as handle:
        data = handle.read(MAX_MEMBER_BYTES + 1)
    if len(data) > MAX_MEMBER_BYTES:
        raise ExportFormatError(f"{path} is larger than {MAX_MEMBER_BYTES:,} bytes; not read")
    return data


def _capped_total(members: dict[str, bytes]) -> dict[str, bytes]:
    if sum(len(data) for data in members.values()) > MAX_EXPORT_BYTES:
        raise ExportFormatError(f"the export's files hold more than {MAX_EXPORT_BYTES:,} bytes")
    return members


def _zip_members(path: Path) -> dict[str, bytes]:
    # Members may sit at any depth; take the shallowest of each name.
    try:
        with zipfile.ZipFile(path) as archive:
            found: dict[str, zipfile.ZipInfo] = {}
            for member in sorted(
                archive.infolist(), key=lambda m: (m.filename.count("/"), m.filename)
            ):
                name = PurePosixPath(member.filename).name
                if name in _MEMBERS and name not in found:
                    found[name] = member
            members: dict[str, bytes] = {}
            budget = MAX_EXPORT_BYTES
            for name, member in found.items():
                members[name] = _inflate(archive, member, min(MAX_MEMBER_BYTES, budget))
                budget -= len(members[name])
            return members
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as err:
        raise ExportFormatError(f"cannot read the export zip: {err}") from None


def _inflate(archive: zipfile.ZipFile, member: zipfile.ZipInfo, limit: int) -> bytes:
    """A member's bytes, read a MiB at a time and abandoned as soon as it inflates too far
    (what its header declares is not trusted)."""
    chunks: list[bytes] = []
    inflated = 0
    with archive.open(member) as stream:
        while chunk := stream.read(_READ_CHUNK_BYTES):
            inflated += len(chunk)
            if inflated > limit:
                raise ExportFormatError(
                    f"{member.filename} in the export zip inflates past {limit:,} bytes; not read"
                )
            ratio_cap = MAX_INFLATION_RATIO * max(member.compress_size, 1)
            if inflated > _RATIO_FLOOR_BYTES and inflated > ratio_cap:
                raise ExportFormatError(
                    f"{member.filename} in the export zip inflates more than"
                    f" {MAX_INFLATION_RATIO}x its compressed size (a zip bomb?); not read"
                )
            chunks.append(chunk)
    return b"".join(chunks)


def _parse(name: str, data: bytes) -> Any:
    try:
        return json.loads(data.decode("utf-8-sig", "replace"))
    except ValueError:
        raise ExportFormatError(f"{name} is not JSON; expected a claude.ai data export") from None
    except RecursionError:
        raise ExportFormatError(
            f"{name} nests its JSON too deeply to read; no claude.ai export does"
        ) from None


def read_claude_ai_export(path: Path) -> ClaudeAiExport:
    """Read an export `.zip`, the folder it unpacks to, or a `conversations.json`.

    Raises ExportFormatError when there is no conversations list to read.
    """
    members = _load_members(path)
    if "conversations.json" not in members:
        raise ExportFormatError(f"no conversations.json in {path}: not a claude.ai data export")
    direct = path.is_file() and not zipfile.is_zipfile(path)
    raw = _parse(path.name if direct else "conversations.json", members["conversations.json"])
    if isinstance(raw, Mapping) and isinstance(raw.get("conversations"), list):
        raw = raw["conversations"]
    if not isinstance(raw, list):
        raise ExportFormatError("conversations.json is not a list of conversations")
    warnings: list[str] = []
    conversations = []
    for index, item in enumerate(raw):
        conversation = _conversation(item, warnings)
        if conversation is None:
            warnings.append(f"conversations.json: item {index} is not a conversation; skipped")
        else:
            conversations.append(conversation)
    if raw and not conversations:
        raise ExportFormatError("conversations.json holds no conversations (uuid + chat_messages)")
    projects = _optional(members, "projects.json", warnings)
    memories = _optional(members, "memories.json", warnings)
    documents = _project_documents(projects, warnings)
    documents += _memory_documents(memories, _project_names(projects), warnings)
    return ClaudeAiExport(conversations, documents, warnings)


def _optional(members: Mapping[str, bytes], name: str, warnings: list[str]) -> Any:
    if name not in members:
        return None
    try:
        return _parse(name, members[name])
    except ExportFormatError as err:
        warnings.append(str(err))
        return None


def _conversation(item: Any, warnings: list[str]) -> ClaudeAiConversation | None:
    if not isinstance(item, Mapping) or not isinstance(item.get("uuid"), str):
        return None
    if not isinstance(item.get("chat_messages"), list):
        return None
    messages = []
    for raw in item["chat_messages"]:
        if not isinstance(raw, Mapping) or _string(raw.get("sender")) not in _SENDERS:
            warnings.append(f"conversation {item['uuid']}: a message of unknown shape; skipped")
            continue
        message = _message(raw)
        if message is not None:
            messages.append(message)
    return ClaudeAiConversation(
        uuid=item["uuid"],
        name=_string(item.get("name")),
        summary=_string(item.get("summary")),
        created_at=parse_timestamp(item.get("created_at")),
        updated_at=parse_timestamp(item.get("updated_at")),
        messages=messages,
    )


def _message(raw: Mapping[str, Any]) -> ClaudeAiMessage | None:
    role = _SENDERS[_string(raw.get("sender"))]
    if not isinstance(raw.get("uuid"), str):
        return None
    content = raw.get("content")
    blocks = [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []
    said = [_string(b.get("text")).strip() for b in blocks if b.get("type") == "text"]
    parts = [text for text in said if text] or [_string(raw.get("text")).strip()]
    if role == "assistant":
        parts += [_artifact(b) for b in blocks if b.get("type") == "tool_use"]
    else:
        attachments = raw.get("attachments")
        parts += [_attachment(a) for a in (attachments if isinstance(attachments, list) else [])]
    text = "\n\n".join(part for part in parts if part)
    if not text:
        return None
    parent = raw.get("parent_message_uuid")
    files = raw.get("files")
    return ClaudeAiMessage(
        uuid=raw["uuid"],
        role=role,
        text=text,
        created_at=parse_timestamp(raw.get("created_at")),
        parent_uuid=parent if isinstance(parent, str) and parent != ROOT_PARENT else None,
        file_names=[
            _string(f.get("file_name"))
            for f in (files if isinstance(files, list) else [])
            if isinstance(f, Mapping) and _string(f.get("file_name"))
        ],
    )


def _artifact(block: Mapping[str, Any]) -> str:
    tool_input = block.get("input")
    if block.get("name") != "artifacts" or not isinstance(tool_input, Mapping):
        return ""
    content = _string(tool_input.get("content")).strip()
    if tool_input.get("command") not in ("create", "rewrite") or not content:
        return ""
    title = _string(tool_input.get("title")) or _string(tool_input.get("id")) or "untitled"
    return f"[artifact: {title}]\n{content}\n[end of artifact]"


def _attachment(attachment: Any) -> str:
    if not isinstance(attachment, Mapping):
        return ""
    content = _string(attachment.get("extracted_content")).strip()
    if not content:
        return ""
    name = _string(attachment.get("file_name")) or "pasted text"
    return f"[attachment: {name}]\n{content}\n[end of attachment]"


def _as_list(data: Any) -> list[Any]:
    """projects.json and memories.json: a list of objects, or (some exports) one object."""
    if isinstance(data, list):
        return data
    return [data] if isinstance(data, Mapping) else []


def _project_names(projects: Any) -> dict[str, str]:
    return {
        item["uuid"]: _string(item.get("name"))
        for item in _as_list(projects)
        if isinstance(item, Mapping) and isinstance(item.get("uuid"), str)
    }


def _project_documents(projects: Any, warnings: list[str]) -> list[ExportDocument]:
    if projects is not None and not _as_list(projects):
        warnings.append("projects.json: expected a list of projects; skipped")
    documents = []
    for item in _as_list(projects):
        if not isinstance(item, Mapping) or not isinstance(item.get("uuid"), str):
            warnings.append("projects.json: an item without a uuid; skipped")
            continue
        uuid, name = item["uuid"], _string(item.get("name"))
        about = [_string(item.get("description")).strip()]
        instructions = _string(item.get("prompt_template")).strip()
        if instructions:
            about.append(f"Project instructions:\n{instructions}")
        text = "\n\n".join(part for part in about if part)
        created = parse_timestamp(item.get("created_at"))
        if text:
            documents.append(
                ExportDocument(
                    kind="project",
                    source_id=uuid,
                    title=name,
                    text=text,
                    project_uuid=uuid,
                    project_name=name,
                    created_at=created,
                )
            )
        docs = item.get("docs")
        for doc in docs if isinstance(docs, list) else []:
            content = _string(doc.get("content")).strip() if isinstance(doc, Mapping) else ""
            if not content:
                continue
            filename = _string(doc.get("filename")) or "untitled"
            documents.append(
                ExportDocument(
                    kind="project_doc",
                    source_id=_string(doc.get("uuid")) or f"{uuid}/{filename}",
                    title=filename,
                    text=content,
                    project_uuid=uuid,
                    project_name=name,
                    created_at=parse_timestamp(doc.get("created_at")) or created,
                )
            )
    return documents


def _memory_documents(
    memories: Any, project_names: Mapping[str, str], warnings: list[str]
) -> list[ExportDocument]:
    documents = []
    for item in _as_list(memories):
        if not isinstance(item, Mapping):
            warnings.append("memories.json: an item that is not an object; skipped")
            continue
        if not {"conversations_memory", "project_memories"} & item.keys():
            warnings.append("memories.json: an object without memory fields; skipped")
            continue
        account = _string(item.get("account_uuid")) or "account"
        text = _string(item.get("conversations_memory")).strip()
        if text:
            documents.append(
                ExportDocument(
                    kind="account_memory",
                    source_id=f"memory:{account}",
                    title="claude.ai memory",
                    text=text,
                    project_uuid=None,
                    project_name=None,
                    created_at=None,
                )
            )
        per_project = item.get("project_memories")
        if per_project is not None and not isinstance(per_project, Mapping):
            warnings.append("memories.json: project_memories is not an object; skipped")
            continue
        for project_uuid, value in (per_project or {}).items():
            text = _string(value).strip()
            if not text:
                continue
            name = project_names.get(project_uuid)
            documents.append(
                ExportDocument(
                    kind="project_memory",
                    source_id=f"memory:{project_uuid}",
                    title=f"claude.ai memory for project {name or project_uuid}",
                    text=text,
                    project_uuid=project_uuid,
                    project_name=name,
                    created_at=None,
                )
            )
    return documents
