"""Reading a distillation reply: find the list of memories, check each one, merge windows.

The model's reply is untrusted text. `parse_items` finds the JSON list in whatever the model
wrote (prose, a code fence, a bare list), keeps the items that pass the checks, maps the turn
numbers they cite back to memory ids, and drops items that read like orders to an agent,
because distilled memories are later injected into an agent's context. Pure: no I/O.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, get_args

from server.core.errors import InvalidInput
from server.core.models.output import preview
from server.domain.trajectories import Trajectory, checked, trajectory_content

logger = logging.getLogger(__name__)

DistillKind = Literal[
    "decision", "bug", "fix", "preference", "pattern", "behavior", "fact", "trajectory"
]
DISTILL_KINDS: tuple[str, ...] = get_args(DistillKind)

# What small models write instead of our kind names; anything else unknown drops the item.
KIND_SYNONYMS = {
    "decisions": "decision",
    "design decision": "decision",
    "bugs": "bug",
    "root cause": "bug",
    "issue": "bug",
    "fixes": "fix",
    "bugfix": "fix",
    "bug fix": "fix",
    "solution": "fix",
    "workaround": "fix",
    "preferences": "preference",
    "correction": "preference",
    "user preference": "preference",
    "patterns": "pattern",
    "convention": "pattern",
    "behaviors": "behavior",
    "behaviour": "behavior",
    "habit": "behavior",
    "workflow": "behavior",
    "facts": "fact",
    "trajectories": "trajectory",
}

MAX_CONTENT_CHARS = 1_200
# The prompt asks for 1 to 4 sentences; counting sentence ends is approximate ("e.g. pnpm" counts
# two), so up to 6 pass.
MAX_SENTENCES = 6
MAX_TAGS = 8
MAX_TAG_CHARS = 40

# Items that read like orders to the agent that will later see them as memories. Kept narrow:
# a memory that merely talks about secrets or deletion ("never commit .env") must survive.
INJECTION_PATTERNS: tuple[re.Pattern[str], ...] = (
    # "ignore all previous instructions", "disregard your system prompt"
    re.compile(
        r"\b(ignore|disregard|forget|override|bypass)\b.{0,40}"
        r"\b(instructions|system prompt|guardrails|safety rules)\b",
        re.I | re.S,
    ),
    # "reveal your system prompt"
    re.compile(
        r"\b(reveal|print|repeat|leak|dump)\b.{0,30}"
        r"\b(system prompt|hidden instructions|your instructions)\b",
        re.I | re.S,
    ),
    # text addressed to whatever model reads it: agents reading this, you are now, new instructions
    re.compile(
        r"\b(ai|agent|assistant|model|llm)s?\s+(reading|that reads?|who reads?)\s+this\b"
        r"|\byou are now\b|\bnew instructions\s*:",
        re.I,
    ),
    # sending secrets to an outside address, or "exfiltrate" at all
    re.compile(
        r"\b(send|upload|post|forward|transmit|email)\b.{0,60}"
        r"(\b(api[ _-]?keys?|credentials|secrets?|passwords?|tokens?|private keys?|ssh keys?)\b"
        r"|\.env\b).{0,60}\b(to|at)\s+(https?://|\S+@\S+)"
        r"|\bexfiltrat",
        re.I | re.S,
    ),
    # wiping a home or root directory, or the memory store itself
    re.compile(
        r"\brm\s+-(rf|fr)\s+(/|~|\$home)(\s|$|[`'\"])"
        r"|\b(delete|erase|wipe|purge)\s+(all|every)\s+(of\s+)?((the|your|stored)\s+)*memor(y|ies)\b",
        re.I,
    ),
)

_SENTENCE_BREAK = re.compile(r"[.!?]+[\"')\]]*\s+(?=\S)")
_JSON_START = re.compile(r"[{\[]")
_TURN_NUMBER = re.compile(r"\d+")


@dataclass(frozen=True, slots=True)
class DistilledItem:
    """One memory the model extracted, checked; `source_turns` are the cited turns' memory ids."""

    content: str
    kind: str
    tags: list[str]
    source_turns: list[int]
    trajectory: Trajectory | None = None  # the parts of a `trajectory` item


