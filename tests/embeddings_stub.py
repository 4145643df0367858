"""EmbeddingServer: a real local HTTP server speaking OpenAI's `/v1/embeddings`, with real vectors.

The stand-in the suite allows for embedding-provider tests (and bench/retrieval_locomo.py's
`--provider openai` runs): it serves the bundled all-MiniLM-L6-v2 through the same
sentence-transformers model the local provider loads, so an endpoint-backed store must rank
exactly like a local one. Like an Ollama without the model, a request for any other model is
answered 404 `model "x" not found, try pulling it first`.

    with EmbeddingServer(embedder) as server:
        server.fail_next(2, 429)   # the next two requests are refused, then it answers again
        server.fail_after(1, 503)  # one more answer, then 503 to everything until recover()
        server.stop_listening()    # connections refused, as when the server is down
        server.start_listening()   # back, on the same port

`requests` counts the texts of every embeddings request, so a test can see the batching.

Run as `python -m tests.embeddings_stub --port 11435` for a bench run against an endpoint.
"""

from __future__ import annotations

import argparse
import json
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler
from typing import Any

import numpy as np

from server.service.embeddings import Embedder, LocalEmbedder
from tests.stub_server import QuietHandler, StubServer, read_body, send_json

SERVED_MODEL = "all-MiniLM-L6-v2"


class EmbeddingServer(StubServer):
    """`/v1/embeddings` on 127.0.0.1, answering with `embedder`'s vectors for `model`."""

    def __init__(
        self, embedder: Embedder, *, model: str = SERVED_MODEL, port: int = 0, scale: float = 1.0
    ) -> None:
        self.embedder = embedder
        self.model = model
        # Vectors are sent scaled (not unit length, as some servers send them) when `scale`
        # is not 1, so the client's normalisation is exercised.
        self.scale = scale
        self.requests: list[int] = []  # the number of texts in each answered request
        self._failures: deque[int] = deque()
        self._answers_left: int | None = None  # None: no outage scheduled
        self._outage_status = 503
        self._lock = threading.Lock()
        super().__init__(port)

    def fail_next(self, count: int, status: int) -> None:
        """Answer the next `count` requests with `status` (429, 500, 503...)."""
        with self._lock:
            self._failures.extend([status] * count)

    def fail_after(self, answers: int, status: int) -> None:
        """Answer `answers` more requests, then `status` to every one until `recover`."""
        with self._lock:
            self._answers_left, self._outage_status = answers, status

    def recover(self) -> None:
        with self._lock:
            self._answers_left = None

    def answer(self, body: Any) -> tuple[int, dict[str, Any]]:
        """The status and JSON body for one POST /v1/embeddings."""
        with self._lock:
            failure = self._failures.popleft() if self._failures else None
            if failure is None and self._answers_left is not None:
                if self._answers_left <= 0:
                    failure = self._outage_status
                else:
                    self._answers_left -= 1
        if failure is not None:
            return failure, _error(f"scripted HTTP {failure}")
        if not isinstance(body, dict) or "input" not in body:
            return 400, _error("expected a JSON object with model and input")
        if body.get("model") != self.model:
            return 404, _error(f'model "{body.get("model")}" not found, try pulling it first')
        texts = body["input"]
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            return 400, _error("input must be a string or a list of strings")
        vectors = np.asarray(self.embedder.encode(texts)) * self.scale
        with self._lock:
            self.requests.append(len(texts))
        return 200, {
            "object": "list",
            "model": self.model,
            "data": [
                {"object": "embedding", "index": i, "embedding": vector.tolist()}
                for i, vector in enumerate(vectors)
            ],
            "usage": {"prompt_tokens": 0, "total_tokens": 0},
        }

    def handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                raw = read_body(self)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                if self.path.rstrip("/") != "/v1/embeddings":
                    send_json(self, 404, _error(f"no route {self.path}"))
                else:
                    send_json(self, *server.answer(body))

        return Handler


def _error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "api_error"}}


def main() -> None:
    parser = argparse.ArgumentParser(description="serve the bundled model on /v1/embeddings")
    parser.add_argument("--port", type=int, default=11435)
    args = parser.parse_args()
    server = EmbeddingServer(LocalEmbedder.load(SERVED_MODEL), port=args.port)
    server.start_listening()
    print(f"serving {SERVED_MODEL} at {server.base_url}", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
