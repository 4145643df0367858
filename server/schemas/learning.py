"""Shapes of the learning operations: preferences, duplicates, startup context, distill state."""

from __future__ import annotations

from pydantic import Field

from server.core.validation import MAX_SCAN_LIMIT
from server.schemas.fields import ProjectFilter, SearchLimit, Shape, Unit


class PreferencesQuery(Shape):
    """GET /api/preferences."""

    project: ProjectFilter = None


class FindDuplicates(Shape):
    """find_duplicates: near-duplicate pairs among the newest memories."""

    threshold: Unit | None = Field(
        None,
        description="Similarity cut-off, 0-1; by default the one measured for the embedding"
        " model (0.8 for the bundled one).",
    )
    limit: SearchLimit = Field(20, description="Maximum pairs, 1-100.")
    project: ProjectFilter = None
    scan_limit: int = Field(
        500,
        ge=1,
        le=MAX_SCAN_LIMIT,
        description=f"How many of the newest memories to check, 1-{MAX_SCAN_LIMIT}.",
    )


class RecentContextArguments(Shape):
    """recent_context: the newest distilled memories of a project."""

    project: ProjectFilter = None
    limit: SearchLimit = Field(10, description="How many, 1-100.")


class ResetFailures(Shape):
    """POST /api/sessions/reset-failures: all failed sessions, or one by id or prefix."""

    session: str | None = None


class ResetCount(Shape):
    reset: int = Field(ge=0)
