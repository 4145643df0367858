"""Shapes of the memory operations: save, bulk save, update, list, delete, export, lock.

MCP tools and REST routes that do the same thing share a shape: `SaveMemory` is save_memory's
arguments and the start of POST /api/memories' body, `MemoryPage` is list_memories' and the
paging of GET /api/memories, and so on. REST-only fields extend the shared shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.config import JsonDict

from server.core.models.memories import (
    ExportFormat,
    Memory,
    MemoryDraft,
    MemoryFilter,
    SimilarMemory,
)
from server.domain.trajectories import Trajectory
from server.schemas.fields import (
    Before,
    CurrentFrom,
    Filter,
    KindName,
    MemoryId,
    Offset,
    PageLimit,
    ProjectFilter,
    Shape,
    Since,
    TagFilter,
    Time,
)
from server.service.bulk_writes import MAX_BULK_ITEMS

Tags = list[str]
TEXT: JsonDict = {"minLength": 1}  # empty text is refused by the service, with a message saying so
SOURCE_DESCRIPTION = (
    "Where it came from; by default the way in: api over REST; over MCP the calling client's"
    " agent (claude-code, codex, gemini, opencode, copilot), else mcp:<its client name>."
)


VISIBILITY = (
    "On a team's server: private (only you) or shared (your team, in this project);"
    " default CLAUDE_MEMORY_DEFAULT_VISIBILITY. A server without users ignores it."
)


class SaveMemory(Shape):
    """What save_memory takes, and the start of every new memory's fields."""

    content: str = Field(
        description="Self-contained text; secrets are redacted first.", json_schema_extra=TEXT
    )
    tags: Tags | None = Field(None, description='Labels such as "decision" or "bug".')
    source: str | None = Field(None, description=SOURCE_DESCRIPTION)
    project: str = Field("", description="Project display name.")
    force: bool = Field(False, description="Save even if a near duplicate exists.")
    visibility: Literal["private", "shared"] | None = Field(None, description=VISIBILITY)


class LearnTrajectory(Shape):
    """The learn tool and POST /api/trajectories: how a task got done, for the next time."""

    task: str = Field(
        description="What was being done, as someone would ask for it again.",
        json_schema_extra=TEXT,
    )
    worked: str = Field(description="What solved it, concretely.", json_schema_extra=TEXT)
    avoid: str = Field("", description="What failed or wasted time, not to try again.")
    tags: Tags = Field(default_factory=list, description='Labels such as "ci" or "postgres".')
    project: str = Field("", description="Project display name.")
    source: str | None = Field(None, description=SOURCE_DESCRIPTION)

    def trajectory(self) -> Trajectory:
        return Trajectory(self.task, self.worked, self.avoid, self.tags, self.project)


class NewMemoryFields(Shape):
    """Fields a REST client may set on a new memory beyond save_memory's."""

    kind: KindName = "manual"
    created_at: Time = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class CreateMemory(SaveMemory, NewMemoryFields):
    """POST /api/memories."""


class NewMemory(NewMemoryFields):
    """One element of a bulk save: checked on its own, so one bad element fails alone.

    Content is required, but an element without it is reported as that element's error
    rather than failing the whole request, so the field has a default here.
    """

    model_config = ConfigDict(json_schema_extra={"required": ["content"]})

    content: str = Field(
        "", description="The text to remember (secrets are redacted).", json_schema_extra=TEXT
    )
    tags: Tags = Field(default_factory=list)
    project: str = ""
    source: str | None = Field(None, description=SOURCE_DESCRIPTION)
    visibility: Literal["private", "shared"] | None = Field(None, description=VISIBILITY)

    def draft(self, *, default_source: str) -> MemoryDraft:
        """The service's draft; `source` defaults to the way in."""
        return MemoryDraft(
            content=self.content,
            tags=self.tags,
            project=self.project,
            source=self.source or default_source,
            kind=self.kind,
            created_at=self.created_at,
            metadata=self.metadata,
            visibility=self.visibility,
        )


class BulkCreate(Shape):
    """POST /api/memories/bulk: up to 1,000 memories in one transaction."""

    memories: list[NewMemory] = Field(max_length=MAX_BULK_ITEMS)
    force: bool = False


