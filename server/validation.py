"""Input checks shared by every write and read path: each raises InvalidInput with a message
that says what to send instead. Redaction happens here too, so no content reaches hashing,
embedding or storage without it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from server.errors import InvalidInput, NotFound
from server.models import MEMORY_KINDS, MemoryFilter
from server.redact import redact

MAX_TAGS = 50
MAX_TAG_CHARS = 100
MAX_FIELD_CHARS = 1_000
MAX_ID = 2**63 - 1
MAX_SEARCH_LIMIT = 100
MAX_QUERY_CHARS = 10_000


@dataclass(frozen=True, slots=True)
class PreparedContent:
    """Content after validation and redaction, with its hash."""

    content: str
    content_hash: str
    redacted: int


def content_hash(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def prepare_content(content: str, max_chars: int) -> PreparedContent:
    """Strip, check size, redact secrets and hash: the form every write stores."""
    if not isinstance(content, str):
        raise InvalidInput("content must be text")
    text = content.replace("\x00", "").strip()
    if not text:
        raise InvalidInput("content is empty; give the text to remember")
    if len(text) > max_chars:
        raise InvalidInput(
            f"content has {len(text):,} characters; the limit is {max_chars:,}: "
            "split it into several memories"
        )
    redaction = redact(text)
    return PreparedContent(redaction.text, content_hash(redaction.text), redaction.count)


def check_id(memory_id: int) -> None:
    if isinstance(memory_id, bool) or not isinstance(memory_id, int) or memory_id < 1:
        raise InvalidInput(f"memory id must be a positive whole number, got {memory_id!r}")
    if memory_id > MAX_ID:
        raise NotFound(f"no memory with id {memory_id}")


def check_kind(kind: str) -> str:
    if kind not in MEMORY_KINDS:
        raise InvalidInput(f"kind must be one of {', '.join(MEMORY_KINDS)}, got {kind!r}")
    return kind


def clean_field(value: str, name: str) -> str:
    text = value.replace("\x00", "").strip()
    if len(text) > MAX_FIELD_CHARS:
        raise InvalidInput(f"{name} is longer than {MAX_FIELD_CHARS} characters")
    return text


def clean_tags(tags: Sequence[str]) -> list[str]:
    """Trimmed, de-duplicated tags in their given order; a comma-separated string works too."""
    if isinstance(tags, str):
        tags = tags.split(",")
    cleaned: list[str] = []
    for tag in tags:
        if not isinstance(tag, str):
            raise InvalidInput("tags must be a list of text labels")
        text = tag.replace("\x00", "").strip()
        if not text or text in cleaned:
            continue
        if len(text) > MAX_TAG_CHARS:
            raise InvalidInput(f"tag {text[:20]!r}... is longer than {MAX_TAG_CHARS} characters")
        cleaned.append(text)
    if len(cleaned) > MAX_TAGS:
        raise InvalidInput(f"at most {MAX_TAGS} tags per memory, got {len(cleaned)}")
    return cleaned


def check_filter(where: MemoryFilter) -> MemoryFilter:
    if where.kind is not None:
        check_kind(where.kind)
    if where.since and where.before and where.since >= where.before:
        raise InvalidInput("since must be earlier than before")
    return where


def blank_to_none(value: str | None) -> str | None:
    return value.strip() if value is not None and value.strip() else None


def check_query(query: str) -> str:
    text = query.replace("\x00", "").strip() if isinstance(query, str) else ""
    if not text:
        raise InvalidInput("query is empty; say what to look for")
    if len(text) > MAX_QUERY_CHARS:
        raise InvalidInput(f"query is longer than {MAX_QUERY_CHARS:,} characters")
    return text


def check_limit(limit: int, maximum: int = MAX_SEARCH_LIMIT) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= maximum:
        raise InvalidInput(f"limit must be between 1 and {maximum}, got {limit!r}")
    return limit


def check_unit(name: str, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
        raise InvalidInput(f"{name} must be between 0 and 1, got {value!r}")
