"""The blend of a conversation turn's vector with the turns before it
(server/service/turn_context.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np

from server.core.models.memories import NewMemory
from server.core.models.vectors import TURN_CONTEXT_WEIGHTS
from server.service.turn_context import blend, place_of_new, turn_place

WHEN = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


def unit(*values: float) -> np.ndarray:
    vector = np.array(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def test_a_turn_without_earlier_turns_keeps_its_own_vector() -> None:
    own = unit(1, 2, 3)

    assert np.allclose(blend(own, []), own)


def test_the_turns_before_count_at_half_and_a_quarter_nearest_first() -> None:
    own, previous, before_that = unit(1, 0, 0), unit(0, 1, 0), unit(0, 0, 1)

    mixed = blend(own, [previous, before_that])

    expected = unit(1, TURN_CONTEXT_WEIGHTS[0], TURN_CONTEXT_WEIGHTS[1])
    assert TURN_CONTEXT_WEIGHTS == (0.5, 0.25)
    assert np.allclose(mixed, expected)
    assert abs(float(np.linalg.norm(mixed)) - 1.0) < 1e-6


def test_turns_further_back_than_the_weights_do_not_count() -> None:
    own, a, b = unit(1, 0, 0), unit(0, 1, 0), unit(0, 0, 1)

    assert np.allclose(blend(own, [a, b, unit(1, 1, 1)]), blend(own, [a, b]))


def test_a_vector_cancelled_by_its_context_falls_back_to_its_own() -> None:
    own = unit(1, 0)

    assert np.allclose(blend(own, [-2 * own]), own)


def test_only_raw_memories_of_a_session_are_turns() -> None:
    raw = NewMemory(content="pnpm", content_hash="h", kind="raw", session_id="s1", created_at=WHEN)

    assert place_of_new(raw) is not None
    assert place_of_new(NewMemory(content="pnpm", content_hash="h", kind="raw")) is None
    assert (
        place_of_new(NewMemory(content="x", content_hash="h", kind="note", session_id="s1")) is None
    )


def test_a_subagent_turn_has_its_own_conversation() -> None:
    main = turn_place("raw", "s1", {}, WHEN)
    subagent = turn_place("raw", "s1", {"agent_id": "a7"}, WHEN)

    assert main is not None and subagent is not None
    assert (main.session_id, main.agent_id) == ("s1", "")
    assert (subagent.session_id, subagent.agent_id) == ("s1", "a7")


def test_a_turn_not_stored_yet_sorts_after_every_stored_turn_of_its_time() -> None:
    stored = turn_place("raw", "s1", {}, WHEN, memory_id=10**12)
    new = turn_place("raw", "s1", {}, WHEN)

    assert stored is not None and new is not None
    assert new.order_id > stored.order_id