class ChangeMemory(Shape):
    """What update_memory changes; an absent field is kept."""

    content: str | None = Field(None, description="New full text (omit to keep).")
    tags: Tags | None = Field(None, description="New tags, replacing the old (omit to keep).")
    supersedes: int | None = Field(
        None,
        ge=0,
        description="Id of the older memory whose fact this one replaces (it stays searchable,"
        " ranked below this one); 0 removes the link, and so does null over REST; omit to keep.",
    )
    force: bool = Field(False, description="Accept content that nearly duplicates another memory.")
    current_from: CurrentFrom = None

    @model_validator(mode="after")
    def _current_from_alone(self) -> ChangeMemory:
        """Recording the code's value makes a new memory: other changes would be lost."""
        others = self.model_fields_set - {"current_from", "force", "memory_id"}
        if self.current_from is not None and others:
            raise ValueError(
                "current_from records the code's current value as a new memory; send it"
                f" without other changes (got {', '.join(sorted(others))})"
            )
        return self


class UpdateMemory(ChangeMemory):
    """PATCH /api/memories/{memory_id}."""

    project: str | None = None
    kind: KindName | None = None


class UpdateMemoryArguments(ChangeMemory):
    """update_memory: the memory's id and the change."""

    memory_id: MemoryId


class Scope(Shape):
    """Which memories: the filters list_memories and export_memories share with REST."""

    tag: TagFilter = None
    project: ProjectFilter = None
    since: Since = None
    before: Before = None

    def memory_filter(self) -> MemoryFilter:
        """The service's filter for this scope (the service resolves its project)."""
        return MemoryFilter(**self.model_dump(include=set(Scope.model_fields)))


class MemoryListPage(Scope):
    """list_memories: a page of memories newest first, with the total for paging."""

    limit: PageLimit = 50
    offset: Offset = 0


class ListFilters(Scope):
    """The filters of GET /api/memories and GET /api/export beyond the shared scope."""

    kind: KindName | None = None
    source: Filter = None
    q: Filter = Field(None, description="Keep memories containing all of these words.")
    include_deleted: bool = False
    include_archived: bool = Field(False, description="Raw turns archived by distillation too.")
    only_deleted: bool = Field(False, description="Soft-deleted memories only.")
    session_id: Filter = Field(None, description="Memories of one session.")

    def memory_filter(self) -> MemoryFilter:
        """The service's filter for this query (paging is passed on its own)."""
        return MemoryFilter(
            project=self.project,
            tag=self.tag,
            kind=self.kind,
            source=self.source,
            since=self.since,
            before=self.before,
            include_deleted=self.include_deleted,
            text=self.q,
            include_archived=self.include_archived,
            only_deleted=self.only_deleted,
            session_id=self.session_id,
        )


class ListMemories(MemoryListPage, ListFilters):
    """GET /api/memories: the page and every filter the UI uses."""


class ExportMemories(Scope):
    """export_memories: up to 200 inline, more to a file."""

    output_format: ExportFormat = Field("json", description='"json", "jsonl" or "markdown".')


class ExportQuery(ListFilters):
    """GET /api/export: the list filters (archived turns included by default) and a format."""

    include_archived: bool = Field(True, description="Raw turns archived by distillation too.")
    format: ExportFormat = ExportMemories.model_fields["output_format"].default


class BulkDeleteQuery(Shape):
    """DELETE /api/memories and bulk_delete: every memory matching all given filters."""

    tag: TagFilter = None
    project: ProjectFilter = None
    source: Filter = Field(None, description="Memories from this source.")
    dry_run: bool = Field(True, description="Only count and preview (default true).")


class BulkDeleteEverything(BulkDeleteQuery):
    """DELETE /api/memories may also name every memory with all=true."""

    all: bool = False


class DeleteQuery(Shape):
    """DELETE /api/memories/{memory_id}: purge=true erases a soft-deleted memory."""

    purge: bool = False


class RelatedQuery(Shape):
    """GET /api/memories/{memory_id}/related."""

    limit: int = Field(3, ge=1, le=100)


class CodeCheckQuery(Shape):
    """GET /api/memories/{memory_id}/check."""

    cwd: str | None = Field(
        None,
        max_length=4096,
        description="The working folder to check against (default: the memory's project path).",
    )


class DriftedQuery(Shape):
    """GET /api/drifted."""

    project: str = Field(min_length=1, max_length=4096, description="The project (name or folder).")
    cwd: str | None = Field(
        None,
        max_length=4096,
        description="The working folder to check against (default: the project's path).",
    )


class LockRequest(Shape):
    """POST /api/memories/{memory_id}/lock."""

    locked: bool = True


@dataclass(frozen=True)
class SavedMemory(Memory):
    """POST /api/memories' answer when it saved: the memory and how many secrets it redacted."""

    redacted: int = 0


class NotSaved(BaseModel):
    """POST /api/memories' answer when the write guard kept an existing memory instead."""

    status: Literal["noop", "duplicate", "restored"]
    id: int
    similar: SimilarMemory | None
    redacted: int = Field(ge=0)


class Purged(BaseModel):
    purged_id: int
