"""Ranking arithmetic: IDF, term selection, score fusion, the kind/recency/question prior."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from server.core.ranking import (
    RankingPrior,
    asks,
    asks_why,
    gives_reason,
    idf,
    parse_kind_weights,
    score_fusion,
    seed_terms,
    term_weights,
)
from server.store.search import any_term_query, best_per_memory

NOW = datetime(2026, 11, 22, tzinfo=UTC)


def test_idf_weighs_rare_terms_more_and_never_below_zero() -> None:
    assert idf(1000, 1) > idf(1000, 100) > idf(1000, 900) > 0
    assert idf(10, 10) > 0


def test_term_weights_drop_absent_and_very_common_terms() -> None:
    terms, weights = term_weights({"redis": 3, "the": 900, "nowhere": 0}, 1000)

    assert terms == ["redis"]
    assert weights == [pytest.approx(idf(1000, 3))]


def test_term_weights_keep_rarest_when_every_term_is_common() -> None:
    terms, _ = term_weights({"alpha": 600, "beta": 400}, 1000)

    assert terms == ["beta"]


def test_seed_terms_take_the_rarest_within_the_row_budget() -> None:
    frequencies = {"redis": 40, "cache": 900, "timeout": 300, "go": 5000}

    assert seed_terms(frequencies, 1000) == ["redis", "timeout"]
    assert seed_terms(frequencies, 10_000) == sorted(frequencies)


def test_seed_terms_always_keep_the_rarest_term() -> None:
    assert seed_terms({"deploy": 5000, "go": 9000}, 1000) == ["deploy"]
    assert seed_terms({}, 1000) == []


def test_score_fusion_adds_weighted_shares_of_each_lists_best() -> None:
    fused = score_fusion(
        {"semantic": {1: 0.8, 2: 0.4, 3: 0.2}, "keyword": {1: 0.0, 2: 10.0, 3: 5.0}},
        {"semantic": 1.0, "keyword": 0.5},
    )

    assert fused[1] == pytest.approx(1.0)
    assert fused[2] == pytest.approx(0.5 + 0.5)
    assert fused[3] == pytest.approx(0.25 + 0.25)


def test_a_clear_winner_of_both_lists_keeps_its_margin_over_a_kind_weight() -> None:
    # First in both lists by a wide margin; the runner-up is a note, which the kind weight
    # favours over a raw turn by a tenth. Rank fusion left the winner 5% ahead; shares keep
    # the real gap, so the prior cannot turn the order around.
    fused = score_fusion(
        {"semantic": {1: 0.69, 2: 0.39}, "keyword": {1: 11.3, 2: 6.7}},
        {"semantic": 0.5, "keyword": 0.5},
    )
    prior = RankingPrior(kind_weights={"raw": 0.9})

    assert fused[1] * prior.factor("raw", NOW, NOW) > fused[2] * prior.factor("note", NOW, NOW)


def test_score_fusion_ignores_lists_with_zero_weight_or_no_positive_score() -> None:
    fused = score_fusion(
        {"semantic": {1: 0.5, 2: -0.1}, "keyword": {1: 3.0}, "empty": {3: 0.0}},
        {"semantic": 1.0, "keyword": 0.0, "empty": 1.0},
    )

    assert fused == {1: pytest.approx(1.0), 2: 0.0}


def test_a_turn_that_asks_is_weighed_down_only_when_it_is_a_question() -> None:
    prior = RankingPrior(question_weight=0.85)

    assert asks("raw", "How do I clear the lock?  ")
    assert not asks("raw", "Clear it with unlock.")
    assert not asks("note", "FAQ: how do I clear the lock?")
    assert prior.factor("raw", NOW, NOW, asking=True) == pytest.approx(0.85)
    assert prior.factor("raw", NOW, NOW) == pytest.approx(1.0)


def test_a_users_turn_asks_with_a_question_anywhere_in_it() -> None:
    asking = "ok. Which Redis version does staging run? I need it for the upgrade ticket."

    assert asks("raw", asking, "user")
    assert not asks("raw", asking, "assistant")
    assert not asks("raw", asking, None)
    assert asks("raw", 'Did you mean "prod"?\nStaging is fine.', "user")
    # Code and addresses hold question marks that ask nothing.
    assert not asks("raw", "Use `const host = ssl ? a : b;` in the client.", "user")
    assert not asks("raw", "It reads `user?.id` and skips the rest.", "user")
    assert not asks("raw", "See https://example.test/search?page=2 for the list.", "user")
    assert not asks("note", asking, "user")


def test_prior_scales_by_kind_and_fades_with_age() -> None:
    prior = RankingPrior(kind_weights={"raw": 0.9}, recency_weight=0.2, half_life_days=30)

    fresh = prior.factor("distilled", NOW, NOW)
    month_old = prior.factor("distilled", NOW - timedelta(days=30), NOW)
    ancient = prior.factor("distilled", NOW - timedelta(days=3000), NOW)

    assert fresh == pytest.approx(1.0)
    assert month_old == pytest.approx(0.9)
    assert ancient == pytest.approx(0.8, abs=1e-6)
    assert prior.factor("raw", NOW, NOW) == pytest.approx(0.9)


def test_prior_without_recency_is_the_kind_weight() -> None:
    prior = RankingPrior(kind_weights={"raw": 0.5}, recency_weight=0.0)

    assert prior.factor("raw", NOW - timedelta(days=999), NOW) == 0.5


@pytest.mark.parametrize("bad", ["raw", "raw=x", "=1", "raw=11"])
def test_parse_kind_weights_rejects_malformed_entries(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_kind_weights(bad)


def test_any_term_query_quotes_every_lexeme() -> None:
    assert any_term_query(["it's", "a\\b", "x|y"]) == "'it''s' | 'a\\\\b' | 'x|y'"


def test_best_per_memory_counts_each_memory_by_its_nearest_row() -> None:
    own = [(7, 0.30), (3, 0.50)]
    # Memory 3's statement is nearer than its own vector; memory 9 has two passages.
    passages = [(3, 0.10), (9, 0.20), (9, 0.25), (7, 0.60)]

    found = best_per_memory([own, passages], limit=10)

    assert found == [(3, pytest.approx(0.90)), (9, pytest.approx(0.80)), (7, pytest.approx(0.70))]


def test_best_per_memory_keeps_the_limit_the_cut_and_breaks_ties_by_id() -> None:
    rows = [(5, 0.2), (2, 0.2), (8, 0.5), (4, 0.9)]

    assert [i for i, _ in best_per_memory([rows], limit=2)] == [2, 5]
    assert [i for i, _ in best_per_memory([rows], limit=10, min_similarity=0.5)] == [2, 5, 8]
    assert best_per_memory([[], []], limit=5) == []


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("why did the nightly export time out?", True),
        ("Any idea why the cache keeps growing?", True),
        ("what caused the spike in 502s last week?", True),
        ("what was the root cause of the outage?", True),
        ("what timeout does the export use?", False),
        ("what did we change in the cache?", False),
    ],
)
def test_a_question_asks_why(query: str, expected: bool) -> None:
    assert asks_why(query) is expected


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("The export times out because it loads every tenant at once.", True),
        ("The growth comes from the retry queue, which nothing drains.", True),
        ("We batch by tenant so that no job holds all invoices in memory.", True),
        ("Raised the pool to 32 connections; the backlog was due to starved workers.", True),
        ("The export job timed out again on the first of the month.", False),
        ("Cause and effect are the same here", False),  # "cause" alone states no cause
    ],
)
def test_a_memory_gives_a_reason(content: str, expected: bool) -> None:
    assert gives_reason(content) is expected
