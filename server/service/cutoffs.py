"""Default similarity cut-offs, per embedding model, measured rather than guessed.

A cosine similarity means different things under different models: the bundled
all-MiniLM-L6-v2 scores a question against the memory that answers it anywhere from about 0.2
to 0.8, and a stronger model spreads the same pairs differently. So the defaults that compare
similarities (semantic search's `min_similarity`, the prompt recall hook, find_duplicates)
come from this table, keyed by the model the vectors were made with, and each row is read off
`bench/similarity_calibration.py` for that model (the prompt recall hook's two from
`bench/recall_words.py`; the figures are in docs/benchmarks-history.md).
A model adapted by `claude-memory adapt` has no row: its cut-offs are the base model's carried
over by `carried_over`, saved in its manifest. An explicit value (a tool argument, a request
field, `CLAUDE_MEMORY_RECALL_THRESHOLD`) always wins.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields

from server.core.config import DEFAULT_EMBEDDING_MODEL
from server.service.embeddings import canonical_model_name


@dataclass(frozen=True, slots=True)
class SimilarityCutoffs:
    """What each comparison keeps, at or above."""

    semantic: float  # semantic search: cuts off what is unrelated, ranking orders the rest
    # Prompt recall hook (injected unasked on every prompt, so precision first): a hit this
    # close counts on similarity alone; one between `recall_with_words` and this must also
    # hold a share of the prompt's weighted words, the more the less similar it is
    # (server/recall/cutoff.words_needed). Both read off bench/recall_words.py, which weighs
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


def cutoffs_for(model: str, carried: Mapping[str, float] | None = None) -> SimilarityCutoffs:
    """The measured cut-offs of `model`, or the bundled model's when it has none; `carried`:
    the cut-offs an adapted model's manifest holds (`carried_over`), which win."""
    if carried:
        known = {f.name for f in fields(SimilarityCutoffs)}
        if known <= carried.keys():
            return SimilarityCutoffs(**{name: float(carried[name]) for name in known})
    return MEASURED.get(canonical_model_name(model), UNMEASURED)


def carried_over(
    cutoffs: SimilarityCutoffs, before: Sequence[float], after: Sequence[float]
) -> dict[str, float]:
    """Each cut-off moved to where it keeps the same share of the same text pairs.

    A model adapted to one user's texts draws all of them closer together, so a cut-off
    measured for the model it came from lets far more through (the prompt hook injected into an
    unrelated project 3 to 20 times as often). `before` and `after` are the similarities of the
    same pairs of the store's texts (most of them unrelated) under the old and the new model: a
    cut-off that the old model's similarities reach in a share q of pairs moves to the new
    model's similarity at that same share, so "what is as rare as 0.55 was" stays the rule.
    """
    if not before or not after:
        return asdict(cutoffs)
    old, new = sorted(before), sorted(after)
    carried: dict[str, float] = {}
    for name, value in asdict(cutoffs).items():
        share_below = bisect_left(old, value) / len(old)
        if share_below >= 1.0:  # no pair reached it: none may after
            carried[name] = round(max(value, new[-1]), 4)
        else:
            carried[name] = round(new[int(share_below * len(new))], 4)
    return carried
