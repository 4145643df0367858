"""How many of the prompt's words prompt recall asks of a hit, by its similarity, when a
prompt's words belong to another project, when a reranker's score decides instead, and which
candidates below the cut-off the index may list."""

from __future__ import annotations

import pytest

from server.core.models.search import SearchHit
from server.recall.cutoff import (
    ELSEWHERE_MARGIN,
    INDEX_FLOOR_STEP,
    INDEX_TOP_RANKS,
    INDEX_WORDS,
    RECALL_WORDS_AT_FLOOR,
    asked_elsewhere,
    index_floor,
    judged_relevant,
    words_needed,
    worth_listing,
)
from tests.search_hits import note_hit


def test_at_or_above_the_cut_off_similarity_alone_counts() -> None:
    assert words_needed(0.55, 0.55, 0.35) == 0.0
    assert words_needed(0.9, 0.55, 0.35) == 0.0


def test_below_the_cut_off_the_words_asked_grow_as_similarity_falls() -> None:
    near = words_needed(0.5, 0.55, 0.35)
    halfway = words_needed(0.45, 0.55, 0.35)
    floor = words_needed(0.35, 0.55, 0.35)

    assert near is not None and halfway is not None and floor is not None
    assert 0.0 < near < halfway < floor
    assert halfway == pytest.approx(RECALL_WORDS_AT_FLOOR / 2)
    assert floor == pytest.approx(RECALL_WORDS_AT_FLOOR)


def test_the_share_at_the_floor_can_be_given() -> None:
    # bench/recall_words.py grids it.
    assert words_needed(0.35, 0.55, 0.35, at_floor=1.0) == pytest.approx(1.0)
    assert words_needed(0.45, 0.55, 0.35, at_floor=1.0) == pytest.approx(0.5)


def test_below_the_floor_no_words_are_enough() -> None:
    assert words_needed(0.34, 0.55, 0.35) is None


def test_a_cut_off_at_the_floor_leaves_no_band() -> None:
    # RECALL_THRESHOLD set below the model's floor: the floor follows it (HookRecall).
    assert words_needed(0.3, 0.3, 0.3) == 0.0
    assert words_needed(0.29, 0.3, 0.3) is None


def test_a_prompt_whose_words_another_project_holds_far_better_is_about_it() -> None:
    assert asked_elsewhere(words_here=0.3, words_elsewhere=0.3 + ELSEWHERE_MARGIN + 0.05)


def test_words_held_about_as_well_here_keep_the_prompt_here() -> None:
    assert not asked_elsewhere(words_here=0.5, words_elsewhere=0.5 + ELSEWHERE_MARGIN - 0.05)
    assert not asked_elsewhere(words_here=0.0, words_elsewhere=0.0)
    assert not asked_elsewhere(words_here=0.9, words_elsewhere=0.2)


def test_nothing_here_holding_the_words_counts_as_none() -> None:
    assert asked_elsewhere(words_here=0.0, words_elsewhere=ELSEWHERE_MARGIN + 0.01)
    assert not asked_elsewhere(words_here=0.0, words_elsewhere=ELSEWHERE_MARGIN)


def _hit(similarity: float, rerank_score: float | None) -> SearchHit:
    return note_hit(
        1,
        "the weekly settlement batch locks the orders table",
        similarity=similarity,
        score=similarity,
        rerank_score=rerank_score,
    )


def test_a_reranker_score_decides_whatever_the_similarity() -> None:
    assert judged_relevant(_hit(0.2, 0.9), 0.5)
    assert judged_relevant(_hit(0.2, 0.5), 0.5)
    assert not judged_relevant(_hit(0.9, 0.1), 0.5)
    # Logits (llama.cpp's endpoint) gate at 0, even odds.
    assert judged_relevant(_hit(0.3, 1.7), 0.0)
    assert not judged_relevant(_hit(0.8, -2.3), 0.0)


def test_a_hit_the_reranker_did_not_score_does_not_count() -> None:
    assert not judged_relevant(_hit(0.95, None), 0.5)


def test_the_index_floor_is_a_share_of_the_way_from_the_words_floor_to_the_cut_off() -> None:
    assert index_floor(0.55, 0.35) == pytest.approx(0.35 + INDEX_FLOOR_STEP * 0.2)
    # A model whose cut-offs were carried over (adapt) moves the floor with them.
    assert index_floor(0.75, 0.55) == pytest.approx(0.55 + INDEX_FLOOR_STEP * 0.2)
    # A cut-off set at or below the words floor leaves the floor where the cut-off is.
    assert index_floor(0.35, 0.35) == pytest.approx(0.35)


def test_a_candidate_is_listed_on_its_similarity_its_words_or_its_rank() -> None:
    floor = index_floor(0.55, 0.35)

    far = {"rank": INDEX_TOP_RANKS, "something_counts": True}
    assert worth_listing(floor, 0.0, floor, **far)
    assert worth_listing(0.05, INDEX_WORDS, floor, **far)  # a keyword find the model scores low
    assert not worth_listing(floor - 0.01, INDEX_WORDS - 0.01, floor, **far)
    # Search's first few are listed when something counts, and only then.
    assert worth_listing(floor - 0.01, 0.0, floor, rank=INDEX_TOP_RANKS - 1, something_counts=True)
    assert not worth_listing(floor - 0.01, 0.0, floor, rank=0, something_counts=False)
