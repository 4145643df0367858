"""A SearchHit for unit tests of what is done with hits (versions, recall text, cut-offs):
a note with every score unset unless a test names it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from server.core.models.search import SearchHit


def note_hit(
    memory_id: int,
    content: str,
    *,
    project: str = "acme",
    created_at: datetime | None = None,
    score: float = 1.0,
    **fields: Any,
) -> SearchHit:
    """A note hit; `fields` sets any other SearchHit field (similarity, supersedes, ...)."""
    return SearchHit(
        id=memory_id,
        content=content,
        kind="note",
        tags=[],
        source="",
        project=project,
        project_path="",
        session_id=None,
        created_at=created_at or datetime(2026, 3, 1, tzinfo=UTC),
        similarity=fields.pop("similarity", None),
        keyword_score=None,
        fused_score=None,
        score=score,
        **fields,
    )
