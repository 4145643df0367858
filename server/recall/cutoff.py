"""Which of prompt recall's hits count: the cut-off rules, each fact in its current version.

A hit counts on its similarity to the prompt at or above the cut-off
(CLAUDE_MEMORY_RECALL_THRESHOLD, by default the one measured for the embedding model,
server/service/cutoffs.py); a little below it, only with enough of the prompt's words
(`words_needed`), unless the prompt's words belong to another project (`asked_elsewhere`).
What recall learned of a memory's use moves its similarity before that test (`learned_order`),
and a fact is told in its current version only (`current_versions`). Beneath the hits that
count, the index lists a next candidate only above a floor of its own (`worth_listing`).

Where the user gives the hook a reranker and a score to trust
(CLAUDE_MEMORY_RERANK_HOOK_MIN_SCORE), the reranker's score replaces these rules whenever it
answers in time (`judged_relevant`): it reads the prompt and each candidate together, which the
bundled model's similarity cannot, and a hit it judges relevant counts however differently
the two are worded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from server.core.models.search import SearchHit

# The cut-off for a prompt that names something no memory mentions ("which Sentry project...?"
# with nothing ever said about Sentry): only a close match is worth injecting then.
UNKNOWN_NAME_THRESHOLD = 0.6
# Words are evidence beside similarity (docs/benchmarks-history.md, "Prompt recall: words weighed
# both ways"): sessions written in another voice than the prompt score lower on the model, not
# on the words, and a near hit holding none of the prompt's words is most often noise. A hit at
# the cut-off counts on similarity alone; below it, down to the model's `recall_with_words`
# (server/service/cutoffs.py), it must also hold a share of the prompt's rarity-weighted words
# that grows as its similarity falls, to this share at that floor.
RECALL_WORDS_AT_FLOOR = 0.7
# A prompt whose weighted words a memory of another project holds by this much more of their
# weight than anything in the session's project (or general knowledge) is about that other
# project: asked in one repository about another's firmware, the prompt's words lend no
# support to this project's near misses, so only hits close on meaning alone count
# (docs/benchmarks-history.md, "session 33: a prompt about another project"). Its date
# phrases are not counted (MemoryService.recall_evidence): "early March" says when, not what.
ELSEWHERE_MARGIN = 0.2
# The index beneath the hits lists a candidate only when it is at least this far of the way
# from the words floor (`recall_with_words`) up to the cut-off, or holds this share of the
# prompt's weighted words: below both, a line is noise (a prompt from an unrelated project, a
# question nothing answers). A share of the way, not a similarity, so the floor moves with
# the model's measured cut-offs. Chosen on the team corpus only: docs/benchmarks-history.md,
# "#67: the index's floor".
INDEX_FLOOR_STEP = 0.25
INDEX_WORDS = 0.25
# When some hit counts (the prompt is about something memory holds), search's first few are
# listed whatever their similarity (down to the words floor the search is read at): at a hard
# floor, a second-ranked answer at 0.399 was left out (docs/benchmarks-history.md, "session 38").
INDEX_TOP_RANKS = 3


def words_needed(
    similarity: float, threshold: float, floor: float, at_floor: float = RECALL_WORDS_AT_FLOOR
) -> float | None:
    """The share of the prompt's weighted words a hit this similar must hold to be injected:
    none at `threshold` or above, rising in a straight line to `at_floor` at `floor`; None
    below `floor`, where no words make a hit count."""
    if similarity >= threshold:
        return 0.0
    if similarity < floor:
        return None
    return at_floor * (threshold - similarity) / (threshold - floor)


def asked_elsewhere(
    words_here: float, words_elsewhere: float, margin: float = ELSEWHERE_MARGIN
) -> bool:
    """Whether the prompt is about another project: the largest share of its weighted words
    one memory of another project holds (`words_elsewhere`) exceeds the largest one of the
    session's project or general knowledge holds (`words_here`) by more than `margin`."""
    return words_elsewhere - words_here > margin


def index_floor(threshold: float, floor: float, step: float = INDEX_FLOOR_STEP) -> float:
    """The similarity at or above which a candidate may be listed in the index: `step` of the
    way from the words `floor` up to the cut-off `threshold` (0.40 for the bundled model)."""
    return floor + step * max(threshold - floor, 0.0)


def worth_listing(
    similarity: float,
    share: float,
    floor: float,
    *,
    rank: int,
    something_counts: bool,
    words: float = INDEX_WORDS,
) -> bool:
    """Whether a candidate below the cut-off is close enough to list in the index: its
    similarity reaches `floor` (`index_floor`), or it holds `words` of the prompt's
    weighted words (a keyword find the model scores low), or it is among search's first
    INDEX_TOP_RANKS (`rank` from 0) for a prompt `something_counts` for."""
    top = something_counts and rank < INDEX_TOP_RANKS
    return top or similarity >= floor or share >= words


def judged_relevant(hit: SearchHit, min_score: float) -> bool:
    """Whether the reranker scored `hit` at `min_score` or above; a hit it did not score
    (past its depth) does not count, as one below every cut-off would not."""
    return hit.rerank_score is not None and hit.rerank_score >= min_score


def learned_order(hits: Sequence[SearchHit], factors: Mapping[int, float]) -> list[SearchHit]:
    """The hits with each one's similarity and score multiplied by what recall learned of it
    (server/service/uses.py: below 1 when it was injected and not used, above when used),
    ordered by the new score; as they were when nothing was learned. A factor can sink a hit
    under the cut-off; it cannot lift one search did not return."""
    if not factors:
        return list(hits)
    moved = [
        replace(
            hit,
            similarity=None if hit.similarity is None else hit.similarity * factors[hit.id],
            score=hit.score * factors[hit.id],
        )
        if hit.id in factors
        else hit
        for hit in hits
    ]
    return sorted(moved, key=lambda hit: -hit.score)


def current_versions(
    hits: Sequence[SearchHit], is_relevant: Callable[[SearchHit], bool]
) -> list[SearchHit]:
    """The relevant hits, each fact in its current version only.

    The version that replaced a relevant hit is relevant with it (search lifted it to that
    hit's place), and a hit whose successor is in the list is left out: the agent is told the
    current fact, not last month's.
    """
    relevant = {hit.id for hit in hits if is_relevant(hit)}
    for hit in hits:
        if hit.id in relevant and hit.superseded_by is not None:
            relevant.add(hit.superseded_by)
    return [
        hit
        for hit in hits
        if hit.id in relevant and (hit.superseded_by is None or hit.superseded_by not in relevant)
    ]
