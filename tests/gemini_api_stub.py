"""ScriptedGemini: a real local HTTP server speaking the Gemini API as Gemini CLI calls it.

The model stand-in for Gemini CLI (`GOOGLE_GEMINI_BASE_URL` here, with any `GEMINI_API_KEY`), in
the role tests/messages_stub.py plays for Claude Code: `POST /v1beta/models/<model>:
streamGenerateContent?alt=sse` (and `:generateContent`) is answered with one candidate whose
text is `reply(body)`, and `:countTokens` with a count; every generate request's body is kept.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.stub_server import QuietHandler, ScriptedModel, read_body, send_bytes, send_json


def request_text(body: dict[str, Any]) -> str:
    """The text of a request's user turns."""
    return "\n".join(
        part.get("text", "")
        for content in body.get("contents", [])
        if isinstance(content, dict) and content.get("role", "user") == "user"
        for part in content.get("parts", [])
        if isinstance(part, dict)
    )


class ScriptedGemini(ScriptedModel):
    def __init__(self, reply: Callable[[dict[str, Any]], str]) -> None:
        self.reply = reply
        self.paths: list[str] = []
        super().__init__()

    @property
    def root_url(self) -> str:
        """GOOGLE_GEMINI_BASE_URL: the CLI adds /v1beta/models/... itself."""
        return self.base_url.removesuffix("/v1")

    def chunk(self, body: dict[str, Any]) -> dict[str, Any]:
        text = self.reply(body)
        return {
            "candidates": [
                {
                    "content": {"role": "model", "parts": [{"text": text}]},
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": {
                "promptTokenCount": 7,
                "candidatesTokenCount": 3,
                "totalTokenCount": 10,
            },
        }

    def handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                body = json.loads(read_body(self) or b"{}")
                path = self.path.split("?", 1)[0]
                stub.paths.append(path)
                if path.endswith(":countTokens"):
                    send_json(self, 200, {"totalTokens": 7})
                elif path.endswith(":streamGenerateContent"):
                    stub.record(body)
                    data = f"data: {json.dumps(stub.chunk(body))}\r\n\r\n".encode()
                    send_bytes(self, 200, data, "text/event-stream")
                elif path.endswith(":generateContent"):
                    stub.record(body)
                    send_json(self, 200, stub.chunk(body))
                else:
                    self.send_error(404)

            def do_GET(self) -> None:
                self.send_error(404)

        return Handler
