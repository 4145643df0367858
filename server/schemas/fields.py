"""Field types several shapes share: their limits, defaults' meaning and descriptions.

A field type is `Annotated[python type, constraints]`, so the same declaration validates a
REST body, validates an MCP tool argument and renders into both JSON Schemas.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema
from pydantic_core import PydanticCustomError

from server.core.errors import InvalidInput
from server.core.models.memories import MEMORY_KINDS
from server.core.timeparse import parse_optional_time
from server.core.validation import MAX_FUSION_WEIGHT, MAX_ID, MAX_PAGE, MAX_SEARCH_LIMIT


class Shape(BaseModel):
    """Base of every request shape: unknown fields are ignored, values are not coerced.

    Callers of the established API send extra fields now and then; ignoring them keeps those
    calls working. Query strings are parsed with coercion (everything arrives as text).
    """

    model_config = ConfigDict(extra="ignore", frozen=True)


def _blank_to_none(value: Any) -> Any:
    """A text filter of only blanks means no filter; other types go on to the type check."""
    if isinstance(value, str):
        return value.strip() or None
    return value


def _time(value: Any) -> Any:
    """An ISO 8601 time or an age like 7d, read as a UTC datetime; blank means none."""
    if not isinstance(value, str):
        return value
    try:
        return parse_optional_time(value, "")
    except InvalidInput as problem:
        raise PydanticCustomError("not_a_date", problem.message.strip()) from None


Filter = Annotated[str | None, BeforeValidator(_blank_to_none)]
"""Text that narrows a listing (a project, tag, source); blank is the same as absent."""

ProjectFilter = Annotated[
    str | None,
    BeforeValidator(_blank_to_none),
    Field(description="Only this project (display name or full path; case-insensitive)."),
]
ProjectOnly = Annotated[
    bool,
    Field(
        description="With a project: only that project's memories. By default a search in a"
        " project also finds general ones (of no project: notes without front matter,"
        " claude.ai chats), after the project's own when they score the same."
    ),
]
TagFilter = Annotated[
    str | None, BeforeValidator(_blank_to_none), Field(description="Only memories with this tag.")
]
SourceFilter = Annotated[
    str | None,
    BeforeValidator(_blank_to_none),
    Field(
        description="Only memories from this source: an agent (claude-code, codex, gemini,"
        " opencode; with what was distilled from its sessions) or a way in (api, distill, ...)."
    ),
]


TIME_TEXT = "ISO 8601, or an age like 7d / 12h / 2w"
Time = Annotated[
    datetime | None,
    BeforeValidator(_time),
    WithJsonSchema({"type": "string", "description": f"{TIME_TEXT}."}),
]


def _folder(value: object) -> object:
    value = _blank_to_none(value)
    if isinstance(value, str) and len(value) > MAX_FOLDER_CHARS:
        raise ValueError(f"at most {MAX_FOLDER_CHARS} characters")
    return value


MAX_FOLDER_CHARS = 4096
WorkingTree = Annotated[
    str | None,
    BeforeValidator(_folder),
    Field(
        description="The working folder of the code these memories are about (the session's"
        " cwd), on the server's machine: each hit then says whether the code still agrees with"
        " it (verdict: fresh, drifted, orphaned or unchecked, and what changed). Checked on a"
        " single-user server only; a team's server answers unchecked.",
    ),
]
StartupTree = Annotated[
    str | None,
    BeforeValidator(_folder),
    Field(
        description="The session's working folder, on the server's machine: memories the code"
        " there no longer agrees with are marked drifted (with what changed) and shown last,"
        " and those whose files are gone are left out. Checked on a single-user server only.",
    ),
]
CurrentFrom = Annotated[
    str | None,
    BeforeValidator(_folder),
    Field(
        description="Record the current value: the working folder of the code this memory is"
        " about, on the server's machine. For a drifted memory, what the code there says now"
        " (a setting's value, a version, a renamed file's path) is saved as a new memory that"
        " supersedes this one (status `recorded`; `memory` is the new one). Send it alone."
        " Single-user server only.",
    ),
]
Since = Annotated[
    datetime | None,
    BeforeValidator(_time),
    WithJsonSchema({"type": "string", "description": f"Only after this time ({TIME_TEXT})."}),
]
Before = Annotated[
    datetime | None,
    BeforeValidator(_time),
    WithJsonSchema({"type": "string", "description": f"Only before this time ({TIME_TEXT})."}),
]
KindName = Annotated[
    str,
    Field(json_schema_extra={"enum": list(MEMORY_KINDS)}, description="The kind of memory."),
]
"""A memory kind; the service checks it, so a bulk item with a wrong kind is one invalid item."""

Query = Annotated[
    str,
    Field(description="What to look for, in plain language.", json_schema_extra={"minLength": 1}),
]
SearchLimit = Annotated[
    int, Field(ge=1, le=MAX_SEARCH_LIMIT, description=f"Maximum hits, 1-{MAX_SEARCH_LIMIT}.")
]
PageLimit = Annotated[int, Field(ge=1, le=MAX_PAGE, description=f"Page size, 1-{MAX_PAGE}.")]
Offset = Annotated[int, Field(ge=0, le=MAX_ID, description="How many to skip.")]
Unit = Annotated[float, Field(ge=0, le=1)]
FusionWeight = Annotated[
    float,
    Field(
        ge=0,
        le=MAX_FUSION_WEIGHT,
        description=f"Weight of this list in the fusion (0-{MAX_FUSION_WEIGHT}; not both 0).",
    ),
]
MemoryId = Annotated[int, Field(ge=1, description="The memory's id.")]
