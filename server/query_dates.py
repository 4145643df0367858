"""Find the period a search query names ("on 13 October 2023", "in March 2024", "2024-03-05").

A question that names a date is usually about what was said or done then, so hybrid search adds
the best matches from that period to its fusion (see server/search.py). Only absolute dates
with a year are read: "last week" or "in March" alone depend on when the question is asked,
and guessing there would push good matches out for the wrong period.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_MONTH = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"((?:19|20)\d\d)"
_DAY_MONTH_YEAR = re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE)
_MONTH_DAY_YEAR = re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.IGNORECASE)
_ISO_DATE = re.compile(r"\b((?:19|20)\d\d)-(\d\d)-(\d\d)\b")
_MONTH_YEAR = re.compile(rf"\b{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE)

# A named day also covers the day before and after: notes are often written a day late, and
# "the weekend before 10 April" is said on the 10th.
DAY_SLACK = timedelta(days=1)
# A named month also covers the first days of the next, when its last events get written up.
MONTH_SLACK = timedelta(days=3)


@dataclass(frozen=True, slots=True)
class Period:
    """[start, end) in UTC."""

    start: datetime
    end: datetime


def mentioned_period(query: str) -> Period | None:
    """The period the query names, the first mention winning; None when it names none."""
    for pattern, order in (
        (_DAY_MONTH_YEAR, (1, 2, 3)),
        (_MONTH_DAY_YEAR, (2, 1, 3)),
    ):
        match = pattern.search(query)
        if match:
            day, month, year = (match.group(i) for i in order)
            return _day(int(year), _MONTHS[month.lower()], int(day))
    iso = _ISO_DATE.search(query)
    if iso:
        return _day(int(iso.group(1)), int(iso.group(2)), int(iso.group(3)))
    month_year = _MONTH_YEAR.search(query)
    if month_year:
        return _month(int(month_year.group(2)), _MONTHS[month_year.group(1).lower()])
    return None


def _day(year: int, month: int, day: int) -> Period | None:
    try:
        start = datetime(year, month, day, tzinfo=UTC)
    except ValueError:  # 31 February: not a date, so no period
        return None
    return Period(start - DAY_SLACK, start + timedelta(days=1) + DAY_SLACK)


def _month(year: int, month: int) -> Period:
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
    return Period(start, end + MONTH_SLACK)
