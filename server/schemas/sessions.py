"""Shapes of the views over imported sessions and time: the session list and the timeline."""

from __future__ import annotations

from pydantic import Field

from server.schemas.fields import (
    Before,
    Filter,
    KindName,
    Offset,
    PageLimit,
    ProjectFilter,
    Shape,
    Since,
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
    since: Since = None
    before: Before = None
    limit: int = Field(2_000, ge=1, le=MAX_TIMELINE_POINTS)
