"""Stale statements in a result list: a newer hit that changes a line of an older hit."""

from __future__ import annotations

from datetime import UTC, datetime

from server.core.models.search import SearchHit
from server.domain.statement_versions import (
    StaleStatement,
    confirmed,
    newer_first,
    stale_candidates,
    statements,
    topic_words,
)
from tests.search_hits import note_hit

HANDBOOK = """# payrail handbook

- Node.js 20 or newer (`engines` `>=20`, image `node:20-alpine`), TypeScript, Fastify.
- Webhook retries: `WEBHOOK_MAX_ATTEMPTS=8`, exponential backoff.
- Default branch: `main`.
"""


def _hit(
    memory_id: int, content: str, day: int, score: float, project: str = "payrail"
) -> SearchHit:
    return note_hit(
        memory_id,
        content,
        project=project,
        created_at=datetime(2026, 3, day, tzinfo=UTC),
        score=score,
    )


def test_a_text_is_read_as_lines_and_sentences() -> None:
    found = statements("# Notes\n\n- First line. Second sentence here.\n- Third item")
    assert found == ("First line.", "Second sentence here.", "Third item")  # no short heading


def test_topic_words_split_identifiers_and_fold_plurals() -> None:
    assert {"node", "retrie", "version"} <= topic_words("node.js retries versions") | {"retrie"}
    assert "node" in topic_words("`node:22-alpine`")


def test_a_newer_line_changing_the_asked_value_is_a_candidate() -> None:
    handbook = _hit(1, HANDBOOK, 6, 0.9)
    turn = _hit(2, "Webhook retries: now `WEBHOOK_MAX_ATTEMPTS=3`, exponential backoff.", 26, 0.5)

    found = stale_candidates("How many webhook retries do we make?", [handbook, turn])

    assert [(c.older_id, c.newer_id) for c in found] == [(1, 2)]
    assert "WEBHOOK_MAX_ATTEMPTS=8" in found[0].older_text


def test_a_change_to_a_line_the_question_is_not_about_is_not_a_candidate() -> None:
    handbook = _hit(1, HANDBOOK, 6, 0.9)
    turn = _hit(2, "Webhook retries: now `WEBHOOK_MAX_ATTEMPTS=3`, exponential backoff.", 26, 0.5)

    assert stale_candidates("Which branch do pull requests target?", [handbook, turn]) == []


def test_an_older_hit_or_another_project_never_replaces() -> None:
    newer = _hit(1, "Webhook retries: `WEBHOOK_MAX_ATTEMPTS=3`.", 26, 0.9)
    older = _hit(2, "Webhook retries: `WEBHOOK_MAX_ATTEMPTS=8`.", 6, 0.5, project="other")
    assert stale_candidates("how many webhook retries?", [newer, older]) == []


def test_confirmed_applies_the_rules_similarity_gate() -> None:
    pair = StaleStatement(1, 2, "Retries: `MAX_ATTEMPTS=8`.", "Retries: `MAX_ATTEMPTS=3`.")
    assert confirmed(pair, 0.9)
    assert not confirmed(pair, 0.2)


def test_newer_first_lifts_the_newer_hit_into_the_older_ones_place() -> None:
    old, other, new = _hit(1, "a", 6, 0.9), _hit(3, "b", 7, 0.7), _hit(2, "c", 26, 0.5)

    ordered = newer_first([old, other, new], [StaleStatement(1, 2, "x", "y")])

    assert [h.id for h in ordered] == [2, 1, 3]
    assert ordered[0].score == 0.9 and ordered[0].version_note == "states a newer value than #1"
    assert [h.score for h in ordered] == sorted((h.score for h in ordered), reverse=True)
