"""ScriptedShell: a real local HTTP server speaking OpenAI's Responses API, as Codex calls it.

The model stand-in for the Codex CLI tests, in the role tests/llm_stub.py plays for the chat
API: Codex (a configured `model_providers` entry with `base_url` here and `wire_api =
"responses"`) sends `POST /v1/responses` and reads the answer as server-sent events. Each
answer is one output item: while the conversation holds fewer tool outputs than `commands`, a
shell call running the next command; then the assistant message `reply`. Every request body
is kept, so a test can read what Codex gave the model (prompt, hook context, tool results).

    with ScriptedShell(["echo hi"]) as model:
        ...codex exec with the provider's base_url = model.base_url...
        assert "hi" in json.dumps(model.requests[1])

The SSE events are the three Codex needs for one item (`response.created`,
`response.output_item.done`, `response.completed`), as its own tests script them
(codex-rs/core/tests/common/responses.rs).
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.stub_server import QuietHandler, ScriptedModel, read_body, send_bytes

SHELL_TOOLS = ("exec_command", "shell_command", "shell")


class ScriptedShell(ScriptedModel):
    def __init__(self, commands: list[str], reply: str = "Done.") -> None:
        self.commands = commands
        self.reply = reply
        super().__init__()

    def answer(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The SSE events answering one request."""
        number = self.record(body)
        items = [item for item in body.get("input", []) if isinstance(item, dict)]
        done = sum(1 for item in items if item.get("type") == "function_call_output")
        if done < len(self.commands):
            tools = {tool.get("name") for tool in body.get("tools", []) if isinstance(tool, dict)}
            name = next((tool for tool in SHELL_TOOLS if tool in tools), "shell")
            command = self.commands[done]
            arguments: dict[str, Any] = (
                {"cmd": command}
                if name == "exec_command"
                else {"command": command if name == "shell_command" else ["bash", "-lc", command]}
            )
            item = {
                "type": "function_call",
                "name": name,
                "arguments": json.dumps(arguments),
                "call_id": f"call_{done}",
            }
        else:
            item = {
                "type": "message",
                "role": "assistant",
                "id": f"msg_{number}",
                "content": [{"type": "output_text", "text": self.reply}],
            }
        usage = {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}
        response = f"resp_{number}"
        return [
            {"type": "response.created", "response": {"id": response}},
            {"type": "response.output_item.done", "item": item},
            {"type": "response.completed", "response": {"id": response, "usage": usage}},
        ]

    def handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                body = json.loads(read_body(self) or b"{}")
                if not self.path.endswith("/responses"):
                    self.send_error(404)
                    return
                events = stub.answer(body)
                data = "".join(
                    f"event: {event['type']}\ndata: {json.dumps(event)}\n\n" for event in events
                ).encode()
                send_bytes(self, 200, data, "text/event-stream")

            def do_GET(self) -> None:
                self.send_error(404)

        return Handler
