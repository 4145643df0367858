"""The one rounding rule for every percentage the product shows.

A fraction becomes a whole percent rounded half up on its decimal value as written: 0.405 is
41%, 0.415 is 42%, 0.425 is 43%. Two easier rules disagree on those values, which is why this
module exists: Python's `round` rounds halves to even (0.405 -> 40), and `x * 100` in binary
floating point turns 0.415 into 41.49999... (-> 41). Confidences are stored with three
decimals, so their halves are real and common.

The UI shows the percent the server computed with this rule (`confidence_percent`); it does
not round on its own.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal


def whole_percent(fraction: float) -> int:
    """`fraction` (0-1, clamped) as a whole percent, half up on its shortest decimal form."""
    clamped = min(max(fraction, 0.0), 1.0)
    return int((Decimal(repr(clamped)) * 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def percent_label(fraction: float) -> str:
    """`whole_percent` with its sign: "42%"."""
    return f"{whole_percent(fraction)}%"
