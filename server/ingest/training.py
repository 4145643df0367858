"""Claude Code transcripts as exchanges, and exchanges as training records.

An exchange is one human prompt and what the agent did about it: its text, its tool calls
with their whole arguments and the whole results. The importer's reader (claude_code.py)
keeps only prose and call summaries, so this one reads the records again with the same
rules for what a human prompt is (prose.py, FORMATS.md §1.9).

Rules chosen here, and why:

- An exchange runs from a human prompt of the main thread to the next prompt or slash-command
  echo. What follows a command echo belongs to no prompt (as in the journal): the command,
  not the user's words, asked for it.
- The assistant lines between results form one step: the lines of one message (streamed one
  block per line, FORMATS.md §1.4) and any text-only lines before the first result. A step is
  one assistant message with all its calls (parallel calls included), followed by the
  results in the order they arrived.
- Thinking blocks, synthetic lines ("No response requested.", API errors), meta lines,
  compaction summaries, hook context and other harness lines are left out; a compaction in
  the middle of an exchange leaves its steps before and after.
- An exchange the user interrupted (`[Request interrupted by user…]`, also written after a
  rejected call) is marked: its answer is partial, or it shows a call the user refused.
- A last step with text but no calls whose message stopped for tool use (`stop_reason:
  "tool_use"`) lost its calls: the transcript was cut (a crash, a half-written line).
- Sidechain lines (sub-agents of old versions, interleaved) are skipped: sub-agent
  transcripts are not exchanges of the user's; the parent's record holds the Agent call and
  the report it returned.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from server.core.redact import redact
from server.domain.training import cut_text, tool_definitions
from server.ingest.claude_code import read_records
from server.ingest.prose import assistant_prose, clean, tool_results, tool_uses, user_prose
from server.ingest.tool_calls import result_text

SYSTEM_PROMPT = (
    "You are a coding agent working in {cwd}. Use the tools to read, search and change files "
    "and to run commands; when the task is done, answer the user briefly."
)


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    input: Any  # the tool_use block's input, as written


@dataclass(slots=True)
class Step:
    """One assistant message: its text and calls, then the results that answered them."""

    texts: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    results: list[tuple[str, str]] = field(default_factory=list)  # (tool_use_id, text)
    message_ids: set[str] = field(default_factory=set)
    stop_reason: str | None = None  # of its last line


@dataclass(slots=True)
class Exchange:
    """A human prompt and the steps the agent took about it, up to the next prompt."""

    prompt_key: str  # the line's promptId (2.1+), else its uuid
    line_number: int
    prompt: str
    steps: list[Step] = field(default_factory=list)
    interrupted: bool = False

    @property
    def lost_calls(self) -> bool:
        """The answer announced tool calls the transcript does not hold (it was cut)."""
        last = self.steps[-1] if self.steps else None
        return last is not None and not last.calls and last.stop_reason == "tool_use"


@dataclass(frozen=True, slots=True)
class SessionExchanges:
    """What one session transcript holds for training."""

    cwd: str | None  # the last cwd seen: the project
    exchanges: list[Exchange]


@dataclass(frozen=True, slots=True)
class BuiltRecord:
    record: dict[str, Any]
    redactions: int  # secrets replaced in its texts
    results_cut: int  # tool results shortened to the message limit


class _SessionReader:
    def __init__(self) -> None:
        self.cwd: str | None = None
        self.exchanges: list[Exchange] = []
        self.current: Exchange | None = None
        self.seen_uuids: set[str] = set()

    def take(self, line_number: int, record: Mapping[str, Any]) -> None:
        if isinstance(record.get("cwd"), str) and record["cwd"]:
            self.cwd = record["cwd"]
        kind = record.get("type")
        if kind not in ("user", "assistant") or record.get("isSidechain"):
            return
        uuid = record.get("uuid")
        if isinstance(uuid, str):
            if uuid in self.seen_uuids:
                return  # a line written twice: keep the first
            self.seen_uuids.add(uuid)
        if kind == "user":
            self._take_user(line_number, record)
        elif self.current is not None:
            self._take_assistant(self.current, record)

    def _take_user(self, line_number: int, record: Mapping[str, Any]) -> None:
        results = tool_results(record)
        if results:
            if self.current is not None:
                for block in results:
                    tool_use_id = block.get("tool_use_id")
                    tool_use_id = tool_use_id if isinstance(tool_use_id, str) else ""
                    _file_result(self.current, tool_use_id, result_text(block))
            return
        prose = user_prose(record)
        if prose.skip is None:
            prompt_id = record.get("promptId")
            uuid = record.get("uuid")
            key = prompt_id if isinstance(prompt_id, str) and prompt_id else str(uuid or "")
            self.current = Exchange(key or f"line-{line_number}", line_number, prose.text)
            self.exchanges.append(self.current)
        elif prose.skip == "command":
            self.current = None
        elif prose.skip == "interrupt" and self.current is not None:
            self.current.interrupted = True

    def _take_assistant(self, exchange: Exchange, record: Mapping[str, Any]) -> None:
        prose = assistant_prose(record)
        if prose.skip == "synthetic":
            return
        known = {call.id for step in exchange.steps for call in step.calls}
        calls = [
            ToolCall(block["id"], str(block.get("name") or "unknown"), block.get("input"))
            for block in tool_uses(record)
            if isinstance(block.get("id"), str) and block["id"] not in known
        ]
        if prose.skip is not None and not calls:
            return  # thinking only, or nothing
        message = record.get("message")
        message = message if isinstance(message, Mapping) else {}
        message_id = message.get("id") if isinstance(message.get("id"), str) else None
        step = exchange.steps[-1] if exchange.steps else None
        if step is None or (step.results and message_id not in step.message_ids):
            step = Step()
            exchange.steps.append(step)
        if message_id is not None:
            step.message_ids.add(message_id)
        if prose.skip is None and prose.text not in step.texts:
            step.texts.append(prose.text)
        step.calls.extend(calls)
        stop_reason = message.get("stop_reason")
        step.stop_reason = stop_reason if isinstance(stop_reason, str) else None


def _file_result(exchange: Exchange, tool_use_id: str, text: str) -> None:
    """File a result with the step that made its call; one answering no call goes last."""
    steps = exchange.steps
    owner = next(
        (step for step in steps if any(call.id == tool_use_id for call in step.calls)), None
    )
    if owner is None:
        if not steps:
            steps.append(Step())
        owner = steps[-1]
    owner.results.append((tool_use_id, text))


def read_exchanges(path: Path) -> SessionExchanges:
    """The exchanges of a main session transcript, in the order of their prompts."""
    reader = _SessionReader()
    for line_number, record in read_records(path):
        try:
            reader.take(line_number, record)
        except (TypeError, ValueError, AttributeError, KeyError):
            continue  # a record with shapes no Claude Code version writes, as read_transcript
    return SessionExchanges(reader.cwd, reader.exchanges)


class _Redactor:
    """Runs every text through the redactor, counting what it replaced."""

    def __init__(self) -> None:
        self.count = 0

    def text(self, value: str) -> str:
        result = redact(clean(value))
        self.count += result.count
        return result.text

    def arguments(self, tool_input: Any) -> str:
        """A call's input as a JSON string, its secrets replaced.

        Each string is redacted on its own (a private key spans lines that JSON escapes), then
        the JSON text as a whole, which catches `"password": "..."` pairs; that second pass is
        kept only when the text still parses to an object.
        """
        text = json.dumps(_map_strings(tool_input, self.text), ensure_ascii=False)
        whole = redact(text)
        if whole.count:
            try:
                reparsed = json.loads(whole.text)
            except ValueError:
                reparsed = None
            if isinstance(reparsed, dict):
                self.count += whole.count
                return whole.text
        return text


def _map_strings(value: Any, change: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return change(value)
    if isinstance(value, list):
        return [_map_strings(item, change) for item in value]
    if isinstance(value, dict):
        return {key: _map_strings(item, change) for key, item in value.items()}
    return value


def exchange_record(exchange: Exchange, *, cwd: str | None, max_message_chars: int) -> BuiltRecord:
    """The exchange as a record in the OpenAI chat format, every text redacted.

    Tool results longer than `max_message_chars` are cut with a marker; nothing else is cut
    (a cut prompt, answer or argument would teach something that was not said), so a record
    can still be over the limits: the validator refuses it.
    """
    redactor = _Redactor()
    system = SYSTEM_PROMPT.format(cwd=cwd or "the user's project")
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": redactor.text(system)},
        {"role": "user", "content": redactor.text(exchange.prompt)},
    ]
    results_cut = 0
    for step in exchange.steps:
        text = redactor.text("\n\n".join(step.texts))
        assistant: dict[str, Any] = {"role": "assistant", "content": text or None}
        if step.calls:
            assistant["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": redactor.arguments(call.input)},
                }
                for call in step.calls
            ]
        messages.append(assistant)
        for tool_use_id, result in step.results:
            content, was_cut = cut_text(redactor.text(result), max_message_chars)
            results_cut += was_cut
            messages.append({"role": "tool", "tool_call_id": tool_use_id, "content": content})
    record: dict[str, Any] = {"messages": messages}
    tools = tool_definitions(messages)
    if tools:
        record["tools"] = tools
    return BuiltRecord(record, redactor.count, results_cut)
