"""Developer vocabulary: jargon and the plain words for it, so either finds the other.

Developers write "TTL" in one session and ask "how long do we keep cached pages?" in another;
"OOMKilled" in a log, "ran out of memory" in a question. Neither the keyword list (different
words) nor the bundled embedding model (it reads "DLQ" as letters) bridges that. A table of
equivalent forms (server/domain/vocabulary.txt, extended by the user's
CLAUDE_MEMORY_SEARCH_VOCABULARY_FILE) does: a query naming one form of a line also searches for the
others.

Forms match whole words, case-insensitively, a final "s" on the query's word allowed ("SLOs",
"dead letters"). Pure functions; the search service decides how much an added form weighs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

BUILT_IN = Path(__file__).with_name("vocabulary.txt")
_WORD = re.compile(r"[a-z0-9]+(?:[/'][a-z0-9]+)*")
MAX_FORM_WORDS = 6


class VocabularyError(ValueError):
    """A vocabulary file line that is not `form = form, form, ...`."""


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """Groups of equivalent forms, each form kept as its lower-cased words."""

    groups: tuple[tuple[tuple[str, ...], ...], ...] = ()
    # (group's place, form) by the form's first word: a query looks up each of its own words
    # instead of scanning every form of the table (search runs this for every question).
    _by_first_word: dict[str, list[tuple[int, tuple[str, ...]]]] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        by_first_word: dict[str, list[tuple[int, tuple[str, ...]]]] = {}
        for place, group in enumerate(self.groups):
            for form in group:
                by_first_word.setdefault(form[0], []).append((place, form))
        object.__setattr__(self, "_by_first_word", by_first_word)

    def expansions(self, query: str) -> list[str]:
        """The forms of every group the query names that the query does not already hold."""
        words = _words(query)
        named: dict[int, set[tuple[str, ...]]] = {}
        for start, word in enumerate(words):
            # A one-word form may be named in the plural ("SLOs"): look the word up bare too.
            looked_up = (word, word[:-1]) if word.endswith("s") else (word,)
            for key in looked_up:
                for place, form in self._by_first_word.get(key, ()):
                    if _named_at(words, start, form):
                        named.setdefault(place, set()).add(form)
        added: list[str] = []
        for place in sorted(named):
            for form in self.groups[place]:
                text = " ".join(form)
                if form not in named[place] and text not in added:
                    added.append(text)
        return added


def parse_vocabulary(text: str, source: str) -> list[tuple[tuple[str, ...], ...]]:
    """The groups of one file; a malformed line raises VocabularyError naming it."""
    groups: list[tuple[tuple[str, ...], ...]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        head, sep, tail = line.partition("=")
        forms = [_words(part) for part in (head, *tail.split(","))] if sep else []
        if len(forms) < 2 or any(not f or len(f) > MAX_FORM_WORDS for f in forms):
            raise VocabularyError(
                f"{source}, line {number}: expected 'term = equivalent, equivalent, ...'"
                f" (each of 1 to {MAX_FORM_WORDS} words), got {raw.strip()!r}"
            )
        groups.append(tuple(dict.fromkeys(tuple(f) for f in forms)))
    return groups


def load_vocabulary(extra: Path | None = None) -> Vocabulary:
    """The built-in table, joined by the user's file when there is one.

    A user's line that shares a form with a built-in line (or another of theirs) joins it, so
    "TTL = cache lifetime" adds a form to the TTL line instead of starting a second one.
    """
    groups = parse_vocabulary(BUILT_IN.read_text(encoding="utf-8"), str(BUILT_IN))
    if extra is not None:
        try:
            text = extra.read_text(encoding="utf-8")
        except OSError as exc:
            raise VocabularyError(f"cannot read the vocabulary file {extra}: {exc}") from None
        groups.extend(parse_vocabulary(text, str(extra)))
    return Vocabulary(tuple(_merged(groups)))


def _merged(
    groups: Iterable[Sequence[tuple[str, ...]]],
) -> list[tuple[tuple[str, ...], ...]]:
    """Groups that share a form, joined, in the order they first appear."""
    merged: list[list[tuple[str, ...]]] = []
    for group in groups:
        joined = [g for g in merged if set(g) & set(group)]
        target = joined[0] if joined else []
        if not joined:
            merged.append(target)
        for other in joined[1:]:
            target.extend(f for f in other if f not in target)
            merged.remove(other)
        target.extend(f for f in group if f not in target)
    return [tuple(group) for group in merged]


def _words(text: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(text.lower()))


def _named_at(words: tuple[str, ...], start: int, form: tuple[str, ...]) -> bool:
    """Whether `form` occurs in `words` at `start` as consecutive whole words, its last word
    maybe in the plural."""
    window = words[start : start + len(form)]
    return (
        len(window) == len(form)
        and window[:-1] == form[:-1]
        and window[-1] in (form[-1], form[-1] + "s")
    )
