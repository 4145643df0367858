"""Lesson rows as the store returns them, for the unit tests of lesson matching."""

from __future__ import annotations

from datetime import UTC, datetime

from server.core.models.lessons import Lesson

AT = datetime(2026, 8, 22, tzinfo=UTC)


def lesson(tool: str, pattern: str = "staging", lesson_id: int = 1) -> Lesson:
    return Lesson(
        id=lesson_id,
        pattern=pattern,
        message="Use the local stack.",
        tool=tool,
        project="",
        strictness="warn",
        active=True,
        origin="user",
        created_at=AT,
        updated_at=AT,
        proposed=False,
    )
