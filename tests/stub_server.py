"""The stand-in servers' plumbing: a real HTTP server on 127.0.0.1, in a background thread.

Each stand-in (DESIGN.md, "Tests": real HTTP, not mocks) is a subclass that says how it
answers, in its own module: tests/llm_stub.py (OpenAI chat completions, scripted replies),
tests/embeddings_stub.py (`/v1/embeddings` with the bundled model's vectors),
tests/rerank_stub.py (a `/rerank` endpoint in two shapes), tests/responses_stub.py (OpenAI's
Responses API, for Codex) and tests/chat_stream_stub.py (streamed chat completions, for
OpenCode). Binding a free port, serving, stopping quickly and sending a body are here:

StubServer      `handler()` names the request handler class; the port is bound when the
                object is made (so `base_url` is known before it serves), served while entered,
                and can be closed and opened again on the same port (`stop_listening`,
                `start_listening`); `stopping` is set on exit, for answers that wait
ScriptedModel   a StubServer that keeps every request body (`record`), for the model
                stand-ins the agents' own CLIs call
QuietHandler    a request handler that logs nothing (pytest shows failures, not an access log)
read_body, send_bytes, send_json   a request's body; an answer, dropped quietly when the
                client has already gone (its timeout ran out)
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self


class StubServer:
    """Serves `handler()`'s requests on 127.0.0.1 while entered."""

    def __init__(self, port: int = 0) -> None:
        self.stopping = threading.Event()
        self._port = port
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._bind()

    def handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}/v1"

    def _bind(self) -> ThreadingHTTPServer:
        if self._httpd is None:
            self._httpd = ThreadingHTTPServer(("127.0.0.1", self._port), self.handler())
            # Handler threads may sit on a kept-alive connection or a delay: never wait for them.
            self._httpd.daemon_threads = True
            self._httpd.block_on_close = False
            self._port = self._httpd.server_address[1]
        return self._httpd

    def start_listening(self) -> None:
        """Serve, on the port bound before (a free one the first time)."""
        server = self._bind()
        # A short poll interval keeps shutdown (and so every test's teardown) quick.
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def stop_listening(self) -> None:
        """Close the port: clients get connection refused until `start_listening`."""
        if self._httpd is not None:
            if self._thread is not None:
                self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def __enter__(self) -> Self:
        self.start_listening()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stopping.set()
        self.stop_listening()


class ScriptedModel(StubServer):
    """A model stand-in that keeps the body of every request it answers, in `requests`."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        super().__init__()

    def record(self, body: dict[str, Any]) -> int:
        """Keep a request's body; its number, from 1."""
        with self._lock:
            self.requests.append(body)
            return len(self.requests)


class QuietHandler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """Silent: pytest shows failures, not an access log."""


def read_body(handler: BaseHTTPRequestHandler) -> bytes:
    return handler.rfile.read(int(handler.headers.get("Content-Length") or 0))


def send_bytes(
    handler: BaseHTTPRequestHandler, status: int, data: bytes, content_type: str
) -> None:
    try:
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the client gave up (its timeout ran out) before the answer came


def send_json(handler: BaseHTTPRequestHandler, status: int, payload: Any) -> None:
    send_bytes(handler, status, json.dumps(payload).encode(), "application/json")
