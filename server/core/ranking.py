"""Pure ranking arithmetic: term weights, Reciprocal Rank Fusion and the ranking prior.

Kept free of I/O so each rule can be tested and measured on its own (bench/ and tests/unit).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

RRF_K = 60
# A term in more than this share of all memories says little about any one of them (like a
# stop word); it is dropped from keyword queries unless every term is that common.
MAX_TERM_DOCUMENT_SHARE = 0.25


def idf(total_documents: int, document_frequency: int) -> float:
    """BM25's inverse document frequency: rare terms weigh more, never below zero."""
    n, df = max(total_documents, 1), max(document_frequency, 0)
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def term_weights(
    frequencies: Mapping[str, int], total_documents: int
) -> tuple[list[str], list[float]]:
    """The terms worth searching for, with their IDF weights; terms no memory has are dropped."""
    present = {term: df for term, df in frequencies.items() if df > 0}
    if not present:
        return [], []
    limit = max(1.0, MAX_TERM_DOCUMENT_SHARE * total_documents)
    useful = {term: df for term, df in present.items() if df <= limit}
    if not useful:
        rarest = min(present.values())
        useful = {term: df for term, df in present.items() if df == rarest}
    terms = sorted(useful)
    return terms, [idf(total_documents, useful[term]) for term in terms]


def seed_terms(frequencies: Mapping[str, int], row_budget: int) -> list[str]:
    """The rarest terms whose matches, counted together, stay within `row_budget` rows.

    Only memories holding a seed term become keyword candidates; every term still scores
    them. A memory holding none of the seeds has only common terms, so it scores low; reading
    the tens of thousands of rows a common term matches costs most of a query's time at
    100,000 memories. The rarest term is always a seed, and all terms are when they fit.
    """
    seeds: list[str] = []
    rows = 0
    for term in sorted(frequencies, key=lambda t: (frequencies[t], t)):
        if seeds and rows + frequencies[term] > row_budget:
            break
        seeds.append(term)
        rows += frequencies[term]
    return sorted(seeds)


def reciprocal_rank_fusion(
    ranked_lists: Mapping[str, Sequence[int]], weights: Mapping[str, float], k: int = RRF_K
) -> dict[int, float]:
    """Fuse ranked id lists: each list adds weight / (k + rank) for every id it contains."""
    fused: dict[int, float] = {}
    for name, ids in ranked_lists.items():
        weight = weights.get(name, 0.0)
        if weight <= 0:
            continue
        for rank, memory_id in enumerate(ids, start=1):
            fused[memory_id] = fused.get(memory_id, 0.0) + weight / (k + rank)
    return fused


@dataclass(frozen=True, slots=True)
class RankingPrior:
    """How kind and age scale a hit's score: score = base * kind weight * recency factor.

    The recency factor falls from 1 (now) towards 1 - recency_weight, halving its distance
    every `half_life_days`, so an old memory loses at most `recency_weight` of its score.
    """

    kind_weights: Mapping[str, float] = field(default_factory=dict)
    recency_weight: float = 0.0
    half_life_days: float = 90.0

    def factor(self, kind: str, created_at: datetime, now: datetime) -> float:
        kind_weight = self.kind_weights.get(kind, 1.0)
        if self.recency_weight <= 0 or self.half_life_days <= 0:
            return kind_weight
        age_days = max((now - created_at).total_seconds() / 86_400.0, 0.0)
        fresh = 0.5 ** (age_days / self.half_life_days)
        return float(kind_weight * (1.0 - self.recency_weight + self.recency_weight * fresh))


NO_PRIOR = RankingPrior()


def parse_kind_weights(text: str) -> dict[str, float]:
    """Read `raw=0.9,distilled=1.1` into a dict; raises ValueError on a malformed entry."""
    weights: dict[str, float] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        kind, sep, value = item.partition("=")
        if not sep or not kind.strip():
            raise ValueError(f"expected kind=weight, got {item.strip()!r}")
        weight = float(value)
        if not 0.0 <= weight <= 10.0:
            raise ValueError(f"weight for {kind.strip()} must be between 0 and 10")
        weights[kind.strip()] = weight
    return weights
