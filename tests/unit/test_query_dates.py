"""Which period a search query names."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from server.domain.query_dates import (
    change_period,
    event_period,
    event_reference,
    mentioned_period,
    without_dates,
)


def day(year: int, month: int, number: int) -> datetime:
    return datetime(year, month, number, tzinfo=UTC)


@pytest.mark.parametrize(
    ("query", "start", "end"),
    [
        ("What did Tim say on 16 November, 2023?", day(2023, 11, 15), day(2023, 11, 18)),
        ("what did we ship on 8th December 2023", day(2023, 12, 7), day(2023, 12, 10)),
        ("the 3rd of March, 2024 outage", day(2024, 3, 2), day(2024, 3, 5)),
        ("painting shown on October 13, 2023", day(2023, 10, 12), day(2023, 10, 15)),
        ("notes from Sept. 1 2025", day(2025, 8, 31), day(2025, 9, 3)),
        ("the deploy on 2026-01-31 failed", day(2026, 1, 30), day(2026, 2, 2)),
        ("what did we decide in March 2024?", day(2024, 3, 1), day(2024, 4, 4)),
        ("December, 2023 workout class", day(2023, 12, 1), day(2024, 1, 4)),
        ("bugs fixed in jan 2025", day(2025, 1, 1), day(2025, 2, 4)),
    ],
)
def test_absolute_dates_name_a_period(query: str, start: datetime, end: datetime) -> None:
    period = mentioned_period(query)

    assert period is not None
    assert (period.start, period.end) == (start, end)


@pytest.mark.parametrize(
    "query",
    [
        "what did we decide about pagination cursors?",
        "what changed last week",  # relative: depends on when it is asked
        "in March we moved to pnpm",  # no year
        "the 2023 roadmap",  # a bare year is too broad to be a hint
        "error 31 February 2023 in the parser",  # not a date
        "May I ask about the migration?",
        "ERR_POOL_TIMEOUT at 12 2023",
    ],
)
def test_queries_without_an_absolute_date_name_none(query: str) -> None:
    assert mentioned_period(query) is None


ANCHOR = datetime(2026, 4, 14, 16, 30, tzinfo=UTC)  # the newest memory of the project


@pytest.mark.parametrize(
    ("query", "start", "end"),
    [
        ("what did we decide in early March?", day(2026, 2, 28), day(2026, 3, 12)),
        ("the mid-March incident", day(2026, 3, 9), day(2026, 3, 22)),
        ("what broke in late January", day(2026, 1, 19), day(2026, 2, 2)),
        ("at the start of April", day(2026, 3, 31), day(2026, 4, 12)),
        ("by the end of February 2025", day(2025, 2, 1), day(2025, 3, 4)),  # with a year: all
        ("which package manager did we use back in May?", day(2025, 5, 1), day(2025, 6, 4)),
        ("what changed in March", day(2026, 3, 1), day(2026, 4, 4)),
        ("what did we ship in Q1?", day(2026, 1, 1), day(2026, 4, 4)),
        ("what was decided two days ago", day(2026, 4, 11), day(2026, 4, 14)),
        ("the fix from 3 weeks ago", day(2026, 3, 21), day(2026, 3, 28)),
        ("what did we change yesterday", day(2026, 4, 12), day(2026, 4, 15)),
        ("what changed last week", day(2026, 3, 31), day(2026, 4, 9)),
        ("anything last month?", day(2026, 3, 1), day(2026, 4, 4)),
    ],
)
def test_relative_phrases_are_read_from_the_anchor(
    query: str, start: datetime, end: datetime
) -> None:
    period = mentioned_period(query, ANCHOR)

    assert period is not None
    assert (period.start, period.end) == (start, end)


def test_an_absolute_date_wins_over_the_anchor() -> None:
    period = mentioned_period("what happened on 2026-01-31, two days ago?", ANCHOR)
    assert period is not None and period.start == day(2026, 1, 30)


@pytest.mark.parametrize(
    "query",
    ["May I ask about the migration?", "what runs before the deploy?", "the q2 roadmap doc"],
)
def test_no_relative_phrase_names_nothing_even_with_an_anchor(query: str) -> None:
    assert mentioned_period(query, ANCHOR) is None


@pytest.mark.parametrize(
    ("query", "direction", "phrase"),
    [
        (
            "What was the token lifetime before the Kestrel support ticket?",
            "before",
            "the Kestrel support ticket",
        ),
        (
            "Before finance asked for fresher numbers, when did reconciliation run?",
            "before",
            "finance asked for fresher numbers",
        ),
        (
            "Right after the pool incident fix, what timeout did we run with?",
            "after",
            "the pool incident fix",
        ),
        ("What held the UI state before the March refactor?", "before", "the March refactor"),
        # The event told in the past tense looks back by itself, with no "was" or "did".
        ("Retry budget before we doubled it?", "before", "we doubled it"),
        # A version number's dots do not end the phrase.
        (
            "which Postgres major did we run before the 4.2.0 release?",
            "before",
            "the 4.2.0 release",
        ),
        # A question whose own verb is in the past tense looks back without an auxiliary.
        ("which queue handled the retries before the cutover?", "before", "the cutover"),
        ("who approved deploys after the reorg?", "after", "the reorg"),
    ],
)
def test_an_event_a_question_looks_back_from(query: str, direction: str, phrase: str) -> None:
    reference = event_reference(query)
    assert reference is not None
    assert (reference.direction, reference.phrase) == (direction, phrase)


@pytest.mark.parametrize(
    "query",
    [
        "How many times do we retry a webhook before giving up on it?",  # a gerund: a step
        "How long do we wait before a payment call times out?",  # present: a routine
        "How long are raw files retained before they're deleted?",
        "What runs before the deploy?",  # not a question about the past
        "What runs before we deploy?",
        "What do we check before we need a new key?",
        "What did we run before that?",  # no event named
        "What did Maria do the week before August 3, 2023?",  # a date, read as a date
        "What did we change two weeks before last week?",
        "Which seed runs before the migration?",  # "seed" is not a verb in the past tense
        "What is needed before the release?",
    ],
)
def test_no_event_in_routines_dates_or_the_present(query: str) -> None:
    assert event_reference(query) is None


def test_an_event_period_is_the_weeks_before_or_after_it() -> None:
    at = datetime(2026, 3, 20, 15, 0, tzinfo=UTC)
    before = event_period(event_reference("what was it before the audit?") or _never(), at, 7)
    assert before.end == at and before.as_of == at and before.start < at
    assert before.label == "before the audit (#7, 2026-03-20)"
    after = event_period(event_reference("what did we use after the audit?") or _never(), at, 7)
    assert after.start == at and after.as_of is not None and after.as_of > at
    assert after.label == "after the audit (#7, 2026-03-20)"


def _never():  # type: ignore[no-untyped-def]
    raise AssertionError("no event read")


@pytest.mark.parametrize(
    ("query", "start", "as_of"),
    [
        # The change happened in March: the question asks about the weeks before March.
        ("what did we use before we switched in March?", day(2026, 1, 15), day(2026, 3, 1)),
        ("which runner did we have until we moved to uv in early March?", None, day(2026, 2, 28)),
        ("the timeout before we changed it on 3 March 2026", None, day(2026, 3, 2)),
        ("which image did we build prior to the upgrade in Q1?", None, day(2026, 1, 1)),
    ],
)
def test_a_date_attached_to_a_change_dates_the_change_not_the_question(
    query: str, start: datetime | None, as_of: datetime
) -> None:
    period = change_period(query, anchor=day(2026, 4, 20))

    assert period is not None
    assert period.as_of == as_of
    assert period.end == as_of
    if start is not None:
        assert period.start == start
    assert period.label is not None and period.label.startswith(("before", "until", "prior"))


def test_after_a_dated_change_is_the_weeks_after_it() -> None:
    period = change_period("what did we run after the switch in March?", day(2026, 4, 20))

    assert period is not None
    assert period.start == day(2026, 3, 1)
    assert period.as_of == day(2026, 4, 4)  # the end of March, with the month's slack


@pytest.mark.parametrize(
    "query",
    [
        "what runs before the deploy in March?",  # a step, not a change
        "what was the pool size in March?",  # a date, no change
        "before we switched to pnpm, what did we use?",  # a change, no date
        "before the March incident, what was the timeout?",  # an event
    ],
)
def test_no_change_period_without_a_dated_change(query: str) -> None:
    assert change_period(query, day(2026, 4, 20)) is None


@pytest.mark.parametrize(
    ("query", "left"),
    [
        (
            "what timeout did the sink start with in early March?",
            "what timeout did the sink start with in ?",
        ),
        (
            "what did we change on 2024-03-05 in the limiter?",
            "what did we change on in the limiter?",
        ),
        ("why did the deploy fail two weeks ago", "why did the deploy fail"),
        ("the export job in March 2024", "the export job in"),
        ("which port does the API listen on?", "which port does the API listen on?"),
    ],
)
def test_without_dates_leaves_what_a_query_is_about(query: str, left: str) -> None:
    assert " ".join(without_dates(query).split()) == left
