"""Ranking arithmetic: IDF, term selection, Reciprocal Rank Fusion, the kind/recency prior."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from server.core.ranking import (
    RankingPrior,
    idf,
    parse_kind_weights,
    reciprocal_rank_fusion,
    seed_terms,
    term_weights,
)
from server.store.search import any_term_query

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


def test_rrf_adds_weighted_reciprocal_ranks() -> None:
    fused = reciprocal_rank_fusion(
        {"semantic": [1, 2], "keyword": [2, 3]}, {"semantic": 1.0, "keyword": 0.5}
    )

    assert fused[1] == pytest.approx(1 / 61)
    assert fused[2] == pytest.approx(1 / 62 + 0.5 / 61)
    assert fused[3] == pytest.approx(0.5 / 62)
    assert max(fused, key=fused.__getitem__) == 2


def test_rrf_ignores_lists_with_zero_weight() -> None:
    assert reciprocal_rank_fusion({"semantic": [1], "keyword": [2]}, {"semantic": 1.0}) == {
        1: pytest.approx(1 / 61)
    }


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
