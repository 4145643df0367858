"""A text's statements as spans: what gets a vector of its own, and what the stale-line
comparison reads."""

from __future__ import annotations

from server.core.models.vectors import Window
from server.domain.statements import MAX_UNITS, statement_spans, unit_spans


def _texts(text: str, spans: list[Window]) -> list[str]:
    return [text[span.start : span.end] for span in spans]


def test_lines_list_items_and_sentences_are_statements_without_markers_or_trifles() -> None:
    text = (
        "# Deploy rules\n\nOK.\n- Deploys go out on Tuesdays. Hotfixes any day.\n"
        "> Staging is `stg-2`"
    )

    assert _texts(text, statement_spans(text)) == [
        "Deploy rules",
        "Deploys go out on Tuesdays.",
        "Hotfixes any day.",
        "Staging is `stg-2`",
    ]


def test_a_sentence_break_needs_a_capital_or_code_after_it() -> None:
    text = "Pinned to v1.22 in go.mod. `make lint` runs ruff. see e.g. the docs."

    assert _texts(text, statement_spans(text)) == [
        "Pinned to v1.22 in go.mod.",
        "`make lint` runs ruff. see e.g. the docs.",
    ]


def test_a_text_stating_one_thing_gets_no_unit_vectors() -> None:
    assert unit_spans("We moved the queue to SQS in March, after the Redis outage.") == []
    assert unit_spans("Thanks!\nWe moved the queue to SQS in March, after the outage.") == []


def test_each_statement_worth_a_vector_is_a_unit_short_ones_are_not() -> None:
    text = (
        "Sounds good, merged it.\n"
        "- The API rate limit is 100 requests a minute per key.\n"
        "- Anonymous calls share one bucket per IP address."
    )

    assert _texts(text, unit_spans(text)) == [
        "The API rate limit is 100 requests a minute per key.",
        "Anonymous calls share one bucket per IP address.",
    ]


def test_a_paragraph_without_breaks_is_left_to_the_passage_windows() -> None:
    log_line = "x" * 900
    text = (
        f"{log_line}\nThe build cache lives in `.cache/build` on every runner.\n"
        "It is pruned every Sunday night by the CI cleanup job."
    )

    assert _texts(text, unit_spans(text)) == [
        "The build cache lives in `.cache/build` on every runner.",
        "It is pruned every Sunday night by the CI cleanup job.",
    ]


def test_a_long_document_gets_at_most_max_units() -> None:
    text = "\n".join(f"- The setting number {n} is set to the value {n * 7}." for n in range(90))

    spans = unit_spans(text)

    assert len(spans) == MAX_UNITS
    assert _texts(text, spans[:1]) == ["The setting number 0 is set to the value 0."]
