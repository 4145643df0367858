"""Shapes of the views over imported sessions and time: the session list, the timeline, the
journal and the receipts of what the hooks injected."""

from __future__ import annotations

from pydantic import Field

from server.core.models.journal import JournalFilter
from server.core.models.memories import MemoryFilter
from server.core.models.receipts import INJECTION_HOOKS, ReceiptFilter
from server.schemas.fields import (
    Before,
    Filter,
    KindName,
    Offset,
    PageLimit,
    ProjectFilter,
    Shape,
    Since,
    SourceFilter,
)
from server.service.views import MAX_TIMELINE_POINTS


class SessionsQuery(Shape):
    """GET /api/sessions: imported sessions, newest first."""

    project: ProjectFilter = None
    source: Filter = None
    limit: PageLimit = 50
    offset: Offset = 0


class TimelineQuery(Shape):
    """GET /api/timeline: the newest memories as points, and per-day counts."""

    project: ProjectFilter = None
    kind: KindName | None = None
    source: SourceFilter = None
    since: Since = None
    before: Before = None
    limit: int = Field(2_000, ge=1, le=MAX_TIMELINE_POINTS)

    def memory_filter(self) -> MemoryFilter:
        """The service's filter for this query (the limit is passed on its own): every other
        field is one of MemoryFilter's, by the same name."""
        return MemoryFilter(**self.model_dump(exclude={"limit"}))


class JournalQuery(Shape):
    """GET /api/journal and the journal tool: prompts and the tool calls that followed them."""

    project: ProjectFilter = None
    session_id: Filter = Field(None, description="One session, by id or the start of its id.")
    tool: Filter = Field(None, description="Only calls of this tool (Bash, Edit, ...).")
    failed: bool = Field(False, description="Only calls that failed or were refused.")
    since: Since = None
    before: Before = None
    query: Filter = Field(None, description="Words in the prompt or in the call's input.")
    limit: PageLimit = Field(50, description="At most this many calls, and as many prompts.")

    def journal_filter(self) -> JournalFilter:
        """The service's filter for this query (the limit is passed on its own)."""
        return JournalFilter(
            project=self.project,
            session_id=self.session_id,
            tool=self.tool,
            failed_only=self.failed,
            since=self.since,
            before=self.before,
            text=self.query,
        )


class ReceiptsQuery(Shape):
    """GET /api/receipts: what the hooks injected, newest first, with totals."""

    project: ProjectFilter = None
    session_id: Filter = Field(None, description="One session, by its full id.")
    hook: Filter = Field(
        None,
        description="Only this hook's injections.",
        json_schema_extra={"enum": list(INJECTION_HOOKS)},
    )
    since: Since = None
    before: Before = None
    limit: PageLimit = Field(50, description="At most this many receipts (the totals count all).")

    def receipt_filter(self) -> ReceiptFilter:
        """The service's filter for this query (the limit is passed on its own)."""
        return ReceiptFilter(
            session_id=self.session_id,
            project=self.project,
            hook=self.hook,
            since=self.since,
            before=self.before,
        )


class ContextQuery(Shape):
    """GET /api/context: what the hooks injected per day and project, and what was used."""

    project: ProjectFilter = None
    days: int = Field(30, ge=1, le=3_650, description="Over the last this many days.")
    top: int = Field(
        10, ge=1, le=100, description="How many memories each list (most injected, ...) shows."
    )
