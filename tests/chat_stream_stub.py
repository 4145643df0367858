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
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

MODEL = "stub-coder"


class ScriptedChat:
    def __init__(self, calls: list[tuple[str, dict[str, Any]]], reply: str = "Done.") -> None:
        self.calls = calls
        self.reply = reply
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> ScriptedChat:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def chunks(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The stream's chunks answering one request."""
        with self._lock:
            self.requests.append(body)
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
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion.chunk",
                "created": created,
                "model": MODEL,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            for delta, finish in deltas
        ]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        chat = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._send_json({"object": "list", "data": [{"id": MODEL, "object": "model"}]})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                for chunk in chat.chunks(body):
                    self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

            def _send_json(self, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler
