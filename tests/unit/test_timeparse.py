"""parse_time: ISO 8601 and relative ages, always UTC-aware; bad input names the parameter."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from server.core.errors import InvalidInput
from server.core.timeparse import parse_optional_time, parse_time

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-01-31", datetime(2026, 1, 31, tzinfo=UTC)),
        ("2026-01-31T09:30:00Z", datetime(2026, 1, 31, 9, 30, tzinfo=UTC)),
        ("2026-01-31T10:30:00+01:00", datetime(2026, 1, 31, 9, 30, tzinfo=UTC)),
        ("2026-01-31 09:30", datetime(2026, 1, 31, 9, 30, tzinfo=UTC)),
        ("7d", NOW - timedelta(days=7)),
        ("12h", NOW - timedelta(hours=12)),
        ("2w", NOW - timedelta(weeks=2)),
        (" 30m ", NOW - timedelta(minutes=30)),
    ],
)
def test_parse_time_reads_iso_and_ages(text: str, expected: datetime) -> None:
    assert parse_time(text, now=NOW) == expected


@pytest.mark.parametrize("text", ["yesterday", "2026-13-01", "31/01/2026", "7y", ""])
def test_parse_time_rejects_unreadable_dates_naming_the_parameter(text: str) -> None:
    with pytest.raises(InvalidInput, match=r"since .* is not a date"):
        parse_time(text, "since")


def test_optional_time_treats_blank_as_no_bound() -> None:
    assert parse_optional_time(None, "before") is None
    assert parse_optional_time("  ", "before") is None
