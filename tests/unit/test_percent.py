"""One rounding rule for every percentage shown: half up on the decimal value as written."""

from __future__ import annotations

import pytest

from server.core.percent import percent_label, whole_percent


@pytest.mark.parametrize(
    ("fraction", "percent"),
    [(0.405, 41), (0.415, 42), (0.425, 43), (0.004, 0), (0.005, 1), (0.994, 99), (0.995, 100)],
)
def test_whole_percent_rounds_half_percents_up(fraction: float, percent: int) -> None:
    assert whole_percent(fraction) == percent


@pytest.mark.parametrize(("fraction", "percent"), [(-0.2, 0), (0.0, 0), (1.0, 100), (1.7, 100)])
def test_whole_percent_clamps_to_zero_and_a_hundred(fraction: float, percent: int) -> None:
    assert whole_percent(fraction) == percent


def test_percent_label_adds_the_sign() -> None:
    assert percent_label(0.415) == "42%"
