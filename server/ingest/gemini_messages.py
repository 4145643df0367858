"""What one message of a Gemini CLI session says: its prose, its tool calls and how they went.

These are the rules about Gemini's message shapes (gemini-cli
`packages/core/src/services/chatRecordingService.ts`, PartListUnion content), kept apart from
the reader in `gemini.py`, which walks the lines and keeps the session's state. Why each
message is kept or skipped is in `gemini.py`'s docstring.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from server.core.models.journal import ERROR_CHARS, OUTPUT_PREVIEW_CHARS, ToolOutcome
from server.ingest.prose import clean
from server.ingest.tool_calls import TARGET_MAX_CHARS, output_excerpt, tool_target

__all__ = [
    "call_outcome",
    "gemini_prose",
    "gemini_tool_target",
    "message_calls",
    "user_prose",
    "without_hook_context",
]

_REFERENCED_FILES = "--- Content from referenced files ---"
_HOOK_CONTEXT = re.compile(r"<hook_context>.*?</hook_context>\s*", re.DOTALL)
_COMPRESSION_REPLIES = (
    "Got it. Thanks for the additional context!",
    "Got it. Thanks for the context!",
)
_EXIT_CODE = re.compile(r"^Exit Code: (-?\d+)\s*$", re.MULTILINE)
_SHELL_CUT_SHORT = ("Command was automatically cancelled", "Command was cancelled by user")
# Arguments naming what a Gemini tool acted on, beyond Claude Code's (tool_calls.tool_target):
# read_file's `absolute_path` (before `file_path`), `dir_path` (list_directory, grep_search,
# glob; `path` before), google_web_search's `query`, web_fetch's `prompt`.
_EXTRA_TARGET_FIELDS = ("absolute_path", "dir_path", "directory", "query", "prompt")
_TARGET_LIST_FIELDS = ("include", "paths")  # read_many_files


def gemini_tool_target(args: Any) -> str | None:
    """What a Gemini tool call acted on: Claude Code's fields first, then Gemini's own."""
    target = tool_target(args)
    if target is None:
        target = tool_target(args, fields=_EXTRA_TARGET_FIELDS)
    if target is not None or not isinstance(args, Mapping):
        return target
    # Lists of paths are Gemini's alone (read_many_files): tool_target reads strings only.
    for key in _TARGET_LIST_FIELDS:
        value = args.get(key)
        if isinstance(value, list) and (items := [v for v in value if isinstance(v, str)]):
            return clean(", ".join(items)[:TARGET_MAX_CHARS])
    return None


def _parts(content: Any) -> list[Mapping[str, Any]]:
    """A PartListUnion (string, part or list of both) as a list of parts."""
    if isinstance(content, str):
        return [{"text": content}]
    if isinstance(content, Mapping):
        return [content]
    if isinstance(content, list):
        return [
            {"text": p} if isinstance(p, str) else p
            for p in content
            if isinstance(p, (str, Mapping))
        ]
    return []


def _text(parts: list[Mapping[str, Any]]) -> str:
    """The text parts joined, thought parts left out."""
    return "".join(
        part["text"]
        for part in parts
        if isinstance(part.get("text"), str) and not part.get("thought")
    )


def without_hook_context(prompt: str) -> str:
    """A prompt without the `<hook_context>` blocks Gemini CLI folds into it: what hooks
    (ours among them: the session-start context) added earlier, which its BeforeAgent hook
    then sends back as part of the prompt."""
    return _HOOK_CONTEXT.sub("", prompt)


def user_prose(message: Mapping[str, Any], is_subagent: bool) -> tuple[str, str | None]:
    """(prose, None) for a user message somebody typed, else ("", reason)."""
    parts = _parts(message.get("content"))
    raw = _text(parts).strip()
    if any("functionResponse" in part for part in parts) and not raw:
        return "", "tool_result"
    if is_subagent:
        return "", "sidechain_prompt"
    if raw.startswith("<session_context>"):
        return "", "session_context"
    if "<state_snapshot>" in raw:
        return "", "compression_summary"
    shown = _parts(message.get("displayContent"))  # what was typed, when it differs
    text = (_text(shown) if shown else raw).split(_REFERENCED_FILES, 1)[0]
    text = _HOOK_CONTEXT.sub("", text).strip()
    if not text:
        if raw.startswith("<hook_context>"):
            return "", "hook_context"
        has_media = any("inlineData" in part or "fileData" in part for part in parts)
        return "", "image_only" if has_media else "empty"
    if text.startswith(("/", "?")):
        return "", "command"
    return clean(text), None


def gemini_prose(message: Mapping[str, Any]) -> tuple[str, str | None]:
    """(prose, None) for what a gemini message shows the user, else ("", reason)."""
    text = _text(_parts(message.get("content"))).strip()
    if text in _COMPRESSION_REPLIES:
        return "", "synthetic"
    if text:
        return clean(text), None
    if message.get("toolCalls"):
        return "", "tool_use"
    return "", "thinking_only" if message.get("thoughts") else "empty"


def _result_texts(result: Any) -> tuple[str, str]:
    """(output, error) a tool call's result parts carry (functionResponse output / error).

    Not tool_calls.result_text: Gemini's results are functionResponse parts, not tool_result
    blocks.
    """
    outputs: list[str] = []
    errors: list[str] = []
    for part in _parts(result):
        response = part.get("functionResponse")
        if isinstance(response, Mapping) and isinstance(response.get("response"), Mapping):
            body = response["response"]
            for key, bucket in (("output", outputs), ("content", outputs), ("error", errors)):
                if isinstance(body.get(key), str):
                    bucket.append(body[key])
        elif isinstance(part.get("text"), str) and not part.get("thought"):
            outputs.append(part["text"])
    return "\n".join(outputs), "\n".join(errors)


def call_outcome(call: Mapping[str, Any]) -> ToolOutcome | None:
    """How a recorded tool call went; None while it has no final status.

    Not tool_calls.outcome_of_result: Gemini records a `status`, not `is_error`, and reports a
    shell command that exited non-zero as a success. The excerpts are shared.
    """
    status = call.get("status")
    output, error_text = _result_texts(call.get("result"))
    display = call.get("resultDisplay")
    shown = _HOOK_CONTEXT.sub(
        "", display if isinstance(display, str) and display.strip() else output
    )
    if status == "success":
        if call.get("name") == "run_shell_command":
            if output.startswith(_SHELL_CUT_SHORT):
                return ToolOutcome(
                    False, output_excerpt(shown, OUTPUT_PREVIEW_CHARS), "interrupted"
                )
            codes = _EXIT_CODE.findall(output)  # the last one: Gemini's, after the output
            if codes and int(codes[-1]) != 0:
                return ToolOutcome(False, None, output_excerpt(shown, ERROR_CHARS) or "failed")
        return ToolOutcome(True, output_excerpt(shown, OUTPUT_PREVIEW_CHARS))
    if status in ("error", "cancelled"):
        error = output_excerpt(error_text or shown, ERROR_CHARS)
        return ToolOutcome(False, None, error or str(status))
    return None


def message_calls(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The tool calls a gemini message records, those with an id."""
    calls = message.get("toolCalls")
    if not isinstance(calls, list):
        return []
    return [c for c in calls if isinstance(c, Mapping) and isinstance(c.get("id"), str)]
