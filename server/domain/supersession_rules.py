"""Supersession: does a newer memory change a fact that an older one states? Found by rules.

No LLM. Each memory's text is read once into a `Statement`: its subject words, its values by
kind, whether it says something changed, and which words it names as the previous value. Two
statements of the same project are then compared, newer against older:

1. named: the newer text names a word of the older one as the previous value ("from 20 to 22",
   "instead of npm", "per API key, not per IP", "no longer Mondays", "renamed foo to bar") and
   the two share their subject. This is how people state a change, and how users correct a plan.
2. changed value: both state a value of the same kind (a number, a version, an identifier, a
   weekday or schedule) and each has one the other lacks ("Node 20" then "Node 22"), with the
   same subject and close meaning.
3. said changed: the newer text says it changed ("moved", "switched", "bumped", "now"), states a
   value the older lacks, and the two share their subject closely.

The subject gate is what keeps two different facts apart: a memory about the invoice endpoint's
limit never replaces one about the login endpoint's limit, because "invoice" and "login" differ
while the values are ignored. Dates are not values (a change of date is a different event), nor
are issue numbers. Questions neither replace nor are replaced.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

MAX_VALUES_PER_KIND = 5  # more numbers than this in one text is a table or a log, not one fact
MAX_SUBJECT_WORDS = 60  # a long text is compared on its first sixty subject words
MAX_QUESTION_CHARS = 200  # a longer text ending in "?" states things before it asks
# In a longer text an ordinary word after "instead of" or ", not" is too often beside the point
# ("... instead of a request per row"); there only a value (number, identifier, name) counts.
MAX_PLAIN_NAMED_CHARS = 400

# Gates, as cosine similarity of the stored vectors and overlap of subject words.
NAMED_MIN_SIMILARITY = 0.45
NAMED_MIN_SHARED = 1
NAMED_MIN_SHARED_PLAIN = 2
MIN_SHARED = 2
MIN_OVERLAP = 0.3
VALUE_MIN_SIMILARITY = 0.55
SAID_MIN_SIMILARITY = 0.6


def _vocabulary(words: str) -> frozenset[str]:
    return frozenset(words.split())


_PLAIN = str.maketrans("\u2019\u2018\u201c\u201d\u2014\u2013", "''\"\"--")
_CODE_SPAN = re.compile(r"`([^`\n]{1,80})`")
_FENCE = re.compile(r"```.*?(?:```|$)", re.S)
_DATE = re.compile(
    r"\b(?:19|20)\d\d-\d\d(?:-\d\d)?(?:[t ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:z|[+-]\d\d:?\d\d)?)?\b"
    r"|\b\d{1,2}:\d\d(?::\d\d)?\s*(?:am|pm)?\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b",
    re.I,
)
_ISSUE = re.compile(r"(?:#|\bpr\s*|\bissue\s*)\d+\b", re.I)
_YEAR = re.compile(r"^(?:19|20)\d\d$")
_ENDS_SENTENCE = re.compile(r"[.!?:\n]\s*$")
_SENTENCE_BREAK = re.compile(r"[.!?]\s")
_TOKEN = re.compile(r"--?[a-z][\w-]*|[a-z0-9_$][\w$]*(?:[./:@-][\w$]+)*", re.I)
_NUMBER = re.compile(r"^v?\d+(?:[.,]\d+)*(?:%|[a-z]{1,3})?$", re.I)
_VERSION = re.compile(r"^v?\d+(?:\.\d+){1,3}$", re.I)

_WEEKDAYS = _vocabulary(
    "monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays "
    "thursdays fridays saturdays sundays weekday weekdays weekend weekends"
)
_SCHEDULES = _vocabulary(
    "daily nightly hourly weekly biweekly fortnightly monthly quarterly yearly annually"
)
_MONTHS = _vocabulary(
    "january february march april may june july august september october november "
    "december jan feb mar apr jun jul aug sep sept oct nov dec"
)
_STOPWORDS = _vocabulary(
    "a an the and or but if then than so of to in on at by for with from into onto over "
    "under about as is are was were be been being am do does did done doing has have had "
    "having will would shall should can could may might must it its it's this that these "
    "those there here we us our ours you your yours i me my mine he him his she her they "
    "them their what which who whom whose when where why how all any both each few more "
    "most other some such no nor not only own same too very just also now still yet again "
    "ever once per via up down out off let's lets let please ok okay yes yeah yep nope nah "
    "sure thanks thank actually instead rather anymore longer use used uses using get got set make "
    "made going go want need needs like one i'm i've i'll we're we've we'll you're that's "
    "there's don't doesn't didn't isn't aren't wasn't weren't won't can't shouldn't"
)
# Words that say a value changed, in the newer text. The strong ones name the change; the weak
# ones ("now", "anymore") are as often small talk ("bye for now") and count only with a value.
_STRONG_CHANGE_WORDS = _vocabulary(
    "changed switched moved migrated renamed replaced bumped raised lowered cut reduced "
    "increased upgraded downgraded dropped swapped retired deprecated"
)
_CHANGE_WORDS = _STRONG_CHANGE_WORDS | _vocabulary(
    "change changes switch switching move moving migrate migrating rename replace replacing "
    "bump raise lower reduce increase upgrade downgrade drop swap now anymore updated update"
)
# Cues that name the previous value. Strong: "instead of X", "rather than X", "in place of X",
# "replaced X with", "no longer X", "used to be X", "formerly X", "X is gone", and "from X to
# Y" beside a change word ("moved it from X to Y"). Contrasts, "Y, not X" and "not X but Y",
# count for a plain word only when Y is a word the older text does not state: "use pnpm, not
# npm" names npm, while "no, not really" and "not everything" name nothing. A bare "not" ("do
# not run it on Fridays") states a rule, not a change.
_PHRASE = r"((?:[\w./@$`-]+[ \t]*){1,3})"
_TOKEN_GROUP = r"([\w./@$`-]+)"
_STRONG_CUES = (
    re.compile(r"\b(?:instead\s+of|rather\s+than|in\s+place\s+of)\s+" + _PHRASE, re.I),
    re.compile(r"\breplac(?:e|es|ed|ing)\s+" + _PHRASE + r"\s*(?:with|by)\b", re.I),
    re.compile(
        r"([\w./@$`-]+)\s+(?:is|was|are|were)\s+(?:gone|removed|deprecated|retired|dropped"
        r"|no\s+longer\s+used)",
        re.I,
    ),
)
# "no longer X", "used to be X": X is often a verb phrase ("no longer pins DB connections"),
# so these count in short texts only.
_LOOSE_CUE = re.compile(
    r"\b(?:no\s+longer|used\s+to\s+be|(?:was|were)\s+previously|formerly)\s+" + _PHRASE, re.I
)
_FROM_TO = re.compile(
    r"\bfrom\s+((?:[\w./@$`-]+[ \t]*){1,2})\s*(?:to|->|=>)\s+" + _TOKEN_GROUP, re.I
)
# "not just X", "not only X" add to X; they do not replace it.
_NOT_JUST = r"(?!(?:just|only|merely|simply|even|always|necessarily|quite|exactly|really|yet)\b)"
_CONTRASTS = (
    re.compile(
        _TOKEN_GROUP + r"[)\]\"'`]*\s*[,;(]\s*(?:and\s+)?not\s+" + _NOT_JUST + _PHRASE, re.I
    ),
    re.compile(
        r"\bnot\s+" + _NOT_JUST + _PHRASE + r"\s*(?:,\s*)?but\s+(?:rather\s+)?" + _TOKEN_GROUP, re.I
    ),
)
# "prefers tabs over spaces", "prefer pnpm to npm": the second is what is not chosen.
_PREFERENCE = re.compile(
    r"\bprefer(?:s|red|ring)?\s+" + _TOKEN_GROUP + r"\s+(?:over|to)\s+" + _PHRASE, re.I
)
_NOT_PREVIOUS = _STOPWORDS | _MONTHS
# Kinds of value whose difference is a change. Not names: a capitalised word is as often who is
# spoken to ("Thanks, Maria!") as what was chosen; a name counts only where a cue names it.
_CONFLICT_KINDS = ("version", "number", "schedule", "identifier")


@dataclass(frozen=True, slots=True)
class Statement:
    """What the rules read from one memory's text."""

    subject: frozenset[str]
    values: dict[str, frozenset[str]]
    says_changed: bool
    says_changed_strongly: bool
    previous: frozenset[str]  # named as previous by a strong cue
    contrasted: frozenset[tuple[str, str]]  # (previous X, its replacement Y) of "Y, not X"
    words: frozenset[str]
    question: bool  # a short text asking something: it states no fact
    long: bool
    value_words: frozenset[str]


