"""Which preferences say nearly the same thing (server/domain/preferences.py): pairs within one
project at or above the bound, by cosine similarity, in id order."""

from __future__ import annotations

import numpy as np
import pytest

from server.domain.preferences import same_subject_pairs


def vector(*values: float) -> np.ndarray:
    return np.array(values, dtype=np.float32)


def test_pairs_are_found_within_a_project_only_at_or_above_the_bound() -> None:
    rows = [
        (7, "shop", vector(1, 0, 0)),
        (3, "shop", vector(2, 0.2, 0)),  # the same direction, longer: compared by angle
        (5, "shop", vector(0, 1, 0)),
        (4, "blog", vector(1, 0, 0)),  # alike, but another project's
        (9, "shop", vector(0, 0, 0)),  # no direction: like nothing
    ]

    pairs = same_subject_pairs(rows, 0.9)

    assert [(a, b) for a, b, _ in pairs] == [(3, 7)]
    assert abs(pairs[0][2] - 2 / np.linalg.norm([2, 0.2, 0])) < 1e-9


def test_the_bound_counts_and_the_order_is_by_id() -> None:
    same = vector(0.6, 0.8)
    rows = [(12, "", same), (10, "", same), (11, "", vector(0.8, 0.6))]

    pairs = same_subject_pairs(rows, 0.96)

    assert [(a, b) for a, b, _ in pairs] == [(10, 11), (10, 12), (11, 12)]
    assert same_subject_pairs(rows, 0.961) == [(10, 12, pytest.approx(1.0))]
    assert same_subject_pairs([], 0.5) == [] and same_subject_pairs(rows[:1], 0.5) == []
