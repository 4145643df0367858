"""Stale statements inside a result list: a newer hit that changes a line an older hit states.

Supersession links (server/service/supersessions.py) join whole memories, and a memory that states a
dozen facts (a handbook note, a report of three changes) is linked only where it names what it
replaces. So a question about the present can still get, first, an old handbook whose line
about the Node version was changed since by a short turn further down the list.

This module compares the hits of one result list statement by statement: each hit is split
into statements (lines, list items, sentences), and a statement of an older hit is stale when
a statement of a newer hit of the same project changes its value by the same rules that make
links (server/domain/supersession_rules.py). Only statements that share a word with the question are
compared, so the comparison is about what was asked, and only pairs the rules accept are
handed back; the caller checks them against the statements' similarity (the rules' gates) and
moves the newer hit above the older one. Nothing is stored: the list is ordered, not the data.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from server.core.models.search import SearchHit
from server.domain.statements import statement_spans
from server.domain.supersession_rules import Statement, read_statement, replacement_reason, stem
from server.domain.versions import lift_newer

MAX_STATEMENT_CHARS = 300  # a longer sentence is cut: the rules read values near its start
MAX_STATEMENTS = 40  # per hit; a longer memory is read to its fortieth statement
MIN_WORD_CHARS = 3
# Only the first places are checked for stale lines: that is where a stale hit misleads, and it
# keeps the comparison to a few dozen statement pairs a query.
OLDER_PLACES = 3
# The rules' gates are cosine similarities; before the statements are embedded, a candidate is
# read as if it passed every gate, and the caller checks the real similarity afterwards.
UNGATED = 1.0

_PIECE = re.compile(r"[a-z0-9]+")
_COMMON_WORDS = (
    "the and for with from that this what which when where how our your are was were does "
    "did have has had can could should would will who whom whose into onto over under about "
    "still now then than just also any all each some most more much many"
)
_COMMON = frozenset(_COMMON_WORDS.split())


@dataclass(frozen=True, slots=True)
class StaleStatement:
    """`newer_id`'s statement changes the value `older_id`'s statement gives."""

    older_id: int
    newer_id: int
    older_text: str
    newer_text: str


# The same memories come back query after query: their statements and words are read once.
CACHED_TEXTS = 4096


@lru_cache(maxsize=CACHED_TEXTS)
def statements(text: str) -> tuple[str, ...]:
    """The text's lines and sentences, each cut to MAX_STATEMENT_CHARS; headings dropped."""
    return tuple(
        text[span.start : span.end][:MAX_STATEMENT_CHARS]
        for span in statement_spans(text)[:MAX_STATEMENTS]
    )


@lru_cache(maxsize=CACHED_TEXTS * 4)
def topic_words(text: str) -> frozenset[str]:
    """Lower-case pieces of words and identifiers ("node.js" is node and js), lightly stemmed."""
    return frozenset(
        stem(piece)
        for piece in _PIECE.findall(text.lower())
        if len(piece) >= MIN_WORD_CHARS and piece not in _COMMON and not piece.isdigit()
    )


def stale_candidates(query: str, hits: Sequence[SearchHit]) -> list[StaleStatement]:
    """Pairs of statements where a newer hit changes an older hit's value, on the question's
    topic, by the rules alone (similarity gates not yet applied); at most one per hit pair."""
    asked = topic_words(query)
    read: dict[int, list[tuple[str, Statement]]] = {}
    for hit in hits:
        # In a search of one project its name says nothing of the topic ("tidewater" in
        # `tidewater/transforms/` and in "the minimum Python version for tidewater").
        topic = asked - topic_words(hit.project)
        overlaps = [(len(topic_words(text) & topic), text) for text in statements(hit.content)]
        best = max((count for count, _ in overlaps), default=0)
        # Only the statements closest to the question: a hit's other lines are not what was
        # asked, whatever changed in them.
        read[hit.id] = [
            (text, _statement(text)) for count, text in overlaps if count and count == best
        ]
    found: list[StaleStatement] = []
    for older in hits[:OLDER_PLACES]:
        for newer in hits:
            if not _may_replace(newer, older):
                continue
            pair = _first_change(read[newer.id], read[older.id])
            if pair is not None:
                found.append(StaleStatement(older.id, newer.id, pair[1], pair[0]))
    return found


def confirmed(candidate: StaleStatement, similarity: float) -> bool:
    """Whether the candidate holds at the statements' real similarity (the rules' gates)."""
    newer = _statement(candidate.newer_text)
    older = _statement(candidate.older_text)
    return replacement_reason(newer, older, similarity) is not None


def newer_first(hits: Sequence[SearchHit], stale: Sequence[StaleStatement]) -> list[SearchHit]:
    """The hits with each newer hit lifted to the place of the first older hit whose statement
    it changes; the older one follows it (both stay, so the agent sees the history)."""
    return lift_newer(
        hits, [(p.older_id, p.newer_id, f"states a newer value than #{p.older_id}") for p in stale]
    )


def _may_replace(newer: SearchHit, older: SearchHit) -> bool:
    """Same project, stored later, and not already a version of it by a link."""
    return (
        newer.id != older.id
        and newer.project == older.project
        and newer.created_at > older.created_at
        and newer.supersedes != older.id
        and older.superseded_by is None
    )


def _first_change(
    newer: list[tuple[str, Statement]], older: list[tuple[str, Statement]]
) -> tuple[str, str] | None:
    for new_text, new_statement in newer:
        for old_text, old_statement in older:
            if replacement_reason(new_statement, old_statement, UNGATED) is not None:
                return new_text, old_text
    return None


@lru_cache(maxsize=CACHED_TEXTS * 4)
def _statement(text: str) -> Statement:
    return read_statement(text)