def read_statement(text: str) -> Statement:
    """The subject words, values, change cue and named previous values of one text."""
    plain = _FENCE.sub(" ", text.translate(_PLAIN))
    spans = [span.strip().lower() for span in _CODE_SPAN.findall(plain)]
    cleaned = _ISSUE.sub(" ", _DATE.sub(" ", plain))
    values: dict[str, set[str]] = {}
    subject: list[str] = []
    words: set[str] = set()
    for raw, sentence_start in _tokens(cleaned):
        word = raw.lower().strip("`")
        if not word:
            continue
        words.add(word)
        kind = _value_kind(raw, word, sentence_start)
        if kind is not None:
            values.setdefault(kind, set()).add(_value_form(word))
        if kind in ("number", "version") or word in _STOPWORDS or len(word) < 2:
            continue
        if word not in _CHANGE_WORDS:
            subject.append(stem(word))
    for span in spans:
        values.setdefault("identifier", set()).add(span)
    strong = any(word in _STRONG_CHANGE_WORDS for word in words)
    previous, contrasted = _previous_values(cleaned, strong)
    stripped = text.strip()
    value_words = frozenset(v for found in values.values() for v in found)
    return Statement(
        subject=frozenset(subject[:MAX_SUBJECT_WORDS]),
        values={kind: frozenset(found) for kind, found in values.items()},
        says_changed=any(word in _CHANGE_WORDS for word in words),
        says_changed_strongly=strong,
        previous=previous,
        contrasted=contrasted,
        words=frozenset(words),
        question=stripped.endswith("?") and len(stripped) <= MAX_QUESTION_CHARS,
        long=len(stripped) > MAX_PLAIN_NAMED_CHARS,
        value_words=value_words,
    )


