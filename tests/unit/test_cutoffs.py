"""Default similarity cut-offs follow the embedding model."""

from __future__ import annotations

from server.core.config import DEFAULT_EMBEDDING_MODEL
from server.service.cutoffs import MEASURED, UNMEASURED, cutoffs_for


def test_the_bundled_model_has_measured_cutoffs() -> None:
    cutoffs = cutoffs_for(DEFAULT_EMBEDDING_MODEL)
    assert cutoffs is MEASURED[DEFAULT_EMBEDDING_MODEL]
    # Ranking orders what semantic search keeps; the recall hook injects unasked, so it is
    # stricter; a duplicate is the same fact worded twice, far above both.
    assert 0 < cutoffs.semantic < cutoffs.recall < cutoffs.duplicates < 1


def test_an_alias_of_the_bundled_model_reads_its_row() -> None:
    assert cutoffs_for("sentence-transformers/all-MiniLM-L6-v2") == cutoffs_for(
        DEFAULT_EMBEDDING_MODEL
    )


def test_an_unmeasured_model_falls_back_to_the_bundled_row() -> None:
    assert cutoffs_for("nomic-embed-text") is UNMEASURED
