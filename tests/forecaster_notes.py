"""A long memory whose answer shares no word with the question asked of it (the prompt's
words name only its subject line): for the tests of the statement nearest the prompt."""

from __future__ import annotations

SUBJECT = "Forecaster notes, part 3."
ANSWER = "Training uses the last 90 days of meter readings as its history window."
PROMPT = "how far back does the forecaster look when it trains?"


def filler(count: int) -> list[str]:
    """`count` statements about something else, each distinct."""
    return [
        f"Section {n}: the onboarding checklist asks new staff to read chapter {n} of the style "
        f"guide and to pair with a reviewer for {n + 1} afternoons."
        for n in range(1, count + 1)
    ]
