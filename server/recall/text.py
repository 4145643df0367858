"""The text prompt recall injects: its hits as labelled Markdown within a character budget.

Each hit is one line, labelled with its date, kind, id, project, similarity and author, so a
memory cannot open a section or pass for another's bullet, and with its own label-like runs
in parentheses (`as_data`), so it cannot print a label either; a long one is cut to the part
that names the prompt's words (`focused`), or to the statements that do (`answering`, with
CLAUDE_MEMORY_RECALL_STATEMENTS).

Beneath the hits that passed the cut-off, the next candidates are listed one line each
(`index_markdown`: the statement that names the prompt's words, its date, id and author) under
a heading that tells the agent how to open one: the agent judges what is worth reading in
full. A statement is said once in the whole text: a second hit (an overlapping chunk of one
runbook) shows only what the first did not say, and one with nothing new is left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from server.core.models.search import SearchHit
from server.domain.context import HEADER, as_data, author, changed_note, flat
from server.domain.statement_versions import topic_words
from server.domain.statements import statement_spans

RECALL_TITLE = "# Memory recall for this prompt"
# A long hit cut to its share of the budget starts at the statement (of its first forty) that
# names most of the prompt's words, when that statement would not be shown from the start.
MAX_FOCUS_STARTS = 40
MIN_FOCUS_CHARS = 40
# With `recall_statements`, a long memory's first statement up to this long is shown before
# the statements that answer, as its subject or title.
MAX_SUBJECT_CHARS = 120
INDEX_HEADING = "## Maybe related"
INDEX_NOTE = (
    "_Less close matches, one line each, not checked: if one bears on the task, open it with"
    " the get_memory tool (its id), or search with /memories:recall._"
)
# An index line shows at most this much of its statement: enough for a fact and its value.
INDEX_STATEMENT_CHARS = 200


def statement_key(text: str) -> str:
    """What makes two statements the same one: their words, case and spacing aside."""
    return " ".join(text.split()).casefold()


def said_in(content: str, line: str, said: set[str]) -> None:
    """Add to `said` the statements of `content` that `line` shows whole."""
    folded = statement_key(line)
    for span in statement_spans(content):
        key = statement_key(as_data(content[span.start : span.end]))
        if key in folded:
            said.add(key)


def repeated(content: str, said: set[str]) -> set[int]:
    """The places (in `statement_spans` order) of the statements of `content` already said."""
    return {
        at
        for at, span in enumerate(statement_spans(content)[:MAX_FOCUS_STARTS])
        if statement_key(as_data(content[span.start : span.end])) in said
    }


def recall_markdown(
    hits: Sequence[SearchHit],
    max_chars: int,
    drift: Mapping[int, str] | None = None,
    prompt: str = "",
    viewer: str | None = None,
    statements: bool = False,
    first: int | None = None,
    said: set[str] | None = None,
) -> tuple[str, list[int]]:
    """The hits as Markdown within `max_chars`, labelled as recalled data; and their ids.

    Each hit's label says who wrote it (`author`, as `viewer` sees it), and its text is put on
    one line, so a memory cannot open a section or pass for another's bullet.

    Each hit gets an equal share of the budget and is cut to it, so the first long one cannot
    crowd out the rest; a hit cut short shows the part that names most of the `prompt`'s words
    (`focused`), or with `statements`, only its statements that name them (`answering`). A
    hit the working tree no longer agrees with carries its `drift` note
    ("drifted: go is now 1.23 (was 1.22)") before its text.

    Only the `first` hits (default: all) share the budget; the ones after them come in rank
    order in the room the first ones' statements saved (against each shown as one cut run of
    its text, as without `statements`), each its equal share of what is left, while that holds
    at least twice MIN_FOCUS_CHARS. So the text is never longer than the first hits alone
    would have made it: statements make room for more memories, not for more tokens.

    A statement in `said` (and one an earlier hit showed) is not shown again: with
    `statements`, a hit shows only its other statements; a hit with nothing new is left out.
    `said` gains the statements shown, for the index beneath.
    """
    asked = topic_words(prompt)
    drift = drift or {}
    if not hits:
        return "", []
    head = f"{RECALL_TITLE}\n\n_{HEADER}_\n"
    first = len(hits) if first is None else max(1, min(first, len(hits)))
    budget = max_chars - len(head)
    share = budget // first
    said = set() if said is None else said
    lines: list[str] = []
    ids: list[int] = []
    saved = 0  # characters the first hits' statements left unused against their cut runs
    for at, hit in enumerate(hits):
        if at >= first:  # past the first: an equal share of the room the statements saved
            share = saved // (len(hits) - at)
        project = f", {flat(hit.project).replace(']', ')')}" if hit.project else ""
        by = author(hit.owner, viewer, hit.source, hit.session_id)
        label = (
            f"- {hit.created_at.date().isoformat()} [{hit.kind} #{hit.id}{project}, "
            f"similarity {hit.similarity or 0:.2f}, {by}] "
        )
        room = share - len(label) - 1
        if room < (40 if at < first else 2 * MIN_FOCUS_CHARS):
            break
        skip = repeated(hit.content, said)
        if skip and len(skip) == len(statement_spans(hit.content)[:MAX_FOCUS_STARTS]):
            continue  # every statement of it is already in the text
        checked = f"({drift[hit.id]}) " if hit.id in drift else ""
        notes = checked + changed_note(hit.supersedes, hit.created_at)
        if room - len(notes) < MIN_FOCUS_CHARS:  # the notes fill the room: cut them and all
            line = label + (notes + as_data(hit.content))[: room - 1].rstrip() + "…"
        elif statements:
            line = label + notes + answering(hit.content, room - len(notes), asked, skip)
            if at < first:
                run = label + notes + focused(hit.content, room - len(notes), asked)
                saved += max(len(run) - len(line), 0)
        else:
            line = label + notes + focused(hit.content, room - len(notes), asked)
        if at >= first:
            saved -= len(line) + 1
        said_in(hit.content, line, said)
        lines.append(line)
        ids.append(hit.id)
    if not lines:
        return "", []
    return head + "\n" + "\n".join(lines), ids


def index_markdown(
    candidates: Sequence[SearchHit],
    max_chars: int,
    prompt: str,
    viewer: str | None,
    said: set[str],
    lines: int,
    titled: bool,
) -> tuple[str, list[int]]:
    """Up to `lines` candidates, one line each within `max_chars`, under INDEX_HEADING (after
    the recall title and header when `titled` is False: the text has no hits above it); and
    their ids. Each line is the candidate's date, kind, id and author (labelled as the hits
    above are, without a similarity) and the statement of it that
    names the most of the `prompt`'s words (its first when none does; never one in `said`),
    cut to INDEX_STATEMENT_CHARS."""
    asked = topic_words(prompt)
    head = ("\n\n" if titled else f"{RECALL_TITLE}\n\n_{HEADER}_\n\n") + (
        f"{INDEX_HEADING}\n\n{INDEX_NOTE}\n"
    )
    room = max_chars - len(head)
    shown: list[str] = []
    ids: list[int] = []
    for hit in candidates:
        if len(shown) >= lines:
            break
        statement = index_statement(hit.content, asked, said)
        if statement is None:
            continue
        by = author(hit.owner, viewer, hit.source, hit.session_id)
        label = f"- {hit.created_at.date().isoformat()} [{hit.kind} #{hit.id}, {by}] "
        line = label + statement
        if len(line) + 1 > room:
            break
        room -= len(line) + 1
        said.add(statement_key(statement))
        shown.append(line)
        ids.append(hit.id)
    if not shown:
        return "", []
    return head + "\n" + "\n".join(shown), ids


def index_statement(content: str, asked: frozenset[str], said: set[str]) -> str | None:
    """The statement of `content` an index line shows (see `index_markdown`); None when every
    statement of it is already said."""
    spans = statement_spans(content)[:MAX_FOCUS_STARTS]
    if not spans:
        whole = as_data(content)
        return None if not whole or statement_key(whole) in said else _cut(whole)
    fresh = [
        as_data(content[span.start : span.end])
        for span in spans
        if statement_key(as_data(content[span.start : span.end])) not in said
    ]
    if not fresh:
        return None
    named = [len(topic_words(text) & asked) for text in fresh]
    return _cut(fresh[named.index(max(named))])


def _cut(text: str) -> str:
    if len(text) <= INDEX_STATEMENT_CHARS:
        return text
    return text[: INDEX_STATEMENT_CHARS - 1].rstrip() + "…"


def focused(content: str, room: int, asked: frozenset[str]) -> str:
    """`content` on one line, cut to `room` characters: from its start, or, when the statement
    that names the most of the `asked` words would not be shown whole, from that statement (a
    handbook chunk whose answer is its tenth line). A cut is marked "…" at either end."""
    whole = as_data(content)
    if len(whole) <= room:
        return whole
    spans = statement_spans(content)[:MAX_FOCUS_STARTS]
    named = [len(topic_words(content[span.start : span.end]) & asked) for span in spans]
    start = 0
    if named and max(named) > 0:
        best = spans[named.index(max(named))]
        if len(" ".join(content[: best.end].split())) > room - 1:
            start = best.start
    lead = "…" if start else ""
    # Collapsing whitespace only shortens, so twice the room is enough to fill it.
    body = as_data(content[start : start + 2 * room])
    return lead + body[: room - len(lead) - 1].rstrip() + "…"


def answering(content: str, room: int, asked: frozenset[str], skip: set[int] | None = None) -> str:
    """`content` on one line within `room` characters: whole if it fits; else its statements
    that name the most of the `asked` words (at least half as many as the best one does), the
    best first while they fit, shown in their order with "…" where text is left out, after
    the memory's first statement (its subject or title) when that is short. A memory none of
    whose statements names an asked word is `focused` (cut from its start). The statements at
    the places in `skip` (already shown by another hit) are never chosen; a memory with some
    is shown as its other statements, the ones naming asked words first, then in order."""
    skip = skip or set()
    whole = as_data(content)
    if len(whole) <= room and not skip:
        return whole
    spans = statement_spans(content)[:MAX_FOCUS_STARTS]
    named = [
        -1 if at in skip else len(topic_words(content[span.start : span.end]) & asked)
        for at, span in enumerate(spans)
    ]
    best = max(named, default=0)
    if best <= 0 and not skip:
        return focused(content, room, asked)
    ranked = sorted(
        (at for at, count in enumerate(named) if count >= 0 and 2 * count >= best),
        key=lambda at: (-named[at], at),
    )
    chosen: list[int] = []
    used = 0
    for at in ranked:
        size = len(as_data(content[spans[at].start : spans[at].end])) + 3
        if used + size > room - 2:
            if not chosen:  # the best statement alone is longer than the room: cut it
                lead = "…" if at else ""
                return lead + focused(content[spans[at].start :], room - len(lead), asked)
            continue
        chosen.append(at)
        used += size
    if not chosen:
        return "…"
    if 0 not in chosen and 0 not in skip:
        subject = len(as_data(content[spans[0].start : spans[0].end])) + 3
        if subject <= MAX_SUBJECT_CHARS and used + subject <= room - 2:
            chosen.append(0)
    chosen.sort()
    parts: list[str] = []
    for place, at in enumerate(chosen):
        gap = at > 0 if place == 0 else at > chosen[place - 1] + 1
        if gap:
            parts.append("…")
        parts.append(as_data(content[spans[at].start : spans[at].end]))
    if chosen[-1] < len(spans) - 1 or spans[chosen[-1]].end < len(content.rstrip()):
        parts.append("…")
    return " ".join(parts)
