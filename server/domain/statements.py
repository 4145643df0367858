"""A text's statements: its lines, list items and sentences, as character spans.

Two parts of the product read a memory statement by statement, and both read it here:
- retrieval (server/service/embeddings.py): a memory that states several facts (a handbook
  chunk, a report of three changes, a turn that answers and then goes on) gets one vector per
  statement besides its own, so a question about one of its facts meets that fact's vector
  instead of an average of all of them (`unit_spans`);
- the stale-line comparison (server/domain/statement_versions.py), which compares the
  statements of hits in one result list.

A statement is a line with its list or quote markers stripped (`- `, `* `, `> `, `| `, `#`),
cut into sentences where one ends and the next starts with a capital, a quote, a backtick or
a bracket.
"""

from __future__ import annotations

import re

from server.core.models.vectors import Window

MIN_STATEMENT_CHARS = 8  # shorter pieces ("OK.", a bare heading word) state nothing
# A retrieval unit must say something on its own (about seven words): "Sounds good, thanks."
# or "Done, merged." would match any question about agreement. 40 rather than 24 characters:
# LoCoMo's tuning split lost less (docs/benchmarks-history.md, session 17).
MIN_UNIT_CHARS = 40
# Longer than this, a "statement" is a paragraph without sentence breaks (a log line, minified
# JSON): the memory's passage windows already cover it.
MAX_UNIT_CHARS = 600
MAX_UNITS = 40  # per memory: a long document's first forty statements get their own vectors

_LINE = re.compile(r"[^\n]+")
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(*-])")
_MARKERS = " \t-*|#>"


def statement_spans(text: str) -> list[Window]:
    """Every statement of `text` of at least MIN_STATEMENT_CHARS, in order."""
    spans: list[Window] = []
    for line in _LINE.finditer(text):
        body = line.group(0).strip(_MARKERS)
        if not body:
            continue
        offset = line.start() + line.group(0).find(body)
        position = 0
        for sentence in _SENTENCE_BREAK.split(body):
            at = body.index(sentence, position)
            position = at + len(sentence)
            stripped = sentence.strip()
            if len(stripped) < MIN_STATEMENT_CHARS:
                continue
            start = offset + at + sentence.find(stripped)
            spans.append(Window(start, start + len(stripped)))
    return spans


def unit_spans(text: str) -> list[Window]:
    """The statements of `text` that get a vector of their own: none when it states fewer
    than two things worth one (its own vector is then the statement's)."""
    units = [
        span
        for span in statement_spans(text)
        if MIN_UNIT_CHARS <= span.end - span.start <= MAX_UNIT_CHARS
    ]
    return units[:MAX_UNITS] if len(units) >= 2 else []
