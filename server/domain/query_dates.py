"""Find the period a search query names ("on 13 October 2023", "in March 2024", "2024-03-05").

A question that names a date is usually about what was said or done then, so hybrid search adds
the best matches from that period to its fusion (see server/service/search.py): a soft boost, which
never filters anything out. Absolute dates with a year are read on their own. Relative and
fuzzy ones ("last week", "two days ago", "back in May", "early June", "the end of March", "in
Q2") are read against an anchor the caller gives: the time of the newest memory of the project
searched (or now), since a question about a project's past is asked from where its memories
stop, not from today. Without an anchor they name nothing. "early", "mid", "late", "start of"
and "end of" narrow a month named without a year to a third of it; with a year ("the beginning
of January 2023") the whole month counts, as before: LoCoMo asks about "the beginning of
January" for an event its conversation dates the 23rd (held-out temporal recall@10 0.641 with
the whole month, 0.635 with thirds).
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
    """[start, end) in UTC; `as_of` and `label` when the period is read from an event."""

    start: datetime
    end: datetime
    as_of: datetime | None = None  # the moment whose current versions the question asks for
    label: str | None = None  # what the period is, said in a hit's time_note


@dataclass(frozen=True, slots=True)
class EventReference:
    """ "before the Kestrel support ticket": the direction and the event's words."""

    direction: str  # "before" or "after"
    phrase: str


# "before / after / since / prior to <event>", the event being what follows up to the end of
# the clause. A gerund ("before giving up", "before installing") or a present verb names a step
# of a routine, not an event, and so does any "before" in a question about the present: the
# question must look back ("what was", "did we", "were", or a question whose own verb is in
# the past tense: "which queue handled the retries"). A version number's dots ("the 4.2.0
# release") do not end the clause.
_EVENT = re.compile(
    r"\b(before|after|since|prior\s+to)\s+(?!(?:that|then|now|it|this)\b)"
    r"((?:[^?.!,;]|(?<=\d)\.(?=\d)){3,80})",
    re.I,
)
_STARTS_WITH_DATE = re.compile(rf"(?:\d|{_MONTH}\b)", re.I)
_GERUND = re.compile(r"^\w+ing\b", re.I)
_PRESENT_CLAUSE = re.compile(r"\b(?:is|are|am|does|do|gets|times out)\b|'re\b|'s\s+\w+ed\b", re.I)
_LOOKS_BACK = re.compile(
    r"\b(?:was|were|did|had|used|held|kept|ran|took|got|went)\b"
    r"|^\s*(?:which|what|who)\s+(?:(?!(?:is|are|am|do|does|can|will|must|should|has|have)\b)"
    r"[\w.-]+\s+){0,2}[a-z]+(?<!e)ed\b",
    re.I,
)
# An event told in the past tense looks back by itself: "GOMEMLIMIT before we raised the limit?"
# (a verb in -ed after a pronoun; not "we need"). server/domain/versions.py reads the tense of
# "before <this>" with the same clause.
PAST_EVENT_CLAUSE = r"(?:we|i|they|you|it)\s+[a-z]+(?<!e)ed\b"
_PAST_EVENT = re.compile(PAST_EVENT_CLAUSE, re.I)
# How far a period read from an event reaches: "before the ticket" is the weeks leading to it.
EVENT_SPAN = timedelta(days=45)
# A change made in the session that followed the event is still "right after" it.
EVENT_AFTER_SLACK = timedelta(days=1)


