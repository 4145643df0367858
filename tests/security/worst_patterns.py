"""The lesson patterns that stall a backtracking regex engine, and the inputs that make them
work hardest: shared by tests/security/test_lesson_attacks.py (every one stored is one RE2 runs
in linear time, or it is refused) and bench/lesson_patterns.py (how long each takes).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

# Patterns that take a backtracking engine exponential or high-polynomial time. RE2 runs the
# ones it accepts in linear time; the rest it refuses (too large, backreferences, lookaround).
WORST_PATTERNS = (
    r"(a|aa)*b",
    r"(.*a){20}",
    r"(a|a?)+$",
    r"((a*)*)*b",
    r"(\w+\s?)*$",
    r"(x+x+)+y",
    r"(a+)+b",
    r"(.*.*.*.*){10}",
    # the costliest RE2 accepts: programs just under MAX_PATTERN_PROGRAM
    r"(.*){29}",
    r"(.*a){26}",
    r"([^x]*){26}$",
    r"(?s)(.*){32}",
    r"(.*b){26}",
    r"(.*){28}x",
    # and beyond it
    r"(.*){45}",
    r"(((.*a){3}){3}){4}",
    r"(.*){1000}",
    r"(.{0,100}){10}x",
    r"((a{100}){100}){100}",
    r"(a+)\1+$",
    r"^(?=(a+))+\1$",
)
# The inputs that make them work hardest: up to the 8,000 characters the hook reads.
WORST_INPUTS = (
    "a" * 7_999 + "!",
    "a" * 8_000,
    "\U0001f600" * 8_000,
    ("ab " * 3_000)[:8_000],
    ("a" * 79 + "\n") * 100,
)


async def while_polled(
    poll: Callable[[asyncio.Event], Awaitable[None]], callers: list[Awaitable[None]]
) -> None:
    """Run `callers` at once while `poll` runs beside them, told by its event when they are
    done (the attack of the test and of the bench: hook calls while /health is polled)."""
    done = asyncio.Event()
    poller = asyncio.create_task(poll(done))
    try:
        await asyncio.gather(*callers)
    finally:
        done.set()
        await poller
