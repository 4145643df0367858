"""What the items of a Codex CLI rollout say: the prose of a message, the target of a tool call
and how the call went.

These are the rules about Codex's own formats (core/src/contextual_user_message.rs for the
harness's fragments, the exec and apply_patch output forms), kept apart from the reader in
`codex.py`, which only walks the lines and keeps the session's state. Why each rule exists is
in `codex.py`'s docstring; tests/fixtures/codex/README.md names the Codex sources.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Mapping
from typing import Any

from server.core.models.journal import ERROR_CHARS, OUTPUT_PREVIEW_CHARS, ToolOutcome
from server.ingest.prose import Prose, clean
from server.ingest.tool_calls import TARGET_MAX_CHARS, output_excerpt, tool_target

__all__ = [
    "assistant_prose",
    "call_outcome",
    "call_summary",
    "content_parts",
    "context_cwd",
    "unwrap_line",
    "user_prose",
]

# (start, end) markers of the user-message parts Codex writes itself
# (core/src/contextual_user_message.rs), plus the older `<user_instructions>` block.
_CONTEXT_FRAGMENTS = (
    ("<environment_context>", "</environment_context>"),
    ("<user_instructions>", "</user_instructions>"),
    ("# agents.md instructions for ", "</instructions>"),
    ("<skill>", "</skill>"),
    ("<user_shell_command>", "</user_shell_command>"),
    ("<turn_aborted>", "</turn_aborted>"),
    ("<subagent_notification>", "</subagent_notification>"),
    ("<additional_context>", "</additional_context>"),
)
_IMAGE_TAG = re.compile(r"^</?image\b[^>]*>$", re.IGNORECASE)  # wraps an attached image
_CWD = re.compile(r"<cwd>(.*?)</cwd>", re.DOTALL)
_IDE_REQUEST = "## My request for Codex:"
# Lines of the header Codex puts before a command's output ("Output:" ends it).
_HEADER_LINE = re.compile(
    r"(?:Exit code: (?P<exit>-?\d+)|Process exited with code (?P<exited>-?\d+)"
    r"|Wall time: .*|Chunk ID: .*|Total output lines: .*|Original token count: .*"
    r"|Process running with session ID .*|Command: .*)$"
)
# Outputs Codex writes for a call that did not run or did not finish (no exit code).
_FAILURE_TEXT = re.compile(
    r"^(?:aborted$|err: |error: |execution error\b|failed to parse\b|[a-z_]+ failed: "
    r"|unsupported (?:call|custom tool call|payload)\b|apply_patch verification failed\b"
    r"|(?:exec command |patch )?rejected by user$)",
    re.IGNORECASE,
)
_PATCH_FILE = re.compile(r"^\*\*\* (?:(?:Add|Update|Delete) File|Move to): (.+?)\s*$", re.M)
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "fish", "pwsh", "powershell", "cmd"})


def unwrap_line(record: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
    """(kind, payload) of an envelope line or of an older bare line; ValueError for neither."""
    if "payload" in record:
        payload, kind = record["payload"], record.get("type")
        if not isinstance(payload, Mapping) or not isinstance(kind, str):
            raise ValueError("an envelope needs a type and an object payload")
        return kind, payload
    if record.get("record_type") == "state":
        return "state", record
    if "type" not in record and isinstance(record.get("id"), str):
        return "session_meta", record
    if isinstance(record.get("type"), str):
        return "response_item", record
    raise ValueError("neither an envelope nor a response item")


def content_parts(content: Any) -> list[Mapping[str, Any]]:
    """A message's or output's content (a string or a list of parts) as a list of parts."""
    if isinstance(content, str):
        return [{"type": "input_text", "text": content}]
    if isinstance(content, list):
        return [part for part in content if isinstance(part, Mapping)]
    return []


def _texts(parts: list[Mapping[str, Any]], kinds: tuple[str, ...]) -> list[str]:
    return [
        part["text"]
        for part in parts
        if part.get("type") in kinds and isinstance(part.get("text"), str)
    ]


def _is_context(text: str) -> bool:
    folded = text.strip().lower()
    return any(folded.startswith(a) and folded.endswith(b) for a, b in _CONTEXT_FRAGMENTS)


def context_cwd(parts: list[Mapping[str, Any]]) -> str | None:
    """The last working directory a user message's environment context names, if any."""
    found = None
    for text in _texts(parts, ("input_text",)):
        if _is_context(text) and (cwd := _CWD.search(text)) and cwd.group(1).strip():
            found = cwd.group(1).strip()
    return found


def user_prose(parts: list[Mapping[str, Any]]) -> Prose:
    """What the user typed, without Codex's contextual fragments and image tags."""
    kept = []
    for text in _texts(parts, ("input_text", "text")):
        if _is_context(text) or _IMAGE_TAG.match(text.strip()):
            continue
        if _IDE_REQUEST in text:
            text = text.split(_IDE_REQUEST, 1)[1]
        if text.strip():
            kept.append(text.strip())
    if kept:
        return Prose(clean("\n\n".join(kept)), None)
    if any(part.get("type") == "input_image" for part in parts):
        return Prose("", "image_only")
    return Prose("", "boilerplate" if _texts(parts, ("input_text", "text")) else "empty")


def assistant_prose(parts: list[Mapping[str, Any]]) -> Prose:
    """The output text of an assistant message, its parts joined."""
    texts = [text.strip() for text in _texts(parts, ("output_text", "text"))]
    joined = "\n\n".join(text for text in texts if text)
    return Prose(clean(joined), None) if joined else Prose("", "empty")