_PART = r"(early|mid|middle of|late|(?:the\s+)?(?:start|beginning|end)\s+of)"
_PART_OF_MONTH = re.compile(rf"\b{_PART}[\s-]+(?:the\s+)?{_MONTH}(?:,?\s+{_YEAR})?\b", re.I)
_IN_MONTH = re.compile(rf"\b(?:in|during|back in|around)\s+{_MONTH}\b(?!\s+\d)", re.I)
_QUARTER = re.compile(
    r"\b(?:in|during|for|by)\s+(?:the\s+)?q([1-4])(?:\s+(?:of\s+)?((?:19|20)\d\d))?\b", re.I
)
_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "a few": 3,
}  # fmt: skip
_AGO = re.compile(
    r"\b(\d{1,3}|a couple of|a few|an?|one|two|three|four|five|six|seven|eight|nine|ten)\s+"
    r"(day|week|month)s?\s+ago\b",
    re.I,
)
_LAST = re.compile(r"\b(yesterday|last\s+(?:week|month)|this\s+(?:week|month))\b", re.I)
# Whether a query needs an anchor at all, so a search without a relative phrase costs nothing.
_RELATIVE = (_PART_OF_MONTH, _IN_MONTH, _QUARTER, _AGO, _LAST)
# How far a relative phrase reaches beyond its exact span: "two weeks ago" is rarely exact.
AGO_SLACK = {"day": timedelta(days=1), "week": timedelta(days=3), "month": timedelta(days=10)}


def event_reference(query: str) -> EventReference | None:
    """The event a question dates itself by ("before the March incident"), or None.

    Only in a question that looks back; a clause that names a date is left to the date
    readers, and one in the present tense or a gerund is a step, not an event.
    """
    if _absolute_period(query) is not None:
        return None
    for match in _EVENT.finditer(query):
        phrase = " ".join(match.group(2).split())
        if _STARTS_WITH_DATE.match(phrase):
            continue
        rest = query[: match.start()] + " " + query[match.end() :]
        if _GERUND.match(phrase) or _PRESENT_CLAUSE.search(phrase):
            continue
        looks_back = _LOOKS_BACK.search(rest) or _PAST_EVENT.match(phrase)
        if not looks_back or _absolute_period(phrase) is not None:
            continue
        if names_relative_time(phrase):
            continue
        direction = "after" if match.group(1).lower() in ("after", "since") else "before"
        return EventReference(direction, phrase)
    return None


def event_period(reference: EventReference, at: datetime, event_id: int) -> Period:
    """The period before or after an event stored at `at` (memory `event_id`)."""
    day = f"{at:%Y-%m-%d}"
    if reference.direction == "before":
        return Period(
            at - EVENT_SPAN,
            at,
            as_of=at,
            label=f"before {reference.phrase} (#{event_id}, {day})",
        )
    return Period(
        at,
        at + EVENT_SPAN,
        as_of=at + EVENT_AFTER_SLACK,
        label=f"after {reference.phrase} (#{event_id}, {day})",
    )


# "before we switched in March", "until we moved to uv in early March", "after the change on
# 3 March 2026": a date attached to a change says when the change happened, and the question is
# about the state before (or after) it, not about that date.
_CHANGE_WORD = (
    r"(?:changed|switched|moved|migrated|renamed|bumped|upgraded|downgraded|replaced|dropped"
    r"|raised|lowered|increased|reduced|swapped|changing|switching|moving|migrating"
    r"|change|switch|move|migration|rename|upgrade|bump)"
)
_CHANGE_CLAUSE = re.compile(
    r"\b(before|until|till|prior\s+to|after|since)\s+"
    r"(?:(?:we|they|you|i|it|he|she|the\s+team)\s+(?:\w+\s+)?)?(?:the\s+)?"
    rf"{_CHANGE_WORD}\b([^?.!;]{{0,80}})",
    re.I,
)


def change_period(query: str, anchor: datetime | None = None) -> Period | None:
    """The weeks before (or after) a change the question dates ("before we switched in
    March"), or None when it names no change with a date. A relative date needs `anchor`."""
    for match in _CHANGE_CLAUSE.finditer(query):
        when = mentioned_period(match.group(2), anchor)
        if when is None:
            continue
        said = " ".join(match.group(0).split())
        if match.group(1).lower() in ("after", "since"):
            return Period(when.start, when.end + EVENT_SPAN, as_of=when.end, label=said)
        return Period(when.start - EVENT_SPAN, when.start, as_of=when.start, label=said)
    return None


def names_relative_time(query: str) -> bool:
    """Whether the query has a relative or fuzzy time phrase (so it needs an anchor)."""
    return any(pattern.search(query) for pattern in _RELATIVE)


