"""The names a prompt mentions: products, tools, services, identifiers ("Kafka", "GraphQL", "EKS",
"p99", "user_id").

Prompt recall injects memories unasked, so a wrong one costs the agent's attention. A prompt
about a thing no memory mentions ("which Sentry project do we report to?" when nothing was
ever said about Sentry) is about something memory does not know, however close the nearest
memory about error reporting scores; the hook then asks for a stronger match
(server/recall/hook.py). This module only finds the candidates; the store says which of
them some memory holds.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+/-]*[A-Za-z0-9+]|[A-Za-z]")
_SENTENCE_END = re.compile(r"[.!?:;]\s*$")
# Capitalised words that are not names: greetings, and the calendar ("in February").
_GREETINGS = ("i", "ok", "okay", "hi", "hey", "thanks", "please")
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = (
    "january february march april may june july august september october november december"
    " jan feb mar apr jun jul aug sep sept oct nov dec"
)
_NOT_NAMES = frozenset((*_GREETINGS, *_WEEKDAYS, *_MONTHS.split(" ")))
_TIME_PREFIX = re.compile(r"^(?:early|mid|late|end|start)-", re.I)
# "on 8th December", "the 1st": a day of the month, not a name.
_ORDINAL = re.compile(r"^\d+(?:st|nd|rd|th)$", re.I)
# "Witcher-inspired", "Kafka-based", "k8s-operator": the name is the head; the compound as a
# whole is rarely stored, so asking memory for it would call a known thing unknown.
_PLAIN_TAIL = re.compile(r"-[a-z]{3,}$")
MAX_NAMES = 8


def named_things(prompt: str) -> list[str]:
    """The tokens of `prompt` that look like names, in order, each once.

    A name: a word with a capital after its first letter (GraphQL, iOS, EKS), a capitalised
    word that does not start a sentence (Kafka, Snowflake), a word mixing letters and digits
    (p99, es2022) or an identifier (user_id). Month and weekday names and days of the month
    (8th) are not names, and neither are paths, files, versions and hosts (app.py, lk/v2,
    1.2.3). A compound with a plain lower-case tail is named by its head ("Witcher-inspired"
    names Witcher).
    """
    names: list[str] = []
    for match in _TOKEN.finditer(prompt):
        starts_sentence = match.start() == 0 or bool(_SENTENCE_END.search(prompt[: match.start()]))
        token = match.group(0)
        while _PLAIN_TAIL.search(token):
            token = _PLAIN_TAIL.sub("", token)
        plain = _TIME_PREFIX.sub("", token).lower()
        if plain in _NOT_NAMES or _ORDINAL.match(plain) or token in names:
            continue
        if _looks_like_a_name(token, starts_sentence):
            names.append(token)
    return names[:MAX_NAMES]


def _looks_like_a_name(token: str, starts_sentence: bool) -> bool:
    letters = [c for c in token if c.isalpha()]
    if not letters or len(token) < 2:
        return False
    if any(c in "./" for c in token):
        # A path, a file, a version or a host: stored inside longer paths and URLs, where
        # the word index keeps the whole token, so "is it stored?" cannot be asked of it.
        return False
    if any(c.isupper() for c in token[1:]):
        return True
    if token[0].isupper() and not starts_sentence:
        return True
    return any(c.isdigit() for c in token) or "_" in token
