"""Default similarity cut-offs, per embedding model, measured rather than guessed.

A cosine similarity means different things under different models: the bundled
all-MiniLM-L6-v2 scores a question against the memory that answers it anywhere from about 0.2
to 0.8, and a stronger model spreads the same pairs differently. So the defaults that compare
similarities (semantic search's `min_similarity`, the prompt recall hook, find_duplicates)
come from this table, keyed by the model the vectors were made with, and each row is read off
`bench/similarity_calibration.py` for that model (the prompt recall hook's two from
`bench/recall_words.py`; the figures are in docs/BENCHMARKS.md).
An explicit value (a tool argument, a request field, `CLAUDE_MEMORY_RECALL_THRESHOLD`) always wins.
"""

from __future__ import annotations

from dataclasses import dataclass

from server.core.config import DEFAULT_EMBEDDING_MODEL
from server.service.embeddings import canonical_model_name


@dataclass(frozen=True, slots=True)
class SimilarityCutoffs:
    """What each comparison keeps, at or above."""

    semantic: float  # semantic search: cuts off what is unrelated, ranking orders the rest
    # Prompt recall hook (injected unasked on every prompt, so precision first): a hit this
    # close counts on similarity alone; one between `recall_with_words` and this must also
    # hold a share of the prompt's weighted words, the more the less similar it is
    # (server/ingest/recall.words_needed). Both read off bench/recall_words.py, which weighs
    # answers injected against injections when nothing in scope answers.
    recall: float
    recall_with_words: float
    duplicates: float  # find_duplicates: the same fact worded twice


MEASURED: dict[str, SimilarityCutoffs] = {
    DEFAULT_EMBEDDING_MODEL: SimilarityCutoffs(
        semantic=0.15, recall=0.55, recall_with_words=0.35, duplicates=0.8
    ),
}

# A model nobody has measured yet: the bundled model's row, the only one with figures.
UNMEASURED = MEASURED[DEFAULT_EMBEDDING_MODEL]


def cutoffs_for(model: str) -> SimilarityCutoffs:
    """The measured cut-offs of `model`, or the bundled model's when it has none."""
    return MEASURED.get(canonical_model_name(model), UNMEASURED)
