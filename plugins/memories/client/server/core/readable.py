"""A text as its reader reads it, and where each of its characters came from.

A secret can be written so that no pattern sees it while every reader (a person, a model, a
shell after unescaping) still reads it: in full-width or mathematical letters, with a Cyrillic
or Greek look-alike letter (`ghp_` with a Cyrillic er for the p), escaped (`%5F` inside a word,
JSON's `\\u005f`), split by zero-width characters or soft hyphens, or wrapped onto the next
line. :func:`readable` undoes all of that and keeps a map from each character it returns back
to the original text, so that the redactor replaces a secret's whole original span and leaves
every other character exactly as given. It is standard library only: the hook client runs it.

Three steps:

1. Folding, one character for one: NFKC where it gives plain ASCII (full-width `AKIA`, NBSP
   for a space) and the common Cyrillic and Greek look-alikes of Latin letters. Offsets do not
   move, so this step needs no map.
2. Unescaping, with a map: invisible characters dropped, escapes decoded, characters that
   fold to several (the `fi` ligature) written out.
3. Unwrapping, with a map: a line that ends inside a token (it starts with a known token
   prefix and is not yet a whole token on its own) is joined with the next line's run of
   token characters, as if the line break were not there.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

__all__ = ["Reading", "readable"]

# Cyrillic and Greek letters that look like Latin ones in common fonts (Unicode's confusables,
# the unambiguous part), and Latin letters outside ASCII that NFKC keeps (dotless i, script g).
_LOOK_ALIKES = dict(
    zip(
        # Cyrillic: a e shha i je o er es dze u ha komi-de qa we palochka, then capitals
        "\u0430\u0435\u04bb\u0456\u0458\u043e\u0440\u0441\u0455\u0443\u0445\u0501\u051b\u051d\u04cf"
        "\u0410\u0412\u0415\u0406\u0408\u041a\u041c\u041d\u041e\u0420\u0421\u0405\u0422\u0423\u0425"
        "\u051a\u051c\u04c0\u04ae"
        # Greek capitals alpha to chi, then omicron rho iota upsilon nu alpha
        "\u0391\u0392\u0395\u0396\u0397\u0399\u039a\u039c\u039d\u039f\u03a1\u03a4\u03a5\u03a7"
        "\u03bf\u03c1\u03b9\u03c5\u03bd\u03b1"
        # Latin outside ASCII: dotless i, script g, alpha
        "\u0131\u0261\u0251",
        "aehijopcsyxdqwlABEIJKMHOPCSTYXQWIYABEZHIKMNOPTYXopiuvaiga",
        strict=True,
    )
)


@lru_cache(maxsize=4096)
def _fold(char: str) -> str | None:
    """What a non-ASCII character reads as in ASCII (None: it reads as itself)."""
    folded = "".join(_LOOK_ALIKES.get(c, c) for c in unicodedata.normalize("NFKC", char))
    if folded != char and folded.isascii() and folded.isprintable():
        return folded
    return None


# Zero-width characters and soft hyphens render as nothing; a percent-escape of a letter,
# digit or - . _ ~ inside a word, and a JSON \u escape of one anywhere, read as that character.
_TOKEN_ESCAPE = r"2[DEde]|3[0-9]|[46][1-9A-Fa-f]|[57][0-9Aa]|5[Ff]|7[Ee]"
_CHANGES = (
    r"(?P<hidden>[\u200b-\u200d\u2060\ufeff\u00ad])"
    r"|(?<=[A-Za-z0-9\u200b-\u200d\u2060\ufeff\u00ad])"
    rf"%(?P<percent>{_TOKEN_ESCAPE})"
    r"(?=[A-Za-z0-9%\u200b-\u200d\u2060\ufeff\u00ad])"
    rf"|\\u00(?P<json>{_TOKEN_ESCAPE})"
)
_CHANGE = re.compile(_CHANGES)


@lru_cache(maxsize=64)
def _changes_with(several: str) -> re.Pattern[str]:
    """`_CHANGE` that also finds the characters of `several` (each folds to several)."""
    return re.compile(f"{_CHANGES}|(?P<several>[{re.escape(several)}])")


class _Map:
    """Where each character of a rewritten text was in the text it was made from.

    Only the rewritten pieces are kept: (new start, new end, old start, old end), in order;
    between them characters map one to one. Every character of a piece maps to its whole old
    span, and a dropped piece (new start == new end) belongs to no character.
    """

    __slots__ = ("_pieces", "_starts")

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._pieces: list[tuple[int, int, int, int]] = []

    def add(self, new_start: int, new_end: int, old_start: int, old_end: int) -> None:
        self._starts.append(new_start)
        self._pieces.append((new_start, new_end, old_start, old_end))

    def char(self, i: int) -> tuple[int, int]:
        """The old span of new character `i`."""
        k = bisect_right(self._starts, i) - 1
        if k < 0:
            return i, i + 1
        _, new_end, old_start, old_end = self._pieces[k]
        if i < new_end:
            return old_start, old_end
        old = old_end + i - new_end
        return old, old + 1


@dataclass(frozen=True, slots=True)
class Reading:
    """`text` as read; `maps` lead back to the original, last step first."""

    text: str
    maps: tuple[_Map, ...] = field(default=())

    def original(self, start: int, end: int) -> tuple[int, int]:
        """The span of the original text that `text[start:end]` (not empty) was read from."""
        for step in self.maps:
            start, end = step.char(start)[0], step.char(end - 1)[1]
        return start, end


def _rewritten(text: str, edits: list[tuple[int, int, str]]) -> tuple[str, _Map]:
    """`text` with each (start, end, new) edit made, and the map back to `text`."""
    pieces: list[str] = []
    step = _Map()
    position = 0
    length = 0
    for start, end, new in edits:
        pieces.append(text[position:start])
        length += start - position
        pieces.append(new)
        step.add(length, length + len(new), start, end)
        length += len(new)
        position = end
    pieces.append(text[position:])
    return "".join(pieces), step


def _folded(text: str) -> tuple[str, str]:
    """`text` with one-for-one folds made, and the characters that fold to several."""
    folds = {c: f for c in set(text) if c > "\x7f" and (f := _fold(c)) is not None}
    if not folds:
        return text, ""
    singles = {ord(c): f for c, f in folds.items() if len(f) == 1}
    several = "".join(sorted(c for c, f in folds.items() if len(f) > 1))
    return (text.translate(singles) if singles else text), several


def _unescaped(text: str, several: str) -> tuple[str, _Map] | None:
    pattern = _changes_with(several) if several else _CHANGE
    edits: list[tuple[int, int, str]] = []
    for m in pattern.finditer(text):
        if m["hidden"]:
            new = ""
        elif escape := m["percent"] or m["json"]:
            new = chr(int(escape, 16))
        else:
            new = _fold(m["several"]) or m["several"]
        edits.append((m.start(), m.end(), new))
    return _rewritten(text, edits) if edits else None


# The token characters at the start of a line, and the line break if they reach it.
_CONTINUED = re.compile(r"(?P<run>[\w.+/=-]+)(?:(?P<wrap>\r?\n[ \t]*)(?=[\w.+/=-]))?", re.ASCII)


def _generated(run: str) -> bool:
    """A line's start that goes on a token (digits, mixed case), not a word (`Next`) or a
    name (`DB_PASSWORD`) or an assignment (`x=1`)."""
    return (
        len(run) >= 8
        and "=" not in run.rstrip("=")
        and (any(c.isdigit() for c in run) or (run[1:].lower() != run[1:] != run[1:].upper()))
    )


def _unwrapped(
    text: str, wrapped: re.Pattern[str], whole: Callable[[str], bool]
) -> tuple[str, _Map] | None:
    """`text` with the line breaks inside wrapped tokens dropped.

    A token not yet whole goes on on the next line; a whole one (most token formats have no
    fixed length) only if the next line starts with what looks generated and the two together
    are still one token.
    """
    edits: list[tuple[int, int, str]] = []
    for m in wrapped.finditer(text):
        token, wrap = m["token"], m.span("wrap")
        if edits and wrap[0] < edits[-1][1]:
            continue  # a line of a token already joined
        while True:
            more = _CONTINUED.match(text, wrap[1])
            assert more is not None  # `wrapped` looks ahead for a token character
            run = more["run"]
            if whole(token) and not (_generated(run) and whole(token + run.rstrip("."))):
                break
            edits.append((*wrap, ""))
            token += run
            if more["wrap"] is None:
                break
            wrap = more.span("wrap")
    return _rewritten(text, edits) if edits else None


def readable(text: str, wrapped: re.Pattern[str], whole: Callable[[str], bool]) -> Reading:
    """`text` as read (see the module's docstring).

    `wrapped` finds a token that a line break cuts: groups `token` (up to the break) and
    `wrap` (the break and the next line's indentation); `whole` tells whether a token is
    already complete (see `_unwrapped` for when a whole one is still joined).
    """
    maps: list[_Map] = []
    if text.isascii():
        several = ""
    else:
        text, several = _folded(text)
    escapable = several or "%" in text or "\\u" in text or not text.isascii()
    if escapable and (unescaped := _unescaped(text, several)):
        text, step = unescaped
        maps.append(step)
    if "\n" in text and (unwrapped := _unwrapped(text, wrapped, whole)):
        text, step = unwrapped
        maps.append(step)
    return Reading(text, tuple(reversed(maps)))
