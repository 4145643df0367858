"""When an import builds the vector indexes after, and how much memory a build asks for."""

from __future__ import annotations

from server.service.bulk_indexes import MIN_DEFERRED_TURNS, build_after
from server.store.embedding_model import build_memory_mb


def test_a_large_import_into_an_empty_or_smaller_store_builds_after() -> None:
    assert build_after(MIN_DEFERRED_TURNS, 0)
    assert build_after(20_000, 0)
    assert build_after(20_000, 19_999)


def test_a_small_import_or_one_into_a_larger_store_grows_the_indexes() -> None:
    assert not build_after(MIN_DEFERRED_TURNS - 1, 0)
    assert not build_after(5_000, 5_001)
    assert not build_after(20_000, 20_000)  # an export imported again into the store it filled
    assert not build_after(0, 0)


def test_build_memory_grows_with_the_rows_between_64_mb_and_1_gb() -> None:
    assert build_memory_mb(0, 0) == 64
    assert build_memory_mb(10_000, 384) == 64
    assert 64 < build_memory_mb(80_000, 384) < 1024
    assert build_memory_mb(80_000, 384) < build_memory_mb(120_000, 384)
    assert build_memory_mb(80_000, 384) < build_memory_mb(80_000, 1024)
    assert build_memory_mb(5_000_000, 384) == 1024
