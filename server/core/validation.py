"""Input checks shared by every write and read path: each raises InvalidInput with a message
that says what to send instead. Redaction happens here too, so no content reaches hashing,
embedding or storage without it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from server.core.access import VISIBILITIES
from server.core.errors import InvalidInput, NotFound
from server.core.models.memories import MEMORY_KINDS, MemoryDraft, MemoryFilter, NewMemory
from server.core.redact import redact

MAX_TAGS = 50
MAX_TAG_CHARS = 100
MAX_FIELD_CHARS = 1_000
MAX_ID = 2**63 - 1
MAX_SEARCH_LIMIT = 100
MAX_PAGE = 500
MAX_FUSION_WEIGHT = 10
MAX_SCAN_LIMIT = 10_000
MAX_QUERY_CHARS = 10_000
MAX_METADATA_CHARS = 20_000
# Deeper JSON cannot be turned back into a response (Python's and pydantic's serialisers
# recurse), so a save that deep is refused and a stored row that deep is shown cut off.
MAX_METADATA_DEPTH = 32
TOO_DEEP_TO_SHOW = f"[nested deeper than {MAX_METADATA_DEPTH} levels: not shown]"


@dataclass(frozen=True, slots=True)
class PreparedContent:
    """Content after validation and redaction, with its hash."""

    content: str
    content_hash: str
    redacted: int


def clean_text(value: str) -> str:
    """Text Postgres can store: NUL characters dropped, lone surrogates replaced."""
    text = value.replace("\x00", "")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


def content_hash(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def prepare_content(content: str, max_chars: int) -> PreparedContent:
    """Strip, check size, redact secrets and hash: the form every write stores."""
    if not isinstance(content, str):
        raise InvalidInput("content must be text")
    text = clean_text(content).strip()
    if not text:
        raise InvalidInput("content is empty; give the text to remember")
    if len(text) > max_chars:
        raise InvalidInput(
            f"content has {len(text):,} characters; the limit is {max_chars:,}: "
            "split it into several memories"
        )
    redaction = redact(text)
    return PreparedContent(redaction.text, content_hash(redaction.text), redaction.count)


# Metadata keys that only the server's own code writes, through MemoryDraft.server_metadata
# (#65 M2): promote reads them as "a person wrote this line in the instruction file", "a
# model distilled this as the user's decision" and "this came from an import". A save, a
# batch, an import or an export read back that carries one has it dropped, so no writer can
# make its text pass for the user's own words.
SERVER_METADATA_KEYS = frozenset({"written_in_instructions", "distill_kind", "imported_from"})


def prepare_draft(draft: MemoryDraft, max_chars: int) -> tuple[NewMemory, int]:
    """A draft checked, cleaned and redacted into the row to insert, with its redaction count.

    Content, tags and metadata values are free text a caller may paste a secret into, so all
    three are redacted; so are source, project and project path, names a caller chooses and
    every teammate of a project is shown. Session ids and roles are checked ids.
    """
    prepared = prepare_content(draft.content, max_chars)
    tags, tag_redactions = clean_tags(draft.tags)
    metadata, metadata_redactions = clean_metadata(
        {
            **{k: v for k, v in draft.metadata.items() if k not in SERVER_METADATA_KEYS},
            **draft.server_metadata,
        }
        if isinstance(draft.metadata, dict)
        else draft.metadata
    )
    source, source_redactions = redacted_field(draft.source, "source")
    project, project_redactions = redacted_field(draft.project, "project")
    project_path, path_redactions = redacted_field(draft.project_path, "project_path")
    memory = NewMemory(
        content=prepared.content,
        content_hash=prepared.content_hash,
        kind=check_kind(draft.kind),
        tags=tags,
        source=source,
        project=project,
        project_path=project_path,
        session_id=blank_to_none(clean_field(draft.session_id or "", "session_id")),
        role=blank_to_none(clean_field(draft.role or "", "role")),
        created_at=draft.created_at,
        metadata=metadata,
        visibility=check_visibility(draft.visibility),
    )
    redactions = source_redactions + project_redactions + path_redactions
    return memory, prepared.redacted + tag_redactions + metadata_redactions + redactions


def check_visibility(visibility: str | None) -> str | None:
    if visibility is not None and visibility not in VISIBILITIES:
        raise InvalidInput(f"visibility must be private or shared, got {visibility!r}")
    return visibility


def clean_metadata(metadata: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """Metadata storable and redacted, within a size limit, with its redaction count.

    Every string, keys and values at any depth, loses NUL characters (Postgres cannot store
    them) and has its secrets replaced.
    """
    if not isinstance(metadata, dict):
        raise InvalidInput("metadata must be a JSON object")
    if json_depth(metadata) > MAX_METADATA_DEPTH:
        raise InvalidInput(
            f"metadata is nested more than {MAX_METADATA_DEPTH} levels deep; flatten it"
        )
    cleaned, redacted = _clean_strings(metadata)
    if len(repr(cleaned)) > MAX_METADATA_CHARS:
        raise InvalidInput(f"metadata is larger than {MAX_METADATA_CHARS:,} characters")
    return cleaned, redacted


def json_depth(value: Any) -> int:
    """How many objects and arrays deep `value` nests, counted without recursion."""
    deepest = 0
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            children = item.values() if isinstance(item, dict) else item
            pending.extend((child, depth + 1) for child in children)
    return deepest


def load_stored_metadata(data: bytes | str) -> Any:
    """A stored `metadata` value as Python, cut off below MAX_METADATA_DEPTH levels.

    Rows saved before saves were depth-checked may nest hundreds of levels; every list, get
    and context call that shows one must still answer, so the deep part is replaced by a note.
    """
    try:
        value = json.loads(data)
    except RecursionError:
        return {"unreadable": TOO_DEEP_TO_SHOW}
    return _cut_below(value, 1)


def _cut_below(value: Any, depth: int) -> Any:
    if not isinstance(value, dict | list):
        return value
    if depth > MAX_METADATA_DEPTH:
        return TOO_DEEP_TO_SHOW
    if isinstance(value, dict):
        return {key: _cut_below(item, depth + 1) for key, item in value.items()}
    return [_cut_below(item, depth + 1) for item in value]


def _clean_strings(value: Any) -> tuple[Any, int]:
    if isinstance(value, str):
        result = redact(clean_text(value))
        return result.text, result.count
    if isinstance(value, dict):
        cleaned: dict[str, Any] = {}
        total = 0
        for key, item in value.items():
            new_key, key_count = _clean_strings(str(key))
            cleaned[new_key], item_count = _clean_strings(item)
            total += key_count + item_count
        return cleaned, total
    if isinstance(value, list):
        pairs = [_clean_strings(item) for item in value]
        return [item for item, _ in pairs], sum(count for _, count in pairs)
    return value, 0


def check_id(object_id: int, kind: str = "memory") -> None:
    """A stored row's id (a memory's unless `kind` says otherwise): positive, storable."""
    if isinstance(object_id, bool) or not isinstance(object_id, int) or object_id < 1:
        raise InvalidInput(f"{kind} id must be a positive whole number, got {object_id!r}")
    if object_id > MAX_ID:
        raise NotFound(f"no {kind} with id {object_id}")


def check_kind(kind: str) -> str:
    if kind not in MEMORY_KINDS:
        raise InvalidInput(f"kind must be one of {', '.join(MEMORY_KINDS)}, got {kind!r}")
    return kind


def clean_field(value: str, name: str) -> str:
    text = clean_text(value).strip()
    if len(text) > MAX_FIELD_CHARS:
        raise InvalidInput(f"{name} is longer than {MAX_FIELD_CHARS} characters")
    return text


def redacted_field(value: str, name: str) -> tuple[str, int]:
    """A name field cleaned with its secrets replaced, and how many; redacted before its length
    is checked, so a refusal never quotes a secret."""
    result = redact(clean_text(value).strip())
    return clean_field(result.text, name), result.count


def clean_tags(tags: Sequence[str]) -> tuple[list[str], int]:
    """Trimmed, redacted, de-duplicated tags in their given order, and the redaction count.

    A comma-separated string works too. Redaction comes before the length check, so a tag
    refused as too long is never quoted with a secret in it.
    """
    if isinstance(tags, str):
        tags = tags.split(",")
    cleaned: list[str] = []
    redacted = 0
    for tag in tags:
        if not isinstance(tag, str):
            raise InvalidInput("tags must be a list of text labels")
        result = redact(clean_text(tag))
        redacted += result.count
        text = result.text.strip()
        if not text or text in cleaned:
            continue
        if len(text) > MAX_TAG_CHARS:
            raise InvalidInput(f"tag {text[:20]!r}... is longer than {MAX_TAG_CHARS} characters")
        cleaned.append(text)
    if len(cleaned) > MAX_TAGS:
        raise InvalidInput(f"at most {MAX_TAGS} tags per memory, got {len(cleaned)}")
    return cleaned, redacted


def check_filter(where: MemoryFilter) -> MemoryFilter:
    """The filter with its text fields made storable; a bad kind or date range is refused."""
    if where.kind is not None:
        check_kind(where.kind)
    if where.since and where.before and where.since >= where.before:
        raise InvalidInput("since must be earlier than before")
    return replace(
        where,
        project=blank_to_none(where.project),
        tag=blank_to_none(where.tag),
        source=blank_to_none(where.source),
        text=blank_to_none(where.text),
        session_id=blank_to_none(where.session_id),
    )


def blank_to_none(value: str | None) -> str | None:
    """Cleaned, stripped text, or None for nothing but blanks."""
    if value is None:
        return None
    text = clean_text(value).strip()
    return text or None


def check_query(query: str) -> str:
    text = clean_text(query).strip() if isinstance(query, str) else ""
    if not text:
        raise InvalidInput("query is empty; say what to look for")
    if len(text) > MAX_QUERY_CHARS:
        raise InvalidInput(f"query is longer than {MAX_QUERY_CHARS:,} characters")
    return text


def check_limit(limit: int, maximum: int = MAX_SEARCH_LIMIT) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= maximum:
        raise InvalidInput(f"limit must be between 1 and {maximum}, got {limit!r}")
    return limit


def check_page(limit: int, offset: int, max_limit: int) -> None:
    """A page request: 1 ≤ limit ≤ max_limit and an offset Postgres can count to."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= max_limit:
        raise InvalidInput(f"limit must be between 1 and {max_limit}, got {limit!r}")
    if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset <= MAX_ID:
        raise InvalidInput(f"offset must be between 0 and {MAX_ID}, got {offset!r}")


def check_fusion_weights(keyword_weight: float, semantic_weight: float) -> None:
    """Hybrid search's list weights: each 0 to MAX_FUSION_WEIGHT, not both 0."""
    for name, weight in (("keyword_weight", keyword_weight), ("semantic_weight", semantic_weight)):
        if not 0.0 <= weight <= MAX_FUSION_WEIGHT:
            raise InvalidInput(f"{name} must be between 0 and {MAX_FUSION_WEIGHT}, got {weight}")
    if keyword_weight == 0 and semantic_weight == 0:
        raise InvalidInput("keyword_weight and semantic_weight cannot both be 0")


def check_unit(name: str, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
        raise InvalidInput(f"{name} must be between 0 and 1, got {value!r}")
