"""ScriptedReply: a real local HTTP server speaking Anthropic's Messages API to Claude Code.

The model stand-in for Claude Code sessions (`claude -p` with `ANTHROPIC_BASE_URL` here and any
`ANTHROPIC_API_KEY`), in the role tests/responses_stub.py plays for Codex: every
`POST /v1/messages` is answered with the assistant text `reply` (as server-sent events when the
request streams, as one JSON message otherwise) and its body is kept, so a test can read what
Claude Code gave the model (the prompt, and the hooks' context next to it).

    with ScriptedReply() as model:
        ...claude -p "..." with ANTHROPIC_BASE_URL=model.root_url...
        assert "recalled" in json.dumps(model.requests)

The events are the six of a one-block text answer, in the Messages API's streaming order
(message_start, content_block_start/delta/stop, message_delta, message_stop).
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.stub_server import ScriptedModel

MODEL = "claude-stub"


class ScriptedReply(ScriptedModel):
    def __init__(self, reply: str = "Done.") -> None:
        self.reply = reply
        super().__init__()

    @property
    def root_url(self) -> str:
        """ANTHROPIC_BASE_URL: Claude Code adds /v1/messages itself."""
        return self.base_url.removesuffix("/v1")

    def message(self, number: int) -> dict[str, Any]:
        return {
            "id": f"msg_{number}",
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [{"type": "text", "text": self.reply}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }

    def events(self, number: int) -> list[dict[str, Any]]:
        start = {**self.message(number), "content": [], "stop_reason": None}
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": self.reply}
        return [
            {"type": "message_start", "message": start},
            {"type": "content_block_start", "index": 0, "content_block": block},
            {"type": "content_block_delta", "index": 0, "delta": delta},
            {"type": "content_block_stop", "index": 0},
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 1},
            },
            {"type": "message_stop"},
        ]

    def handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                path = self.path.split("?", 1)[0]
                if path == "/v1/messages/count_tokens":
                    self.send(b'{"input_tokens": 1}', "application/json")
                elif path != "/v1/messages":
                    self.send_error(404)
                elif body.get("stream"):
                    events = stub.events(stub.record(body))
                    data = "".join(
                        f"event: {event['type']}\ndata: {json.dumps(event)}\n\n" for event in events
                    )
                    self.send(data.encode(), "text/event-stream")
                else:
                    message = stub.message(stub.record(body))
                    self.send(json.dumps(message).encode(), "application/json")

            def send(self, data: bytes, content_type: str) -> None:
                self.send_response(200)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self.send_error(404)

            def log_message(self, format: str, *args: Any) -> None:
                return

        return Handler
