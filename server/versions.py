"""Versions of a fact in search results: the current one first, or the one a question looks back to.

A memory that another live memory supersedes (server/supersessions.py) is an older version of a
fact. Search keeps both in the list, so the agent sees the history, and orders them by what the
question asks:

- about the present (the default): the successor is lifted to the superseded hit's place and
  the superseded one follows it; a successor that did not make the list is pulled in.
- about the past ("used to", "previously", "back in", "before we switched", "what was it
  called"): the version before the current one is lifted above it, pulled in when missing;
  "originally", "at first", "initially" go back to the first version. A plain "before" ("what
  runs before the deploy?") is about order, not time, and reads as the present.

Scores are moved with the hits (the lifted hit takes the score of the place it takes, the one it
passes keeps a hair less), so the list stays ordered by score. `version_note` says why.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Literal

from server.models import SearchHit

Tense = Literal["present", "past", "first"]

_FIRST = re.compile(
    r"\b(?:originally|original|at first|initially|in the beginning|first version)\b", re.I
)
_CHANGE_VERB = r"(?:changed|switched|moved|migrated|renamed|bumped|upgraded|replaced|dropped|cut)"
_PAST = re.compile(
    r"\b(?:used to|previously|formerly|back in|back when|at the time|in the past|originally"
    r"|was it called|were we using|did we use|did it use|old name|former"
    rf"|before (?:we |it |they |you |i )?{_CHANGE_VERB}"
    r"|before (?:the|that|this) (?:change|switch|move|migration|rename|upgrade|update)"
    r"|before (?:that|then))\b",
    re.I,
)
PASSED_BY = 0.999  # the hit a lifted version passes keeps this share of its score
MAX_PULLED = 5  # versions pulled into one result list, at most


def question_tense(query: str) -> Tense:
    """Whether a question asks about the present, a past state, or the first state of a fact."""
    if _FIRST.search(query):
        return "first"
    if _PAST.search(query):
        return "past"
    return "present"


def wanted_ids(hits: Sequence[SearchHit], tense: Tense) -> list[int]:
    """Versions missing from the list that the question would want: successors or predecessors."""
    present = {hit.id for hit in hits}
    wanted: list[int] = []
    for hit in hits:
        other = hit.superseded_by if tense == "present" else hit.supersedes
        if other is not None and other not in present and other not in wanted:
            wanted.append(other)
    return wanted[:MAX_PULLED]


def order_versions(
    hits: Sequence[SearchHit], pulled: Sequence[SearchHit], tense: Tense
) -> list[SearchHit]:
    """The hits (and pulled versions) ordered so the version the question wants comes first."""
    ranked = list(hits)
    by_id = {hit.id: hit for hit in ranked}
    for extra in pulled:
        if extra.id not in by_id:
            by_id[extra.id] = extra
    for _ in range(len(by_id)):  # each pass settles one more link of a chain
        moved = False
        for position, hit in enumerate(ranked):
            target_id = hit.superseded_by if tense == "present" else hit.supersedes
            target = by_id.get(target_id) if target_id is not None else None
            if target is None or not _should_lift(hit, tense):
                continue
            index = next((i for i, h in enumerate(ranked) if h.id == target.id), None)
            if index is not None and index < position:
                continue
            note = (
                f"current version of #{hit.id}"
                if tense == "present"
                else f"the version before #{hit.id}"
            )
            lifted = replace(target, score=hit.score, version_note=target.version_note or note)
            passed = replace(hit, score=round(hit.score * PASSED_BY, 6))
            if index is not None:
                ranked.pop(index)
            ranked[position] = passed
            ranked.insert(position, lifted)
            by_id[lifted.id] = lifted
            by_id[passed.id] = passed
            moved = True
            break
        if not moved:
            break
    return ranked


def _should_lift(hit: SearchHit, tense: Tense) -> bool:
    """Present: a superseded hit hands its place to its successor. Past: the current version
    hands its place to the one before it, once. First: every version to the one before it."""
    if tense == "present":
        return hit.superseded_by is not None
    if tense == "past":
        return hit.superseded_by is None and hit.supersedes is not None
    return hit.supersedes is not None
