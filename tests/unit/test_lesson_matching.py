"""The PreToolUse hook's pattern matching (server/domain/lessons.py) with many lessons: every
active pattern stays compiled between calls, and no call compiles more than stay compiled."""

from __future__ import annotations

from server.core.models.lessons import Lesson
from server.domain.lessons import COMPILED_PATTERNS, _compiled, match_call
from tests.unit.lesson_rows import lesson


def lessons(prefix: str, count: int) -> list[Lesson]:
    return [lesson("Bash", rf"\b{prefix}word{index}\b", index + 1) for index in range(count)]


def test_more_active_patterns_than_the_old_cache_held_are_compiled_once() -> None:
    active = lessons("many", 1_500)  # the cache held 1,024: each call compiled them all
    first = match_call(active, "Bash", "echo manyword7 done", None)
    misses = _compiled.cache_info().misses

    second = match_call(active, "Bash", "echo manyword1499 done", None)

    assert [x.id for x in first.lessons] == [8] and [x.id for x in second.lessons] == [1_500]
    assert _compiled.cache_info().misses == misses
    assert len(active) < COMPILED_PATTERNS


def test_lessons_past_the_patterns_kept_compiled_are_left_unsearched() -> None:
    flood = lessons("flood", COMPILED_PATTERNS + 50)
    first = match_call(flood, "Bash", "echo floodword3", None)
    misses = _compiled.cache_info().misses

    second = match_call(flood, "Bash", f"echo floodword{COMPILED_PATTERNS + 10}", None)

    assert [x.id for x in first.lessons] == [4] and first.unchecked == 50
    assert second.lessons == [] and second.unchecked == 50  # that one is past the cap
    assert _compiled.cache_info().misses == misses  # and nothing was compiled again
