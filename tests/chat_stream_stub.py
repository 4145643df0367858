"""ScriptedChat: a real local HTTP server streaming OpenAI chat completions, as OpenCode calls it.

The model stand-in for the OpenCode tests, in the role tests/responses_stub.py plays for Codex:
OpenCode (a custom provider on its bundled `@ai-sdk/openai-compatible`, `baseURL` here) sends
`POST /v1/chat/completions` with `stream: true` and reads server-sent chunks. A request that
offers tools is answered, while the conversation holds fewer tool results than `calls`, with
the next tool call; otherwise (and for a request without tools, such as OpenCode's title
request) with the text `reply`. Every request body is kept, so a test can read what OpenCode
gave the model.

    with ScriptedChat([("bash", {"command": "ls"})]) as model:
        ...opencode run with the provider's baseURL = model.base_url...
        assert "ls" in json.dumps(model.requests[-1])
"""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.stub_server import QuietHandler, ScriptedModel, read_body, send_json

MODEL = "stub-coder"


class ScriptedChat(ScriptedModel):
    def __init__(self, calls: list[tuple[str, dict[str, Any]]], reply: str = "Done.") -> None:
        self.calls = calls
        self.reply = reply
        super().__init__()

    def chunks(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The stream's chunks answering one request."""
        number = self.record(body)
        done = sum(1 for m in body.get("messages", []) if m.get("role") == "tool")
        if body.get("tools") and done < len(self.calls):
            name, arguments = self.calls[done]
            call = {
                "index": 0,
                "id": f"call_{done + 1}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
            deltas = [({"role": "assistant", "tool_calls": [call]}, None), ({}, "tool_calls")]
        else:
            deltas = [({"role": "assistant", "content": self.reply}, None), ({}, "stop")]
        created = int(time.time())
        return [
            {
                "id": f"chatcmpl-{number}",
                "object": "chat.completion.chunk",
                "created": created,
                "model": MODEL,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            for delta, finish in deltas
        ]

    def handler(self) -> type[BaseHTTPRequestHandler]:
        chat = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                send_json(self, 200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})

            def do_POST(self) -> None:
                body = json.loads(read_body(self) or b"{}")
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                for chunk in chat.chunks(body):
                    self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

        return Handler