_ANY_DATE = (_DAY_MONTH_YEAR, _MONTH_DAY_YEAR, _ISO_DATE, _MONTH_YEAR, *_RELATIVE)


def without_dates(query: str) -> str:
    """The query with its date and time phrases taken out ("early March", "2024-03-05",
    "two weeks ago"): they say when, not what, so they are no evidence of which project a
    prompt is about (server/recall/cutoff.asked_elsewhere)."""
    for pattern in _ANY_DATE:
        query = pattern.sub(" ", query)
    return query


def mentioned_period(query: str, anchor: datetime | None = None) -> Period | None:
    """The period the query names, the first mention winning; None when it names none.

    Absolute dates first; then, with an `anchor`, relative and fuzzy phrases read from it.
    """
    absolute = _absolute_period(query)
    if absolute is not None or anchor is None:
        return absolute
    return _relative_period(query, anchor)


def _absolute_period(query: str) -> Period | None:
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


def _relative_period(query: str, anchor: datetime) -> Period | None:
    part = _PART_OF_MONTH.search(query)
    if part:
        month = _MONTHS[part.group(2).lower()]
        year = int(part.group(3)) if part.group(3) else _latest_year(month, anchor)
        return _part_of_month(year, month, part.group(1).lower())
    ago = _AGO.search(query)
    if ago:
        amount = ago.group(1).lower()
        count = int(amount) if amount.isdigit() else _NUMBER_WORDS[amount]
        unit = ago.group(2).lower()
        days = {"day": 1, "week": 7, "month": 30}[unit] * count
        at = anchor.replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=days)
        slack = AGO_SLACK[unit]
        return Period(at - slack, at + slack + timedelta(days=1))
    last = _LAST.search(query)
    if last:
        return _recent(" ".join(last.group(1).lower().split()), anchor)
    quarter = _QUARTER.search(query)
    if quarter:
        number = int(quarter.group(1))
        year = int(quarter.group(2)) if quarter.group(2) else _latest_year(3 * number - 2, anchor)
        start = datetime(year, 3 * number - 2, 1, tzinfo=UTC)
        end = _month(year, 3 * number).end
        return Period(start, end)
    in_month = _IN_MONTH.search(query)
    if in_month:
        month = _MONTHS[in_month.group(1).lower()]
        return _month(_latest_year(month, anchor), month)
    return None


def _latest_year(month: int, anchor: datetime) -> int:
    """The year of the last `month` begun by the anchor: "in May" asked in March is last May."""
    return anchor.year if month <= anchor.month else anchor.year - 1


def _part_of_month(year: int, month: int, part: str) -> Period:
    part = " ".join(part.lower().split())
    whole = _month(year, month)
    last_day = (whole.end - MONTH_SLACK - timedelta(days=1)).day
    if part in ("early", "start of", "beginning of", "the start of", "the beginning of"):
        first, last = 1, 10
    elif part in ("mid", "middle of"):
        first, last = 10, 20
    else:  # late, end of
        first, last = 20, last_day
    start = datetime(year, month, first, tzinfo=UTC)
    end = datetime(year, month, last, tzinfo=UTC) + timedelta(days=1)
    return Period(start - DAY_SLACK, end + DAY_SLACK)


def _recent(phrase: str, anchor: datetime) -> Period:
    day_start = anchor.replace(hour=0, minute=0, second=0, microsecond=0)
    if phrase == "yesterday":
        return Period(day_start - timedelta(days=1) - DAY_SLACK, day_start + DAY_SLACK)
    if phrase == "last week":
        return Period(day_start - timedelta(days=14), day_start - timedelta(days=5))
    if phrase == "this week":
        return Period(day_start - timedelta(days=7), anchor + DAY_SLACK)
    month_start = day_start.replace(day=1)
    if phrase == "this month":
        return Period(month_start, anchor + DAY_SLACK)
    previous = month_start - timedelta(days=1)
    return _month(previous.year, previous.month)  # last month
