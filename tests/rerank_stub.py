"""RerankServer: a real local HTTP server on a `/rerank` route, the stand-in for an endpoint
provider (DESIGN.md, "Tests"), in the two shapes the common servers speak:

- `documents` (llama.cpp's server, Infinity, Cohere-compatible): `{query, documents}` answered
  by `{"results": [{"index", "relevance_score"}]}`, best first;
- `texts` (Hugging Face TEI): `{query, texts}` answered by `[{"index", "score"}]`; a request
  naming `documents` gets TEI's 422.

Each candidate's score is `score(query, text)`; by default the later a candidate comes in the
request, the higher it scores, so the answer reverses the order it was sent in. `garbage`
answers a body no reranker would send, and `delay` answers late.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


class RerankServer:
    """A `/rerank` endpoint on a free 127.0.0.1 port, in a background thread."""

    def __init__(
        self,
        shape: str = "documents",
        *,
        score: Callable[[str, str, int], float] | None = None,
        api_key: str | None = None,
    ) -> None:
        self.shape = shape
        self.score = score or (lambda query, text, index: float(index))
        self.api_key = api_key
        self.garbage = False
        self.delay = 0.0
        self.requests: list[dict[str, Any]] = []
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._server.block_on_close = False
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1/rerank"

    def answer(self, body: dict[str, Any], authorization: str | None) -> tuple[int, Any]:
        if self.api_key and authorization != f"Bearer {self.api_key}":
            return 401, {"error": "unauthorized"}
        if self.garbage:
            return 200, {"results": "the model is warming up"}
        field = "texts" if self.shape == "texts" else "documents"
        texts = body.get(field)
        if not isinstance(texts, list) or not isinstance(body.get("query"), str):
            return 422, {"error": f"missing field `{field}`", "error_type": "Validation"}
        scored = sorted(
            ((i, self.score(body["query"], text, i)) for i, text in enumerate(texts)),
            key=lambda pair: -pair[1],
        )
        if self.shape == "texts":
            return 200, [{"index": i, "score": s} for i, s in scored]
        return 200, {"results": [{"index": i, "relevance_score": s} for i, s in scored]}

    def __enter__(self) -> RerankServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


def _handler_for(server: RerankServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path.rstrip("/") != "/v1/rerank":
                self._send(404, {"error": f"no route {self.path}"})
                return
            try:
                body = json.loads(raw)
            except ValueError:
                self._send(400, {"error": "request body is not JSON"})
                return
            server.requests.append(body)
            if server.delay and server._stopping.wait(server.delay):
                return
            self._send(*server.answer(body, self.headers.get("Authorization")))

        def _send(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up before the answer came

        def log_message(self, format: str, *args: Any) -> None:
            """Silent: pytest shows failures, not an access log."""

    return Handler
