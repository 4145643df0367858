"""Pure ranking arithmetic: term weights, score fusion and the ranking prior.

Kept free of I/O so each rule can be tested and measured on its own (bench/ and tests/unit).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

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


def score_fusion(
    scored_lists: Mapping[str, Mapping[int, float]], weights: Mapping[str, float]
) -> dict[int, float]:
    """Fuse scored lists: each list adds weight x (the id's score / the list's best score).

    Cosine similarity and BM25 are on different scales; as a share of its list's best, each
    counts from 0 to 1. Unlike Reciprocal Rank Fusion, the gaps between scores count: a hit
    first in both lists by a wide margin stays first, where rank fusion gave it barely more
    than hits third and sixth in each (1/61 + 1/61 against 1/63 + 1/66), so small nudges (the
    kind weight of a note over a raw turn) decided the order. Negative scores count as 0.
    """
    fused: dict[int, float] = {}
    for name, scores in scored_lists.items():
        weight = weights.get(name, 0.0)
        best = max(scores.values(), default=0.0)
        if weight <= 0 or best <= 0:
            continue
        for memory_id, score in scores.items():
            fused[memory_id] = fused.get(memory_id, 0.0) + weight * max(score, 0.0) / best
    return fused


# A sentence ending in a question mark: after a word (or its closing quote or bracket), before
# a space or the end, so code ("a ? b : c", "user?.id") and URLs ("?page=2") do not ask.
_QUESTION = re.compile(r"\w[\"')\]]?\?(?:\s|$)")


def asks(kind: str, content: str, role: str | None = None) -> bool:
    """A conversation turn that asks for the answer; it rarely holds it.

    Any turn that ends in a question asks. In an agent session the user also asks in the
    middle of a turn ("which Redis does staging run? I need it for the ticket."), and the
    answer is in the agent's reply: a user's turn with a question anywhere asks too.
    """
    if kind != "raw":
        return False
    text = content.rstrip()
    return text.endswith("?") or (role == "user" and _QUESTION.search(text) is not None)


# A question for a cause: "why did the pods restart?", "what caused the spike?".
_ASKS_WHY = re.compile(
    r"\bwhy\b|\bwhat\s+(?:caused|causes|was causing|made)\b|\broot cause\b", re.I
)
# English connectives that state a cause or a purpose. The turn that says why ("the cache grows
# because nothing prunes it") is often ranked below the turn that reports the symptom, which
# repeats the question's words.
_GIVES_REASON = re.compile(
    r"\b(?:because|caused|causes|due to|owing to|as a result|result of|resulted in|results in"
    r"|led to|leads to|leading to|the reason|reason is|root cause|is why|therefore|hence|thus"
    r"|comes from|came from|stems from|so that)\b",
    re.I,
)


def asks_why(query: str) -> bool:
    """Whether a question asks for a cause or a reason."""
    return _ASKS_WHY.search(query) is not None


def gives_reason(content: str) -> bool:
    """Whether a memory states a cause or a purpose in so many words."""
    return _GIVES_REASON.search(content) is not None


@dataclass(frozen=True, slots=True)
class RankingPrior:
    """How kind, age and asking scale a hit's score: score = base * kind weight * recency
    factor (* question weight for a turn that asks, see `asks`).

    The recency factor falls from 1 (now) towards 1 - recency_weight, halving its distance
    every `half_life_days`, so an old memory loses at most `recency_weight` of its score.
    """

    kind_weights: Mapping[str, float] = field(default_factory=dict)
    recency_weight: float = 0.0
    half_life_days: float = 90.0
    question_weight: float = 1.0

    def factor(
        self, kind: str, created_at: datetime, now: datetime, *, asking: bool = False
    ) -> float:
        kind_weight = self.kind_weights.get(kind, 1.0) * (self.question_weight if asking else 1.0)
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
