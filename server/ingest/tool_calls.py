"""A tool call's input and result, read into the journal's terms, from a transcript or a hook.

The transcript reader (claude_code.py) reads a call from its tool_use block and its result
from the tool_result block (and the line's structured `toolUseResult`, FORMATS.md §1.5); a
PostToolUse hook sends `tool_input` and `tool_response` (the `toolUseResult` shape), and
PostToolUseFailure `error` and `is_interrupt`. Both make the input summary and the output
excerpt with the same functions, so an import of a session the hooks already reported finds
its calls (by tool_use_id) saying the same things, and only fills in what the hooks lacked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from server.core.models.journal import ERROR_CHARS, OUTPUT_PREVIEW_CHARS, SessionEvent, ToolOutcome
from server.ingest.prose import clean

TARGET_MAX_CHARS = 500  # a tool event's target is cut to this many characters
# Input fields naming what a tool acted on, most telling first (Grep: the pattern, not the repo).
_TARGET_FIELDS = ("command", "file_path", "notebook_path", "pattern", "path", "url")
# Only this much of a tool's output is looked at for its preview and error (outputs reach MBs).
_OUTPUT_SCAN_CHARS = 16_000
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_TOOL_USE_ERROR = re.compile(r"</?tool_use_error>")
# Read results number their lines: 2.0 `     1→text`, 2.1 `1\ttext` (FORMATS.md §1.4).
_LINE_NUMBER = re.compile(r"^ *\d+(?:→|\t)")
# A spilled output keeps only a preview inline (FORMATS.md §1.5).
_PERSISTED = re.compile(
    r"<persisted-output>.*?Preview \([^)]*\):\n?(.*?)(?:</persisted-output>|$)", re.DOTALL
)
_REJECTED = "User rejected tool use"


def tool_target(tool_input: Any, fields: tuple[str, ...] = _TARGET_FIELDS) -> str | None:
    """What a call acted on: its command, else its file path, pattern or url; cut, cleaned.

    `fields` lets another agent's reader look, in the same way, at the fields its tools use.
    """
    if not isinstance(tool_input, Mapping):
        return None
    for key in fields:
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return clean(value[:TARGET_MAX_CHARS])
    return None


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def result_text(block: Mapping[str, Any]) -> str:
    """The text a tool_result carried: its string content, or its text blocks in order."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts = [
        part["text"]
        for part in content
        if isinstance(part, Mapping)
        and part.get("type") == "text"
        and isinstance(part.get("text"), str)
        # An Agent result ends with `agentId: … <usage>…</usage>`: bookkeeping, not output.
        and not (part["text"].startswith("agentId:") and "<usage>" in part["text"])
    ]
    return "\n".join(texts)


def output_excerpt(text: str, limit: int) -> str | None:
    """`text` as a short excerpt: wrappers, ANSI escapes, line numbers and blank lines removed.

    Lines keep their order and breaks; runs of whitespace inside a line become one space.
    """
    text = _ANSI.sub("", _TOOL_USE_ERROR.sub("", text[:_OUTPUT_SCAN_CHARS])).strip()
    spilled = _PERSISTED.match(text)
    if spilled:
        text = spilled.group(1)
    lines = [line for line in text.splitlines() if line.strip()]
    if lines and all(_LINE_NUMBER.match(line) for line in lines[:5]):
        lines = [_LINE_NUMBER.sub("", line, count=1) for line in lines]
    kept = [" ".join(line.split()) for line in lines]
    text = "\n".join(line for line in kept if line)
    return cut(clean(text), limit) if text else None


