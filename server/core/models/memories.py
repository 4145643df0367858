"""Memories: the stored row, drafts, filters, pages, write outcomes, versions and neighbours."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, get_args

from server.core.models.output import preview

MemoryKind = Literal[
    "raw", "distilled", "note", "preference", "pattern", "behavior", "manual", "trajectory"
]


MEMORY_KINDS: tuple[str, ...] = get_args(MemoryKind)


SaveStatus = Literal["saved", "noop", "duplicate", "restored"]


# "recorded": the code's current value was saved as a new memory superseding this one, which
# `memory` then is (server/recall/memory_check.py).
UpdateStatus = Literal["updated", "unchanged", "noop", "duplicate", "recorded"]


CheckAction = Literal["ADD", "UPDATE", "NOOP"]


ExportFormat = Literal["json", "jsonl", "markdown"]


EXPORT_FORMATS: tuple[str, ...] = get_args(ExportFormat)


@dataclass(frozen=True, slots=True)
class Memory:
    """One stored memory, as a row of `memories` without its vector."""

    id: int
    content: str
    content_hash: str
    kind: str
    tags: list[str]
    source: str
    project: str
    project_path: str
    session_id: str | None
    role: str | None
    created_at: datetime
    updated_at: datetime
    deleted_at: datetime | None
    metadata: dict[str, Any]
    supersedes: int | None
    archived_at: datetime | None
    supersede_reason: str = ""
    superseded_by: int | None = None  # the newest live memory that supersedes this one
    owner: str | None = None  # the user who saved it; None when the server had no users
    visibility: str = "shared"  # private to its owner, or shared with its project's team


@dataclass(frozen=True, slots=True)
class NewMemory:
    """What the service hands the store to insert: content already redacted and hashed."""

    content: str
    content_hash: str
    kind: str = "manual"
    tags: list[str] = field(default_factory=list)
    source: str = ""
    project: str = ""
    project_path: str = ""
    session_id: str | None = None
    role: str | None = None
    created_at: datetime | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    supersedes: int | None = None
    visibility: str | None = (
        None  # None: the server's CLAUDE_MEMORY_DEFAULT_VISIBILITY for a user's save
    )


@dataclass(frozen=True, slots=True)
class Neighbour:
    """The nearest stored memory to a vector, with its cosine similarity."""

    id: int
    similarity: float
    content: str
    deleted: bool


@dataclass(frozen=True, slots=True)
class SimilarMemory:
    """The memory a write collided with, as reported to the caller."""

    id: int
    similarity: float
    preview: str


def similar_memory(memory: Memory, similarity: float) -> SimilarMemory:
    """How a write reports the stored memory it collided with."""
    return SimilarMemory(
        id=memory.id, similarity=round(similarity, 4), preview=preview(memory.content)
    )


@dataclass(frozen=True, slots=True)
class SaveOutcome:
    """What `save` did: saved a new row, or pointed at the row that made it unnecessary."""

    status: SaveStatus
    id: int
    memory: Memory
    similar: SimilarMemory | None
    redacted: int


@dataclass(frozen=True, slots=True)
class CheckResult:
    """What `save` would do with this content, without writing anything."""

    action: CheckAction
    similarity: float | None
    target_id: int | None
    target_preview: str | None
    reason: str


@dataclass(frozen=True, slots=True)
class UpdateOutcome:
    """What `update` did; on noop/duplicate, `memory` is unchanged and `similar` says why."""

    status: UpdateStatus
    memory: Memory
    similar: SimilarMemory | None
    redacted: int


@dataclass(frozen=True, slots=True)
class MemoryFilter:
    """Optional filters shared by list, search, bulk delete and export; None means "any".

    `text` keeps memories containing all of its words (web-search syntax, English stemming).
    Raw turns archived by distillation are left out unless `include_archived`; `only_deleted`
    keeps soft-deleted memories only (the UI's deleted view). `with_general` lets a project
    filter keep the memories of no project too (notes without front matter, claude.ai chats):
    searches and prompt recall in a project include that general knowledge unless asked for
    the project alone; lists, exports and deletes keep to the project. `general_only` keeps
    the memories of no project alone (what a folder no project is known by is shown)."""

    project: str | None = None
    with_general: bool = False
    general_only: bool = False
    tag: str | None = None
    kind: str | None = None
    source: str | None = None
    since: datetime | None = None
    before: datetime | None = None
    include_deleted: bool = False
    text: str | None = None
    include_archived: bool = False
    only_deleted: bool = False
    session_id: str | None = None
    owned_only: bool = False  # only the asking user's own memories (bulk delete)
    # Only memories that name code (stored anchors, migration 021), and those whose anchors
    # are not stored yet (the caller finds theirs in the text): the Drifted page.
    names_code: bool = False


@dataclass(frozen=True, slots=True)
class MemoryPage:
    """One page of a filtered list, with the total across all pages."""

    total: int
    limit: int
    offset: int
    memories: list[Memory]


@dataclass(frozen=True, slots=True)
class TagCount:
    tag: str
    count: int


@dataclass(frozen=True, slots=True)
class MemoryPreview:
    id: int
    preview: str


@dataclass(frozen=True, slots=True)
class BulkDeleteResult:
    """`matched` live memories fit the filter; `deleted` is how many rows really changed."""

    dry_run: bool
    matched: int
    deleted: int
    preview: list[MemoryPreview]


@dataclass(frozen=True, slots=True)
class RelatedMemory:
    id: int
    similarity: float
    kind: str
    project: str
    created_at: datetime
    preview: str


@dataclass(frozen=True, slots=True)
class MemoryVersion:
    """One version of a changed fact, in a memory's chain of versions (oldest first).

    `reason` says why this version replaced the one before it ("number 20 -> 22", "set by
    hand"); `current` marks the live version nothing live replaces.
    """

    id: int
    created_at: datetime
    kind: str
    preview: str
    reason: str
    deleted: bool
    current: bool


@dataclass(frozen=True, slots=True)
class DuplicatePair:
    first_id: int
    second_id: int
    similarity: float
    first_preview: str
    second_preview: str


@dataclass(frozen=True, slots=True)
class ProjectSummary:
    project: str
    project_path: str
    count: int
    last_at: datetime


@dataclass(frozen=True, slots=True)
class FolderProject:
    """A folder taken to be a project's when nothing else knew its folder (#68): how it was
    matched (its name, its git remote, or the user's word) and the line that says so."""

    folder: str
    project: str
    matched_by: str
    note: str


@dataclass(frozen=True, slots=True)
class MemoryDraft:
    """One memory a batch caller wants stored, before validation and redaction."""

    content: str
    tags: list[str] = field(default_factory=list)
    source: str = ""
    project: str = ""
    project_path: str = ""
    kind: str = "manual"
    session_id: str | None = None
    role: str | None = None
    created_at: datetime | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    visibility: str | None = (
        None  # None: the server's CLAUDE_MEMORY_DEFAULT_VISIBILITY for a user's save
    )
    # Metadata only the server's own code sets (server/core/validation.py
    # SERVER_METADATA_KEYS): kept over `metadata`, where those keys are dropped.
    server_metadata: dict[str, Any] = field(default_factory=dict)


BulkStatus = Literal["saved", "noop", "duplicate", "restored", "invalid"]


@dataclass(frozen=True, slots=True)
class BulkItemOutcome:
    """What a batch save did with one draft; `index` is its position in the request.

    `id` is the stored memory (new or the one that made the draft unnecessary); None only for
    `invalid`, whose `error` says what was wrong.
    """

    index: int
    status: BulkStatus
    id: int | None
    similar: SimilarMemory | None
    redacted: int
    error: str | None


@dataclass(frozen=True, slots=True)
class BulkSaveResult:
    """Per-draft outcomes of one batch, plus counts by status."""

    saved: int
    skipped: int
    invalid: int
    items: list[BulkItemOutcome]


@dataclass(frozen=True, slots=True)
class AnchorView:
    """One thing a memory names that the code can confirm (server/domain/anchors.py)."""

    kind: str  # path, symbol, setting, version
    name: str
    value: str | None  # the setting's value or the version the memory states


@dataclass(frozen=True, slots=True)
class CodeCheck:
    """One memory checked against a working tree (server/recall/memory_check.py).

    `verdict`: fresh, drifted, orphaned or unchecked; `note` says what changed (or why nothing
    was checked); `can_record`: the code states a current value for everything that changed,
    so `update_memory(current_from=cwd)` can record it.
    """

    memory_id: int
    cwd: str | None
    verdict: str
    note: str | None
    anchors: list[AnchorView]
    can_record: bool


@dataclass(frozen=True, slots=True)
class DriftedMemory:
    """A memory of a project the code no longer agrees with."""

    memory: Memory
    cwd: str  # the folder it was checked against (its project path, or the one asked for)
    verdict: str  # drifted or orphaned
    note: str
    can_record: bool


@dataclass(frozen=True, slots=True)
class DriftedList:
    """A project's memories checked against its folder: those the code no longer agrees with.

    `folders`: the folders checked (each memory against its own project path unless one was
    asked for; a folder not on this machine is skipped); `checked`: memories that name
    something the code can confirm and were checked; `unchecked`: such memories whose folder
    could not be read here; `complete`: every memory of the project was read (false past the
    newest MAX_DRIFT_CHECKED, server/recall/memory_check.py).
    """

    project: str
    folders: list[str]
    checked: int
    unchecked: int
    complete: bool
    memories: list[DriftedMemory]
