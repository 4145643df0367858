"""Cut-offs carried over to an adapted model keep the same share of the same pairs."""

from __future__ import annotations

from server.service.cutoffs import SimilarityCutoffs, carried_over, cutoffs_for

BASE = SimilarityCutoffs(semantic=0.15, recall=0.55, recall_with_words=0.35, duplicates=0.8)


def test_a_model_that_draws_every_pair_closer_moves_each_cut_off_up_by_as_much() -> None:
    before = [i / 1000 for i in range(1000)]  # 0.000 .. 0.999
    after = [0.2 + 0.8 * s for s in before]  # the same pairs, all closer
    carried = carried_over(BASE, before, after)
    assert carried["recall"] == round(0.2 + 0.8 * 0.55, 4)
    assert carried["semantic"] == round(0.2 + 0.8 * 0.15, 4)
    assert carried["recall_with_words"] < carried["recall"] < carried["duplicates"]


def test_the_same_model_keeps_its_cut_offs() -> None:
    sims = [i / 500 - 0.5 for i in range(750)]
    assert carried_over(BASE, sims, sims) == {
        "semantic": 0.15,
        "recall": 0.55,
        "recall_with_words": 0.35,
        "duplicates": 0.8,
    }


def test_a_cut_off_no_pair_reached_lets_none_through_after() -> None:
    before = [0.1, 0.2, 0.3]
    after = [0.5, 0.85, 0.9]
    assert carried_over(BASE, before, after)["duplicates"] == 0.9


def test_carried_cut_offs_win_over_the_table_and_half_a_set_does_not() -> None:
    carried = {"semantic": 0.3, "recall": 0.7, "recall_with_words": 0.5, "duplicates": 0.9}
    model = "all-MiniLM-L6-v2+adapted-1"
    assert cutoffs_for(model, carried) == SimilarityCutoffs(**carried)
    assert cutoffs_for(model, {"recall": 0.7}) == cutoffs_for("all-MiniLM-L6-v2")
    assert cutoffs_for(model) == cutoffs_for("all-MiniLM-L6-v2")
