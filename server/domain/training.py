"""Training records for fine-tuning a local model on the user's own sessions: the rules.

A record is one human prompt and what the agent did about it, in the OpenAI chat fine-tuning
format with tool calls, which Hugging Face TRL's SFTTrainer reads as it is:

    {"messages": [{"role": "system", ...}, {"role": "user", ...},
                  {"role": "assistant", "content": text or null,
                   "tool_calls": [{"id", "type": "function",
                                   "function": {"name", "arguments": "<JSON object>"}}]},
                  {"role": "tool", "tool_call_id", "content"}, ...,
                  {"role": "assistant", "content": "the answer"}],
     "tools": [{"type": "function", "function": {"name", "parameters"}}]}

No other field: the format has none for metadata, so session and project go to a manifest.
`validate_record` is the gate every record passes before it is written; the rest are the
pure pieces of the export (sizes, cutting, dedup hash, the split by session).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# About 2,000 and 8,000 tokens: what a small local model is fine-tuned on at once.
DEFAULT_MAX_MESSAGE_CHARS = 8_000
DEFAULT_MAX_RECORD_CHARS = 32_000
DEFAULT_VALIDATION_SHARE = 0.1

RECORD_FIELDS = frozenset({"messages", "tools"})
ROLES = frozenset({"system", "user", "assistant", "tool"})


@dataclass(frozen=True, slots=True)
class Problem:
    """Why a record cannot be written."""

    code: str  # short key the export counts by: "missing_result", "too_long", ...
    message: str  # one line for the user


def record_line(record: Mapping[str, Any]) -> str:
    """The record as one JSONL line (without the newline): what is written and measured."""
    return json.dumps(record, ensure_ascii=False)


def record_hash(record: Mapping[str, Any]) -> str:
    """sha256 of the record's messages: equal for records that would teach the same thing."""
    canonical = json.dumps(record.get("messages"), ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def message_chars(message: Mapping[str, Any]) -> int:
    """Characters a message puts before the model: its content, its calls' names and arguments."""
    content = message.get("content")
    size = len(content) if isinstance(content, str) else 0
    for call in _calls(message):
        function = call.get("function")
        if isinstance(function, Mapping):
            size += sum(
                len(v)
                for v in (function.get("name"), function.get("arguments"))
                if isinstance(v, str)
            )
    return size


def cut_text(text: str, limit: int) -> tuple[str, bool]:
    """`text` cut to at most `limit` characters, ending with a marker that says how much went.

    Returns the text and whether it was cut.
    """
    if len(text) <= limit:
        return text, False
    kept = max(limit - 60, 0)  # room for the marker
    marker = f"\n[... {len(text) - kept:,} more characters cut]"
    return (text[:kept] + marker)[:limit], True


def tool_definitions(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A function definition for each tool the messages call, in order of first call.

    Claude Code's own tool schemas are not in the transcripts, so each definition's
    parameters are the argument names the calls used, typed when every call agreed.
    """
    seen: dict[str, dict[str, set[str]]] = {}
    for message in messages:
        for call in _calls(message):
            function = call.get("function")
            if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
                continue
            parameters = seen.setdefault(function["name"], {})
            arguments = _json_object(function.get("arguments"))
            for key, value in (arguments or {}).items():
                parameters.setdefault(key, set()).add(_json_type(value))
    return [
        {
            "type": "function",
            "function": {
                "name": name,
                "parameters": {
                    "type": "object",
                    "properties": {
                        key: _parameter_schema(types) for key, types in sorted(parameters.items())
                    },
                },
            },
        }
        for name, parameters in seen.items()
    ]


def validate_record(record: Any, *, max_message_chars: int, max_record_chars: int) -> list[Problem]:
    """Everything wrong with a record; an empty list means it may be written.

    Checked: only `messages` and `tools` fields; roles known and in order (system first if
    at all, then the user, and an assistant answer last); every tool call with an id, a name
    and arguments that parse as a JSON object, answered by exactly one tool result right
    after it; every tool result answering a call; every called tool defined in `tools`; no
    message over `max_message_chars` and the record's line not over `max_record_chars`.
    """
    if not isinstance(record, Mapping):
        return [Problem("shape", "a record must be a JSON object")]
    problems: list[Problem] = []
    extra = sorted(set(record) - RECORD_FIELDS)
    if extra:
        problems.append(Problem("shape", f"fields the format does not allow: {', '.join(extra)}"))
    messages = record.get("messages")
    if (
        not isinstance(messages, list)
        or not messages
        or not all(isinstance(m, Mapping) for m in messages)
    ):
        return [*problems, Problem("shape", "messages must be a non-empty list of objects")]
    problems += _order_problems(messages)
    problems += _call_problems(messages)
    problems += _tool_list_problems(record.get("tools"), messages)
    problems += _size_problems(record, messages, max_message_chars, max_record_chars)
    return problems


def session_fraction(session_id: str) -> float:
    """Where a session falls in [0, 1): the same for the same id on every machine and run."""
    digest = hashlib.sha256(session_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def validation_sessions(session_ids: Iterable[str], share: float) -> set[str]:
    """The sessions whose records go to validation: those whose fraction is below `share`.

    With two sessions or more, and `share` above 0, neither side is left empty: the lowest
    session goes to validation if none fell there, the highest stays in training if all did.
    A single session always trains.
    """
    ids = sorted(set(session_ids), key=session_fraction)
    if share <= 0 or len(ids) < 2:
        return set()
    chosen = {session for session in ids if session_fraction(session) < share}
    if not chosen:
        chosen = {ids[0]}
    if len(chosen) == len(ids):
        chosen.discard(ids[-1])
    return chosen


def _calls(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    calls = message.get("tool_calls")
    if not isinstance(calls, list):
        return []
    return [call for call in calls if isinstance(call, Mapping)]


def _json_object(text: Any) -> dict[str, Any] | None:
    if not isinstance(text, str):
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _parameter_schema(types: set[str]) -> dict[str, str]:
    # A schema without "type" accepts any value. Mixed types are described, not listed as a
    # "type" array: dataset loaders (Arrow) refuse a field that is a string in one record and
    # a list in another.
    if len(types) == 1:
        return {"type": next(iter(types))}
    return {"description": " or ".join(sorted(types))}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _order_problems(messages: Sequence[Mapping[str, Any]]) -> list[Problem]:
    problems = []
    for number, message in enumerate(messages, start=1):
        role = message.get("role")
        content = message.get("content")
        if role not in ROLES:
            problems.append(Problem("order", f"message {number} has an unknown role {role!r}"))
        elif role == "system" and number != 1:
            problems.append(
                Problem("order", f"message {number} is a system message after the start")
            )
        elif role in ("system", "user") and not (isinstance(content, str) and content.strip()):
            problems.append(Problem("empty", f"message {number} ({role}) has no text"))
        elif role == "assistant" and not (
            (isinstance(content, str) and content.strip()) or _calls(message)
        ):
            problems.append(
                Problem("empty", f"message {number} (assistant) has no text and no calls")
            )
        elif role == "assistant" and content is not None and not isinstance(content, str):
            problems.append(Problem("shape", f"message {number} (assistant) content is not text"))
        elif role == "tool" and not isinstance(content, str):
            problems.append(Problem("shape", f"message {number} (tool) content is not text"))
    first = next((m.get("role") for m in messages if m.get("role") != "system"), None)
    if first != "user":
        problems.append(Problem("order", "the conversation does not start with a user message"))
    last = messages[-1]
    if last.get("role") != "assistant" or _calls(last) or not last.get("content"):
        problems.append(Problem("no_answer", "the record does not end with an assistant answer"))
    return problems


def _call_problems(messages: Sequence[Mapping[str, Any]]) -> list[Problem]:
    problems: list[Problem] = []
    pending: dict[str, str] = {}  # calls of the last assistant message still without a result
    called: set[str] = set()

    def close() -> None:
        problems.extend(
            Problem("missing_result", f"call {call_id} ({name}) has no result")
            for call_id, name in pending.items()
        )
        pending.clear()

    for number, message in enumerate(messages, start=1):
        if message.get("role") != "tool":
            close()
            for call in _calls(message) if message.get("role") == "assistant" else []:
                call_id, name, problem = _check_call(call, number)
                if problem is not None:
                    problems.append(problem)
                if call_id in called:
                    problems.append(Problem("duplicate_call", f"call id {call_id} is used twice"))
                elif call_id:
                    called.add(call_id)
                    pending[call_id] = name
            continue
        answered = message.get("tool_call_id")
        if isinstance(answered, str) and answered in pending:
            del pending[answered]
        elif isinstance(answered, str) and answered in called:
            problems.append(
                Problem("misplaced_result", f"call {answered} has a second or late result")
            )
        else:
            problems.append(
                Problem("orphan_result", f"message {number} (tool) answers no call: {answered!r}")
            )
    close()
    return problems


def _check_call(call: Mapping[str, Any], number: int) -> tuple[str, str, Problem | None]:
    """A call's id and name, and what is wrong with it, if anything."""
    call_id = _text(call.get("id"))
    function = call.get("function")
    function = function if isinstance(function, Mapping) else {}
    name = _text(function.get("name"))
    if not call_id or not name or call.get("type") != "function":
        return (
            call_id,
            name,
            Problem(
                "bad_call", f"message {number} has a call without an id, a name or type function"
            ),
        )
    if _json_object(function.get("arguments")) is None:
        return (
            call_id,
            name,
            Problem("bad_arguments", f"arguments of call {call_id} ({name}) are not a JSON object"),
        )
    return call_id, name, None


def _tool_list_problems(tools: Any, messages: Sequence[Mapping[str, Any]]) -> list[Problem]:
    if tools is None:
        return []
    if not isinstance(tools, list):
        return [Problem("shape", "tools must be a list")]
    defined = set()
    for tool in tools:
        function = tool.get("function") if isinstance(tool, Mapping) else None
        if (
            not isinstance(tool, Mapping)
            or tool.get("type") != "function"
            or not isinstance(function, Mapping)
            or not isinstance(function.get("name"), str)
            or not isinstance(function.get("parameters"), Mapping)
        ):
            return [Problem("shape", "every tool must be a function with a name and parameters")]
        defined.add(function["name"])
    called = {
        call["function"]["name"]
        for message in messages
        for call in _calls(message)
        if isinstance(call.get("function"), Mapping)
        and isinstance(call["function"].get("name"), str)
    }
    return [
        Problem("undefined_tool", f"tool {name} is called but not defined in tools")
        for name in sorted(called - defined)
    ]


def _size_problems(
    record: Mapping[str, Any],
    messages: Sequence[Mapping[str, Any]],
    max_message_chars: int,
    max_record_chars: int,
) -> list[Problem]:
    problems = [
        Problem(
            "too_long",
            f"message {number} ({message.get('role')}) has {size:,} characters, "
            f"over {max_message_chars:,}",
        )
        for number, message in enumerate(messages, start=1)
        if (size := message_chars(message)) > max_message_chars
    ]
    size = len(record_line(record))
    if size > max_record_chars:
        problems.append(
            Problem("too_long", f"the record has {size:,} characters, over {max_record_chars:,}")
        )
    return problems
