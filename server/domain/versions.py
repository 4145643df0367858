"""Versions of a fact in search results: the current one first, or the one a question looks back to.

A memory that another live memory supersedes (server/service/supersessions.py) is an older version
of a fact. Search keeps both in the list, so the agent sees the history, and orders them by what the
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
from datetime import datetime, timedelta
from typing import Literal

from server.core.models.search import SearchHit
from server.domain.query_dates import PAST_EVENT_CLAUSE
from server.domain.statements import statement_spans

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
# In a question that looks back (a past-tense auxiliary), "originally", "the very first loop"
# and "when we first added it" ask for the first state ("how long do we keep the original
# response?" does not, nor does "the first weekend of August": a plain "the first X" is as
# often a time or a count), and "the old address" for an earlier one; asked in
# the present they are about order or a name ("what is the first step?", "is the old server
# still up?"). "before we raised it" looks back by its own verb.
_PAST_AUXILIARY = re.compile(r"\b(?:was|were|did|had)\b", re.I)
_FIRST_OF_PAST = re.compile(
    r"\bthe\s+very\s+first\s+[a-z]|\b(?:we|i|they|you|it)\s+first\s+[a-z]+ed\b", re.I
)
_THE_OLD = re.compile(r"\bthe\s+old\s+[a-z]", re.I)
_BEFORE_PAST_EVENT = re.compile(rf"\bbefore\s+{PAST_EVENT_CLAUSE}", re.I)
# Past-tense words that leave a question's time open ("what did we decide?" is often about now,
# "how large was the pool when it failed?" is not): enough to hold back weaker evidence.
_PAST_WORDS = re.compile(r"\b(?:was|were|did|had|first)\b", re.I)
# A linked version takes the place of a hit that states MANY_FACTS statements or more only when
# its similarity to the question is at least LINK_MIN_SHARE of the hit's. Where lifting the
# successor found the answer (both coding corpora) the share was 0.87 or more; where it buried
# the answer under a successor about another fact of the same memory, 0.71 or less; the
# shared fixtures' correction of a two-line plan is lifted at a lower share, and must be
# (docs/benchmarks-history.md, session 20).
LINK_MIN_SHARE = 0.8
MANY_FACTS = 3
PASSED_BY = 0.999  # the hit a lifted version passes keeps this share of its score
MAX_PULLED = 5  # versions pulled into one result list, at most


def question_tense(query: str) -> Tense:
    """Whether a question asks about the present, a past state, or the first state of a fact."""
    looks_back = _PAST_AUXILIARY.search(query) is not None
    if looks_back and (_FIRST.search(query) or _FIRST_OF_PAST.search(query)):
        return "first"
    if _PAST.search(query) or _BEFORE_PAST_EVENT.search(query):
        return "past"
    if looks_back and _THE_OLD.search(query):
        return "past"
    return "present"


def plainly_present(query: str) -> bool:
    """A question about the present with no past-tense word in it at all."""
    return question_tense(query) == "present" and not _PAST_WORDS.search(query)


def wanted_ids(hits: Sequence[SearchHit], tense: Tense | None) -> list[int]:
    """Versions missing from the list that the question would want: successors or predecessors
    (both, for a question asked as of a moment: tense None)."""
    present = {hit.id for hit in hits}
    wanted: list[int] = []
    for hit in hits:
        if tense is None:
            others = [hit.supersedes, hit.superseded_by]
        else:
            others = [hit.superseded_by if tense == "present" else hit.supersedes]
        for other in others:
            if other is not None and other not in present and other not in wanted:
                wanted.append(other)
    return wanted[:MAX_PULLED]


def order_as_of(
    hits: Sequence[SearchHit], pulled: Sequence[SearchHit], at: datetime
) -> list[SearchHit]:
    """The hits with, for each fact, the version current at `at` in the place of its best-ranked
    version ("before the security review": the version that was current then).

    A version is current at `at` when it was stored by then and its successor was not; when
    every known version came later, the first one is.
    """
    ranked = list(hits)
    by_id = {hit.id: hit for hit in [*hits, *pulled]}
    settled: set[int] = set()
    position = 0
    while position < len(ranked):
        hit = ranked[position]
        chain = _chain(hit, by_id)
        if hit.id in settled or len(chain) < 2:
            position += 1
            continue
        settled.update(v.id for v in chain)
        target = _current_at(chain, at)
        index = next((i for i, h in enumerate(ranked) if h.id == target.id), None)
        if target.id != hit.id and (index is None or index > position):
            note = f"the version current on {at:%Y-%m-%d}"
            lifted = replace(target, score=hit.score, version_note=target.version_note or note)
            if index is not None:
                ranked.pop(index)
            ranked[position] = replace(hit, score=round(hit.score * PASSED_BY, 6))
            ranked.insert(position, lifted)
        position += 1
    return ranked


def _chain(hit: SearchHit, by_id: dict[int, SearchHit]) -> list[SearchHit]:
    """The known versions linked to `hit`, oldest first."""
    found = {hit.id: hit}
    frontier = [hit]
    while frontier:
        current = frontier.pop()
        for other_id in (current.supersedes, current.superseded_by):
            other = by_id.get(other_id) if other_id is not None else None
            if other is not None and other.id not in found:
                found[other.id] = other
                frontier.append(other)
    return sorted(found.values(), key=lambda h: (h.created_at, h.id))


def _current_at(chain: Sequence[SearchHit], at: datetime) -> SearchHit:
    stored = [version for version in chain if version.created_at <= at]
    return stored[-1] if stored else chain[0]


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
            if target is None or not _should_lift(hit, tense) or not _as_close(target, hit):
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


def _as_close(version: SearchHit, hit: SearchHit) -> bool:
    """Whether `version` may take the place of `hit`: always when `hit` states one or two
    things (the link is about all of it: a correction is often shorter and less like the
    question than the plan it corrects), else only when `version` is about the question
    nearly as much. A link joins whole memories, and one that states many facts is replaced
    in one of them: "raise the worker count to 6" supersedes a report of three changes, and a
    question about the report's pool size is not asked of that turn. Unknown similarities
    (keyword search) trust the link."""
    if version.similarity is None or hit.similarity is None or hit.similarity <= 0:
        return True
    if len(statement_spans(hit.content)) < MANY_FACTS:
        return True
    return version.similarity >= LINK_MIN_SHARE * hit.similarity


def lift_newer(
    hits: Sequence[SearchHit], pairs: Sequence[tuple[int, int, str]], *, again: bool = True
) -> list[SearchHit]:
    """The hits with each newer hit of a pair (older id, newer id, note) lifted to the place of
    the first older hit it is paired with; the older one follows it (both stay, so the agent
    sees the history), and the lifted hit says why in `version_note`. The pairs may also run
    the other way (newer id, older id), to lift the older for a question about the past. With
    `again`, a lifted hit may be passed in turn by one it is paired with (the first version
    of a chain); without, it keeps the place it took (one step back)."""
    ranked = list(hits)
    newer_of: dict[int, list[tuple[int, str]]] = {}
    for older_id, newer_id, note in pairs:
        newer_of.setdefault(older_id, []).append((newer_id, note))
    lifted: set[int] = set()
    position = 0
    for _ in range(len(ranked) * 2):  # a lifted hit may itself be outdated: a bounded walk
        if position >= len(ranked):
            break
        hit = ranked[position]
        places = {h.id: i for i, h in enumerate(ranked)}
        later = sorted(
            (places[newer_id], note)
            for newer_id, note in newer_of.get(hit.id, [])
            if newer_id not in lifted and places.get(newer_id, -1) > position
        )
        if not later:
            position += 1
            continue
        index, note = later[0]
        newer = ranked.pop(index)
        ranked[position] = replace(hit, score=round(hit.score * PASSED_BY, 6))
        ranked.insert(
            position, replace(newer, score=hit.score, version_note=newer.version_note or note)
        )
        lifted.add(newer.id)
        if not again:
            position += 1
    return ranked


def near_copy_candidates(hits: Sequence[SearchHit], places: int) -> list[tuple[int, int, int]]:
    """(hit, successor, replaced) triples worth checking: a hit in the first `places` that no
    link retires, ranked above a newer hit of the same project that replaced another memory.
    If the hit restates what was replaced (the request a plan repeated, a handbook line
    saying the old value), the replacement is newer news about it too."""
    found: list[tuple[int, int, int]] = []
    for position, hit in enumerate(hits[:places]):
        if hit.superseded_by is not None or not hit.project:
            continue
        for successor in hits[position + 1 :]:
            replaced = successor.supersedes
            if (
                replaced is not None
                and replaced != hit.id
                and successor.project == hit.project
                and successor.created_at > hit.created_at
            ):
                found.append((hit.id, successor.id, replaced))
    return found


# A statement of a value: a number (versions, sizes, counts, times) or a code span.
_STATES_A_VALUE = re.compile(r"\d|`")


def same_subject_candidates(
    hits: Sequence[SearchHit], *, places: int, depth: int, min_share: float, min_gap: timedelta
) -> list[tuple[int, int]]:
    """(older hit, newer hit) pairs that may say the same thing at two times: the older in the
    first `places`, the newer below it within `depth`, of the same project, stored at least
    `min_gap` later, scoring at least `min_share` of the older's score, and both stating a
    value (a number or a code span). The caller keeps the pairs whose stored vectors are close.
    A value stated in a mid-way runbook and stated again, changed, in a later session is the
    case; in a conversation about someone's life (no values) nothing is paired. A user's later
    message in the same session counts however soon it follows (`_user_follow_up`)."""
    pairs: list[tuple[int, int]] = []
    for position, older in enumerate(hits[:places]):
        if not older.project or older.superseded_by is not None:
            continue
        if not _STATES_A_VALUE.search(older.content):
            continue
        for newer in hits[position + 1 : depth]:
            if (
                newer.project == older.project
                and (
                    newer.created_at >= older.created_at + min_gap or _user_follow_up(older, newer)
                )
                and newer.score >= min_share * older.score
                and _STATES_A_VALUE.search(newer.content)
            ):
                pairs.append((older.id, newer.id))
    return pairs


def _user_follow_up(older: SearchHit, newer: SearchHit) -> bool:
    """`newer` is the user's later message in the session of the user's `older` one: a
    decision or a correction made after reading the agent's answer ("no, set it to 45s"),
    which states the current value however soon it follows. Turns of one exchange by two
    speakers are not paired so (a reply restates the explanation above it, measured: outside
    corpus answered@1 -0.03 to -0.09)."""
    return (
        older.role == "user"
        and newer.role == "user"
        and older.session_id is not None
        and newer.session_id == older.session_id
        and newer.created_at > older.created_at
    )


def earlier_subject_candidates(
    hits: Sequence[SearchHit],
    *,
    places: int,
    depth: int,
    min_share: float,
    min_gap: timedelta,
    before: datetime | None = None,
) -> list[tuple[int, int]]:
    """(newer hit, older hit) pairs for a question about an earlier state: the mirror of
    `same_subject_candidates`. The newer hit is in the first `places`, the older below it within
    `depth`, of the same project, stored at least `min_gap` earlier, scoring at least
    `min_share` of the newer's, both stating a value. With `before` (the moment the question
    looks back to: "before the OTA fix"), the newer hit is from then or later and the older
    from before it. Versions known by a link are ordered by it already: a newer hit that
    supersedes another, or an older one superseded, is not paired. The caller keeps the pairs
    whose stored vectors are close."""
    pairs: list[tuple[int, int]] = []
    for position, newer in enumerate(hits[:places]):
        if not newer.project or newer.supersedes is not None:
            continue
        if not _STATES_A_VALUE.search(newer.content):
            continue
        if before is not None and newer.created_at < before:
            continue
        for older in hits[position + 1 : depth]:
            if (
                older.project == newer.project
                and older.superseded_by is None
                and older.created_at + min_gap <= newer.created_at
                and (before is None or older.created_at < before)
                and older.score >= min_share * newer.score
                and _STATES_A_VALUE.search(older.content)
            ):
                pairs.append((newer.id, older.id))
    return pairs