def outcome_of_result(
    block: Mapping[str, Any], record: Mapping[str, Any], only_result: bool
) -> ToolOutcome:
    """How one tool call went, from its tool_result block and the line that carries it.

    A failed call's result text is its error, not its output, so it has no preview (as a
    PostToolUseFailure hook reports it); an interrupted run keeps its partial output.
    """
    structured = record.get("toolUseResult") if only_result else None
    rejected = bool(only_result and record.get("toolDenialKind")) or structured == _REJECTED
    interrupted = isinstance(structured, Mapping) and structured.get("interrupted") is True
    failed = bool(block.get("is_error")) or rejected
    failed = failed or (isinstance(structured, str) and structured.startswith("Error:"))
    text = result_text(block)
    prompt_id = record.get("promptId")
    prompt_key = prompt_id if isinstance(prompt_id, str) and prompt_id else None
    if failed:
        error = output_excerpt(text, ERROR_CHARS)
        if error is None and isinstance(structured, str):
            error = output_excerpt(structured, ERROR_CHARS)
        error = error or ("interrupted" if interrupted else "failed")
        return ToolOutcome(False, None, error, prompt_key)
    preview = output_excerpt(text, OUTPUT_PREVIEW_CHARS)
    if interrupted:
        return ToolOutcome(False, preview, "interrupted", prompt_key)
    return ToolOutcome(True, preview, None, prompt_key)


def call_from_hook(payload: dict[str, Any], *, project: str, at: datetime) -> SessionEvent | None:
    """The call a PostToolUse / PostToolUseFailure payload describes; None without an id."""
    tool_use_id = payload.get("tool_use_id")
    if not isinstance(tool_use_id, str) or not tool_use_id:
        return None
    failed = payload.get("hook_event_name") == "PostToolUseFailure"
    response = payload.get("tool_response")
    interrupted = isinstance(response, dict) and response.get("interrupted") is True
    error = None
    if failed:
        error = str(payload.get("error") or "").strip() or (
            "interrupted" if payload.get("is_interrupt") else "failed"
        )
    elif interrupted:
        error = "interrupted"
    return SessionEvent(
        session_id=str(payload.get("session_id") or ""),
        agent_id=payload.get("agent_id") or None,
        record_uuid=None,
        tool_use_id=tool_use_id,
        tool=str(payload.get("tool_name") or "unknown"),
        target=tool_target(payload.get("tool_input")),
        success=not (failed or interrupted),
        at=at,
        project=project,
        prompt_key=payload.get("prompt_id") or None,
        output_preview=None if failed else response_preview(response),
        error=error[:ERROR_CHARS] if error else None,
    )


def response_preview(response: Any) -> str | None:
    """The start of what a tool returned, from the structured shapes tools answer with."""
    if response is None:
        return None
    text = response if isinstance(response, str) else None
    if isinstance(response, Mapping):
        text = _response_text(response)
    if text is None:
        text = json.dumps(response, ensure_ascii=False)[:OUTPUT_PREVIEW_CHARS]
    return output_excerpt(text, OUTPUT_PREVIEW_CHARS)


def _response_text(response: Mapping[str, Any]) -> str:
    for key in ("stdout", "stderr", "content", "output", "result"):
        value = response.get(key)
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, list):  # Agent: [{"type": "text", "text": ...}]
            texts = [b.get("text") for b in value if isinstance(b, Mapping)]
            joined = "\n".join(t for t in texts if isinstance(t, str))
            if joined.strip():
                return joined
    file = response.get("file")
    if isinstance(file, Mapping) and isinstance(file.get("content"), str):
        return str(file["content"])
    names = response.get("filenames")
    if isinstance(names, list):
        return "\n".join(str(name) for name in names)
    if isinstance(response.get("filePath"), str):
        return f"{response.get('type') or 'changed'} {response['filePath']}"
    return json.dumps(response, ensure_ascii=False)[:OUTPUT_PREVIEW_CHARS]


def action_text(values: object, limit: int) -> str:
    """A tool input as `key: value` lines of its scalar values, depth first, cut at `limit`."""
    lines: list[str] = []
    _flatten(values, "", lines)
    return "\n".join(lines)[:limit]


def _flatten(value: object, key: str, lines: list[str]) -> None:
    if isinstance(value, dict):
        for name, item in value.items():
            _flatten(item, str(name), lines)
    elif isinstance(value, list):
        for item in value:
            _flatten(item, key, lines)
    elif isinstance(value, str | int | float) and not isinstance(value, bool):
        lines.append(f"{key}: {value}" if key else str(value))
