"""Read the times written in session files as timezone-aware UTC datetimes.

Transcripts and exports write ISO 8601 (`2026-04-14T09:12:03.118Z`, `…07:41:02.556127Z`) and
notes write dates (`2026-04-22`). A value that is missing or unreadable gives None instead of an
error: one bad field must not cost the rest of a session.
"""

from __future__ import annotations

from datetime import UTC, datetime


def parse_timestamp(value: object) -> datetime | None:
    """`value` as an aware UTC datetime; a time without a zone is read as UTC."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)
