"""Parse the dates callers send: ISO 8601 dates and times, or a relative age like `7d`.

Every time leaves here timezone-aware in UTC: a date or time without a zone is read as UTC,
so filters mean the same thing whichever machine runs them.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from server.core.errors import InvalidInput

_RELATIVE = re.compile(r"^\s*(\d{1,6})\s*([mhdw])\s*$", re.IGNORECASE)
_UNIT = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_time(value: str, name: str = "date", now: datetime | None = None) -> datetime:
    """Read `value` as an ISO 8601 date/time or an age (`30m`, `12h`, `7d`, `2w` ago).

    Raises InvalidInput naming the parameter when the value is neither.
    """
    text = value.strip()
    relative = _RELATIVE.match(text)
    if relative:
        amount, unit = int(relative.group(1)), relative.group(2).lower()
        return (now or datetime.now(UTC)) - timedelta(**{_UNIT[unit]: amount})
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise InvalidInput(
            f"{name} {value[:60]!r} is not a date: use ISO 8601 (2026-01-31 or "
            "2026-01-31T09:30:00Z) or an age like 7d, 12h, 2w"
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def parse_optional_time(value: str | None, name: str) -> datetime | None:
    """parse_time for optional parameters: None and blank strings mean "no bound"."""
    if value is None or not value.strip():
        return None
    return parse_time(value, name)