class InvalidOutput(ValueError):
    """The model's reply holds no usable list of memories; `reason` says what was wrong."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def parse_items(reply: str, turn_ids: Mapping[int, int]) -> list[DistilledItem]:
    """The valid memories in the model's reply, turn numbers mapped to memory ids by `turn_ids`.

    Accepts `{"memories": [...]}` (or `"items"`), a bare list, or either inside prose or a code
    fence. Items that fail the checks are dropped, and so are items that read like orders to an
    agent (INJECTION_PATTERNS). Raises InvalidOutput when there is no list, or when the list had
    items and none passed the checks; an empty list is a valid "nothing learned".
    """
    raw_items = find_json_list(reply, ("memories", "items"))
    items: list[DistilledItem] = []
    problems: list[str] = []
    suspicious = 0
    for position, raw in enumerate(raw_items, start=1):
        checked = _check_item(raw, turn_ids)
        if isinstance(checked, str):
            problems.append(f"item {position}: {checked}")
        elif any(pattern.search(checked.content) for pattern in INJECTION_PATTERNS):
            suspicious += 1
        else:
            items.append(checked)
    if raw_items and not items and not suspicious:
        shown = "; ".join(problems[:3]) + ("; ..." if len(problems) > 3 else "")
        raise InvalidOutput(f"none of the {len(raw_items)} memories was usable: {shown}")
    if suspicious:
        logger.warning("dropped %d distilled item(s) that read like orders to an agent", suspicious)
    if problems:
        logger.info("dropped %d distilled item(s) that failed the checks", len(problems))
    return items


def find_json_list(reply: str, keys: tuple[str, ...]) -> list[Any]:
    """The list of objects in a model's reply: the first JSON value in `reply` that is one, or
    an object holding one under the first of `keys` it has. Prose and code fences around it
    are skipped. Raises InvalidOutput saying what was wrong (shared by every LLM reply reader).
    """
    text = reply.strip()
    if not text:
        raise InvalidOutput("the reply is empty")
    decoder = json.JSONDecoder()
    first_error: json.JSONDecodeError | None = None
    found_json = False
    position = 0
    while match := _JSON_START.search(text, position):
        try:
            value, end = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError as exc:
            first_error = first_error or exc
            position = match.start() + 1
            continue
        found_json = True
        if isinstance(value, dict):
            value = next((value[key] for key in keys if key in value), None)
        if isinstance(value, list) and all(isinstance(item, dict) for item in value):
            return value
        position = end  # a value of the wrong shape: look after it, not inside it
    if found_json:
        raise InvalidOutput(f'the reply has no "{keys[0]}" list of objects')
    if first_error is not None:
        raise InvalidOutput(
            f"the reply is not valid JSON ({first_error.msg} at line {first_error.lineno}"
            f" column {first_error.colno})"
        )
    raise InvalidOutput("the reply holds no JSON object")


def _check_item(raw: dict[str, Any], turn_ids: Mapping[int, int]) -> DistilledItem | str:
    """The item, cleaned, or why it is unusable."""
    if _kind(raw.get("kind")) == "trajectory":
        return _check_trajectory(raw, turn_ids)
    content = raw.get("content")
    if not isinstance(content, str) or not content.strip():
        return "content is missing or empty"
    content = content.strip()
    if len(content) > MAX_CONTENT_CHARS:
        return f"content is longer than {MAX_CONTENT_CHARS} characters"
    if sentence_count(content) > MAX_SENTENCES:
        return "content is longer than 4 sentences"
    kind = _kind(raw.get("kind"))
    if kind is None:
        shown = preview(str(raw.get("kind")), 30)
        return f"kind {shown!r} is not one of {', '.join(DISTILL_KINDS)}"
    return DistilledItem(
        content=content,
        kind=kind,
        tags=_tags(raw.get("tags")),
        source_turns=_source_turns(raw.get("turns"), turn_ids),
    )


def _check_trajectory(raw: dict[str, Any], turn_ids: Mapping[int, int]) -> DistilledItem | str:
    """A trajectory item: task, worked and avoid in fields of their own, content made of them."""
    parts = [raw.get(name, "") for name in ("task", "worked", "avoid")]
    if not all(isinstance(part, str) for part in parts):
        return "a trajectory's task, worked and avoid must be text"
    try:
        trajectory = checked(Trajectory(*parts))
    except InvalidInput as problem:
        return f"trajectory: {problem.message}"
    return DistilledItem(
        content=trajectory_content(trajectory),
        kind="trajectory",
        tags=_tags(raw.get("tags")),
        source_turns=_source_turns(raw.get("turns"), turn_ids),
        trajectory=trajectory,
    )


def sentence_count(text: str) -> int:
    """Sentences in `text`, counted by the breaks after `.`, `!` or `?` followed by more text."""
    return len(_SENTENCE_BREAK.findall(text.strip())) + 1


def _kind(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    name = " ".join(value.lower().replace("_", " ").replace("-", " ").split())
    name = KIND_SYNONYMS.get(name, name)
    return name if name in DISTILL_KINDS else None


def _tags(value: Any) -> list[str]:
    """Lower-cased, de-duplicated tags of at most 40 characters, at most 8; others dropped."""
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list):
        return []
    tags: list[str] = []
    for tag in value:
        if not isinstance(tag, str):
            continue
        text = " ".join(tag.lower().strip().lstrip("#").split())
        if text and len(text) <= MAX_TAG_CHARS and text not in tags:
            tags.append(text)
    return tags[:MAX_TAGS]


def _source_turns(value: Any, turn_ids: Mapping[int, int]) -> list[int]:
    """Memory ids of the cited turns (3, "3", "T3" or "[T3]"); numbers not in `turn_ids` ignored."""
    values = value if isinstance(value, list) else [value]
    numbers: list[int] = []
    for item in values:
        if isinstance(item, int) and not isinstance(item, bool):
            numbers.append(item)
        elif isinstance(item, str):
            numbers.extend(int(digits) for digits in _TURN_NUMBER.findall(item))
    return sorted({turn_ids[n] for n in numbers if n in turn_ids})


def merge_items(results: Sequence[Sequence[DistilledItem]]) -> list[DistilledItem]:
    """All windows' items in order, one per content (ignoring case and spacing).

    A repeated item keeps the first one's content and kind and gains the others' tags and turns.
    """
    merged: dict[str, DistilledItem] = {}
    for items in results:
        for item in items:
            key = " ".join(item.content.lower().split())
            seen = merged.get(key)
            if seen is None:
                merged[key] = item
                continue
            tags = seen.tags + [tag for tag in item.tags if tag not in seen.tags]
            merged[key] = replace(
                seen,
                tags=tags[:MAX_TAGS],
                source_turns=sorted({*seen.source_turns, *item.source_turns}),
            )
    return list(merged.values())