def replacement_reason(newer: Statement, older: Statement, similarity: float) -> str | None:
    """Why `newer` replaces `older` (a few words), or None when it states no change of it."""
    if newer.question or older.question:
        return None
    shared = newer.subject & older.subject
    overlap = len(shared) / max(1, len(newer.subject | older.subject))
    strays = min(len(newer.subject - older.subject), len(older.subject - newer.subject))
    named = _named_previous(newer, older)
    if named and similarity >= NAMED_MIN_SIMILARITY:
        return f"names {named} as the previous value"
    close = len(shared) >= MIN_SHARED and overlap >= MIN_OVERLAP
    changed = _changed_value(newer, older)
    if changed is not None:
        kind, description = changed
        # Only the value may differ: "login limit 5" and "invoice limit 30" are two facts. The
        # changed values themselves ("nightly" then "Mondays") are not strays.
        changed_words = {stem(v) for v in newer.values.get(kind, frozenset()) | older.values[kind]}
        value_strays = min(
            len(newer.subject - older.subject - changed_words),
            len(older.subject - newer.subject - changed_words),
        )
        if close and value_strays == 0 and similarity >= VALUE_MIN_SIMILARITY:
            return description
        return None
    if newer.says_changed and not older.says_changed and close and strays <= 1:
        # A new plain word ("switched to pnpm") counts only beside a strong change word.
        gained = _new_value(newer, older) or (
            ", ".join(sorted(newer.subject - older.subject))
            if newer.says_changed_strongly
            else None
        )
        if gained and similarity >= SAID_MIN_SIMILARITY:
            return f"says it changed to {gained}"
    return None


def redundant_near_copy(
    newer_text: str, older_text: str, similarity: float, threshold: float
) -> bool:
    """The write guard's noop: at least `threshold` similar, and not a new version of the
    older text's fact ("Node 22" after "Node 20" is saved, and then supersedes it)."""
    if similarity < threshold:
        return False
    reason = replacement_reason(read_statement(newer_text), read_statement(older_text), similarity)
    return reason is None


def _tokens(text: str) -> Iterable[tuple[str, bool]]:
    """Each token and whether it opens a sentence (so its capital says nothing)."""
    sentence_start = True
    position = 0
    for match in _TOKEN.finditer(text):
        between = text[position : match.start()]
        if _ENDS_SENTENCE.search(between) or _SENTENCE_BREAK.search(between):
            sentence_start = True
        yield match.group(0), sentence_start
        sentence_start = False
        position = match.end()


def _value_kind(raw: str, word: str, sentence_start: bool) -> str | None:
    """The kind of value a token is, or None for an ordinary word."""
    if _VERSION.match(word) and not _YEAR.match(word):
        return "version"
    if _NUMBER.match(word):
        return None if _YEAR.match(word) else "number"
    if word in _WEEKDAYS or word in _SCHEDULES:
        return "schedule"
    if word.startswith("-") or (any(ch in word for ch in "./_@$") and len(word) > 2):
        return "identifier"
    if any(ch.isdigit() for ch in word):
        return "identifier"
    inner_capital = any(ch.isupper() for ch in raw[1:])
    if len(raw) >= 2 and (raw.isupper() or inner_capital):
        return "identifier"
    if raw[:1].isupper() and not sentence_start and word not in _MONTHS:
        return "name"
    return None


def _value_form(word: str) -> str:
    """Numbers compared as numbers ("30" and "30.0" agree), everything else as written."""
    if _NUMBER.match(word):
        digits = word.lstrip("vV").rstrip("%").rstrip("abcdefghijklmnopqrstuvwxyz")
        return digits.replace(",", "") or word
    return word.rstrip("s") if word in _WEEKDAYS else word


