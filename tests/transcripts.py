"""Hand-written Claude Code sessions, for cases the shared fixtures do not hold.

Lines follow the 2.1 envelope of FORMATS.md §1.2 with only the fields the readers look at:
a human prompt, assistant text and tool_use lines (one block per line, as streamed), and
tool_result lines.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any


class SessionWriter:
    """Builds one session transcript line by line; `write` puts it under a projects root."""

    def __init__(
        self, session_id: str, cwd: str = "/home/dev/demo", *, start: datetime | None = None
    ) -> None:
        """`start`: the first line's time (one second per line after it); by default a fixed
        day in May 2026."""
        self.session_id = session_id
        self.cwd = cwd
        self.start = start
        self.lines: list[dict[str, Any]] = []
        self.prompt_id: str | None = None

    def _record(self, kind: str, content: Any, **extra: Any) -> dict[str, Any]:
        number = len(self.lines) + 1
        record = {
            "type": kind,
            "uuid": f"{self.session_id[:8]}-{number:04d}",
            "parentUuid": self.lines[-1]["uuid"] if self.lines else None,
            "isSidechain": False,
            "sessionId": self.session_id,
            "cwd": self.cwd,
            "version": "2.1.120",
            "timestamp": self._time(number),
            "message": {"role": kind, "content": content},
            **extra,
        }
        self.lines.append(record)
        return record

    def _time(self, number: int) -> str:
        if self.start is None:
            return f"2026-05-01T10:{number // 60:02d}:{number % 60:02d}.000Z"
        return (self.start + timedelta(seconds=number)).isoformat().replace("+00:00", "Z")

    def prompt(self, text: str) -> SessionWriter:
        self.prompt_id = f"prompt-{len(self.lines) + 1}"
        self._record("user", text, promptId=self.prompt_id)
        return self

    def say(self, text: str, *, message_id: str | None = None) -> SessionWriter:
        record = self._record("assistant", [{"type": "text", "text": text}])
        record["message"].update(id=message_id or f"msg-{len(self.lines)}", stop_reason="end_turn")
        return self

    def call(
        self, tool_use_id: str, name: str, tool_input: dict[str, Any], *, message_id: str
    ) -> SessionWriter:
        block = {"type": "tool_use", "id": tool_use_id, "name": name, "input": tool_input}
        record = self._record("assistant", [block])
        record["message"].update(id=message_id, stop_reason="tool_use")
        return self

    def result(self, tool_use_id: str, content: str) -> SessionWriter:
        block = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
        self._record("user", [block], promptId=self.prompt_id)
        return self

    def write(self, projects: Path, folder: str = "-home-dev-demo") -> Path:
        path = projects / folder / f"{self.session_id}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(line) + "\n" for line in self.lines), encoding="utf-8")
        return path
