"""A model stand-in's plumbing: a real local HTTP server in a thread that keeps every request.

tests/responses_stub.py (OpenAI's Responses API, for Codex) and tests/chat_stream_stub.py
(streamed chat completions, for OpenCode) answer in their own wire formats; starting, stopping
and recording the requests is this class.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self


class ScriptedModel:
    """Serves `handler()`'s requests on 127.0.0.1 while entered; `requests` holds their bodies."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def record(self, body: dict[str, Any]) -> int:
        """Keep a request's body; its number, from 1."""
        with self._lock:
            self.requests.append(body)
            return len(self.requests)

    def handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    def __enter__(self) -> Self:
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