def stem(word: str) -> str:
    """A light plural fold, so "limits" and "limit" are one subject word."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _previous_values(
    text: str, says_changed_strongly: bool
) -> tuple[frozenset[str], frozenset[tuple[str, str]]]:
    """Words the text names as what was before, by a strong cue; and contrasted (X, Y) pairs."""
    named: set[str] = set()
    for cue in _STRONG_CUES:
        for match in cue.finditer(text):
            named.update(_words(match.group(1)))
    pairs: set[tuple[str, str]] = set()
    for match in _LOOSE_CUE.finditer(text):
        pairs.update((x, "") for x in _words(match.group(1)))
    for match in _FROM_TO.finditer(text):
        if says_changed_strongly:
            named.update(_words(match.group(1)))
        else:  # "from regular maintenance to full restorations": a range, unless values
            pairs.update((x, "") for x in _words(match.group(1)))
    first, second = _CONTRASTS
    for match in first.finditer(text):
        pairs.update((x, _value_form(match.group(1).lower())) for x in _words(match.group(2)))
    for match in second.finditer(text):
        pairs.update((x, _value_form(match.group(2).lower())) for x in _words(match.group(1)))
    for match in _PREFERENCE.finditer(text):
        pairs.update((x, _value_form(match.group(1).lower())) for x in _words(match.group(2)))
    return (
        frozenset(word for word in named if word not in _NOT_PREVIOUS),
        frozenset((x, y) for x, y in pairs if x not in _NOT_PREVIOUS),
    )


def _words(phrase: str) -> list[str]:
    return [
        _value_form(token.lower().strip("`")) for token in _TOKEN.findall(phrase) if token.strip()
    ]


def _named_previous(newer: Statement, older: Statement) -> str | None:
    """A word the older text states that the newer one names as the previous value.

    In a short text a value (number, version, identifier, name, schedule) may be named by any
    cue; a plain word only by a strong cue, or by a contrast ("Y, not X") whose Y is new to the
    older text. "no longer X" and "used to be X" count as contrasts with no Y: values only.
    """
    if newer.long:
        # A long text (a report of several changes) names only identifiers and versions the
        # older text states, and only by a strong cue.
        exact = older.values.get("identifier", frozenset()) | older.values.get(
            "version", frozenset()
        )
        candidates = [(word, False, False) for word in newer.previous if word in exact]
    else:
        candidates = [(word, True, False) for word in newer.previous]
        # (word, plain words allowed, weak cue): a contrast with no Y is "no longer X".
        candidates += [
            (x, y not in _STOPWORDS and len(y) > 1 and not _states(older, y), not y)
            for x, y in newer.contrasted
        ]
    values = newer.value_words | older.value_words
    shared = newer.subject & older.subject
    rejected = {x for x, _ in older.contrasted}
    for word, plain_allowed, weak_cue in sorted(candidates):
        if word in _STOPWORDS or (len(word) < 2 and not word.isdigit()):
            continue
        if word not in values and not plain_allowed:
            continue
        # A plain word, or one named by a weak cue, needs more of the subject in common.
        weak = word not in values or weak_cue
        if len(shared - {word}) < (NAMED_MIN_SHARED_PLAIN if weak else NAMED_MIN_SHARED):
            continue
        # The older text stating X as what is *not* the value ("pnpm, not npm") already
        # agrees with the newer one naming X as the previous value.
        if _states(older, word) and word not in older.previous and word not in rejected:
            return word
    return None


def _states(statement: Statement, word: str) -> bool:
    if word in statement.words:
        return True
    return any(word in found for found in statement.values.values())


def _changed_value(newer: Statement, older: Statement) -> tuple[str, str] | None:
    """(kind, "number 20 -> 22") when both state a value of one kind and each has one the
    other lacks."""
    for kind in _CONFLICT_KINDS:
        new_values = newer.values.get(kind, frozenset())
        old_values = older.values.get(kind, frozenset())
        if not new_values or not old_values:
            continue
        if len(new_values) > MAX_VALUES_PER_KIND or len(old_values) > MAX_VALUES_PER_KIND:
            continue
        gained = sorted(new_values - old_values)
        lost = sorted(old_values - new_values)
        if gained and lost:
            return kind, f"{kind} {', '.join(lost)} -> {', '.join(gained)}"
    return None


def _new_value(newer: Statement, older: Statement) -> str | None:
    for kind in _CONFLICT_KINDS:
        gained = sorted(newer.values.get(kind, frozenset()) - older.values.get(kind, frozenset()))
        if gained:
            return ", ".join(gained)
    return None
