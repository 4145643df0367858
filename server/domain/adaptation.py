"""Training pairs for adapting the embedding model to a user's own language: the rules.

Nobody labels anything: what the store already holds says which texts belong together.
- a turn and the turn that answered it (a prompt and its reply; in a dialogue, one speaker
  and the next), consecutive in one session, spoken by different roles;
- a statement and the text it was said in (a memory that states several things:
  server/domain/statements.py);
- a title and its body (a note or document whose first line is a heading);
- a correction and what it corrected (a memory that supersedes another).

Each pair is (anchor, positive); in training every other pair's positive in the batch is a
negative (sentence-transformers' MultipleNegativesRankingLoss). Texts are cut to what the model
reads in training (`MAX_PAIR_TEXT_CHARS`); pairs repeat nowhere, and a sample of at most
`max_pairs` is drawn with a fixed seed, so the same store gives the same training set.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise

from server.domain.statements import unit_spans

# The model is trained on inputs of at most 128 word pieces (about 500 characters of prose);
# longer texts are cut here, before tokenising, to keep tokenising cheap.
MAX_PAIR_TEXT_CHARS = 1_000
MIN_PAIR_TEXT_CHARS = 12  # "ok", "thanks!" state nothing to learn from
MIN_TITLE_CHARS = 4  # a title may be short: "Deploys"
STATEMENTS_PER_MEMORY = 3  # a long handbook chunk must not outweigh everything else
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")

PAIR_KINDS = ("reply", "statement", "title", "correction")


@dataclass(frozen=True, slots=True)
class AdaptOptions:
    epochs: int = 3
    rate: float = 1e-4
    batch_size: int = 32
    max_pairs: int = 1_000  # bounds the training time whatever the store's size
    min_pairs: int = 64
    freeze_layers: int = 0  # the token embeddings and this many lower layers stay as they are
    seed: int = 0


@dataclass(frozen=True, slots=True)
class SourceText:
    """A stored memory as the pair rules read it (server/store/adaptation.py)."""

    id: int
    content: str
    kind: str
    role: str | None
    session_id: str | None
    agent_id: str
    supersedes_content: str | None = None  # the text this memory corrected, if any


@dataclass(frozen=True, slots=True)
class Pair:
    anchor: str
    positive: str
    kind: str  # one of PAIR_KINDS


def _cut(text: str) -> str:
    return text.strip()[:MAX_PAIR_TEXT_CHARS]


def _usable(text: str) -> bool:
    return len(text.strip()) >= MIN_PAIR_TEXT_CHARS


def reply_pairs(texts: Sequence[SourceText]) -> list[Pair]:
    """Consecutive raw turns of one session (and sub-agent) by different speakers; `texts`
    in conversation order. Turns without a role (an imported dialogue) pair with the next."""
    pairs = []
    for before, after in pairwise(texts):
        if before.kind != "raw" or after.kind != "raw" or not before.session_id:
            continue
        if (before.session_id, before.agent_id) != (after.session_id, after.agent_id):
            continue
        if before.role is not None and before.role == after.role:
            continue
        if _usable(before.content) and _usable(after.content):
            pairs.append(Pair(_cut(before.content), _cut(after.content), "reply"))
    return pairs


def statement_pairs(text: SourceText) -> list[Pair]:
    """A few of the statements of a memory that states several things, each with the memory."""
    spans = unit_spans(text.content)
    if not spans:
        return []
    step = max(1, len(spans) // STATEMENTS_PER_MEMORY)
    chosen = spans[::step][:STATEMENTS_PER_MEMORY]
    whole = _cut(text.content)
    return [Pair(text.content[s.start : s.end], whole, "statement") for s in chosen]


def title_pair(text: SourceText) -> Pair | None:
    """A memory whose first line is a markdown heading: the heading and the rest."""
    first, _, rest = text.content.strip().partition("\n")
    heading = _HEADING.match(first)
    if heading is None or len(heading.group(1)) < MIN_TITLE_CHARS or not _usable(rest):
        return None
    return Pair(heading.group(1), _cut(rest), "title")


def correction_pair(text: SourceText) -> Pair | None:
    if text.supersedes_content is None:
        return None
    if not (_usable(text.content) and _usable(text.supersedes_content)):
        return None
    return Pair(_cut(text.content), _cut(text.supersedes_content), "correction")


def training_pairs(texts: Sequence[SourceText], max_pairs: int, seed: int = 0) -> list[Pair]:
    """Every pair the store's texts give (`texts` in conversation order: by session, sub-agent,
    time), once each, shuffled; at most `max_pairs`, sampled with `seed`."""
    found: list[Pair] = list(reply_pairs(texts))
    for text in texts:
        found.extend(statement_pairs(text))
        found.extend(p for p in (title_pair(text), correction_pair(text)) if p is not None)
    pairs = _unique(found)
    random.Random(seed).shuffle(pairs)
    return pairs[:max_pairs]


def _unique(pairs: Iterable[Pair]) -> list[Pair]:
    seen: set[tuple[str, str]] = set()
    kept = []
    for pair in pairs:
        key = (pair.anchor, pair.positive)
        if pair.anchor != pair.positive and key not in seen:
            seen.add(key)
            kept.append(pair)
    return kept


def count_by_kind(pairs: Iterable[Pair]) -> dict[str, int]:
    counts = dict.fromkeys(PAIR_KINDS, 0)
    for pair in pairs:
        counts[pair.kind] += 1
    return counts