def call_input(item: Mapping[str, Any]) -> dict[str, Any]:
    """What a call item asked for, for the judge of memory use: a function's arguments (parsed
    when they are JSON), a custom tool's input, a shell call's action, a web search's query."""
    called: dict[str, Any] = {}
    for key in ("arguments", "input", "action", "query"):
        if key in item:
            value = item[key]
            called[key] = (_json_object(value) or value) if key == "arguments" else value
    return called


def _json_object(value: Any) -> Mapping[str, Any] | None:
    if isinstance(value, Mapping):
        return value
    if not isinstance(value, str):
        return None
    try:
        parsed = json.loads(value)
    except (ValueError, RecursionError):
        return None
    return parsed if isinstance(parsed, Mapping) else None


def _short(text: str) -> str | None:
    # Not tool_target: a Codex script or query often starts with a newline or indentation
    # (heredocs, `bash -lc` bodies), which is stripped before the cut, not counted in it.
    return clean(text.strip()[:TARGET_MAX_CHARS]) or None


def _patch_target(patch: str) -> str | None:
    """The files an apply_patch body touches, in order, comma-separated."""
    paths = list(dict.fromkeys(_PATCH_FILE.findall(patch)))
    return _short(", ".join(paths)) if paths else None


def _command_target(command: Any) -> str | None:
    """A shell call's command line: the script of `bash -lc <script>`, else the joined argv."""
    if isinstance(command, str):
        script = command
    elif isinstance(command, list) and command and all(isinstance(a, str) for a in command):
        shell = os.path.basename(command[0]).lower().removesuffix(".exe")
        if len(command) >= 3 and shell in _SHELLS and command[-2] in ("-c", "-lc", "/c"):
            script = command[-1]
        elif command[0] == "apply_patch" and len(command) == 2:
            script = command[1]
        else:
            script = shlex.join(command)
    else:
        return None
    if "*** Begin Patch" in script:
        return _patch_target(script)
    return _short(script)


def _function_target(name: str, arguments: Any) -> str | None:
    """What a function call acted on, from its JSON arguments string."""
    args = _json_object(arguments)
    if args is None:
        return None
    if name == "apply_patch" and isinstance(args.get("input"), str):
        return _patch_target(args["input"])
    for key in ("command", "cmd"):
        if isinstance(args.get(key), (str, list)):
            return _command_target(args[key])
    return tool_target(args)


def call_summary(item: Mapping[str, Any]) -> tuple[str, str | None, bool | None]:
    """(tool, target, success) of a call item; success is known here only for a web search."""
    kind, success = item.get("type"), None
    action = _json_object(item.get("action")) or {}
    if kind == "local_shell_call":
        tool, target = "local_shell", _command_target(action.get("command"))
    elif kind == "web_search_call":
        query = action.get("query") or action.get("url") or action.get("pattern")
        tool, target = "web_search", _short(query) if isinstance(query, str) else None
        success = {"completed": True, "failed": False}.get(str(item.get("status")))
    else:
        tool = str(item.get("name") or "unknown")
        if kind == "custom_tool_call":
            raw = item.get("input")
            raw = raw if isinstance(raw, str) else ""
            target = _patch_target(raw) if tool == "apply_patch" else _short(raw)
        else:
            target = _function_target(tool, item.get("arguments"))
    return tool, target, success


def _output_text(output: Any) -> str:
    # Not tool_calls.result_text: Codex output parts are typed input_text / output_text.
    if isinstance(output, str):
        return output
    return "\n".join(_texts(content_parts(output), ("input_text", "output_text", "text")))


def _exit_status(text: str) -> tuple[int | None, str]:
    """(exit code, output) of a command's result, from either form Codex writes."""
    if text.startswith("{"):
        result = _json_object(text)
        metadata = result.get("metadata") if result else None
        if result and isinstance(result.get("output"), str) and isinstance(metadata, Mapping):
            code = metadata.get("exit_code")
            return (code if isinstance(code, int) else None), result["output"]
    lines = text.split("\n")
    code = None
    for index, line in enumerate(lines):
        if line == "Output:" and index > 0:
            return code, "\n".join(lines[index + 1 :])
        header = _HEADER_LINE.match(line)
        if header is None:
            break
        value = header.group("exit") or header.group("exited")
        code = int(value) if value is not None else code
    return None, text


def call_outcome(output: Any) -> ToolOutcome:
    """How a call went, from its output item's `output` (text, content parts or an object).

    Not tool_calls.outcome_of_result: Codex has no `is_error` flag; failure is read from an
    exit code, an explicit `success`, or a known failure text. The excerpts are shared.
    """
    flag = None
    if isinstance(output, Mapping):
        flag = output.get("success") if isinstance(output.get("success"), bool) else None
        output = output.get("content")
    code, text = _exit_status(_output_text(output))
    if flag is None and code is None:
        failed = bool(_FAILURE_TEXT.match(text.strip()))
    else:
        failed = flag is False or (code is not None and code != 0)
    if failed:
        shown = f"Exit code {code}\n{text}" if code else text
        return ToolOutcome(False, None, output_excerpt(shown, ERROR_CHARS) or "failed")
    return ToolOutcome(True, output_excerpt(text, OUTPUT_PREVIEW_CHARS), None)
