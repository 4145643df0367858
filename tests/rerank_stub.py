"""RerankServer: a real local HTTP server on a `/rerank` route, the stand-in for an endpoint
provider (DESIGN.md, "Tests"), in the two shapes the common servers speak:

- `documents` (llama.cpp's server, Infinity, Cohere-compatible): `{query, documents}` answered
  by `{"results": [{"index", "relevance_score"}]}`, best first;
- `texts` (Hugging Face TEI): `{query, texts}` answered by `[{"index", "score"}]`; a request
  naming `documents` gets TEI's 422.

Each candidate's score is `score(query, text)`; by default the later a candidate comes in the
request, the higher it scores, so the answer reverses the order it was sent in. `garbage`
answers a body no reranker would send, `delay` answers late, and `padding` adds that many
bytes to a good answer (an endpoint that answers without end).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.stub_server import QuietHandler, StubServer, read_body, send_json


class RerankServer(StubServer):
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
        self.padding = 0
        self.requests: list[dict[str, Any]] = []
        super().__init__()

    @property
    def url(self) -> str:
        return f"{self.base_url}/rerank"

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
        results = [{"index": i, "relevance_score": s} for i, s in scored]
        if self.padding:
            return 200, {"results": results, "padding": "x" * self.padding}
        return 200, {"results": results}

    def handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                raw = read_body(self)
                if self.path.rstrip("/") != "/v1/rerank":
                    send_json(self, 404, {"error": f"no route {self.path}"})
                    return
                try:
                    body = json.loads(raw)
                except ValueError:
                    send_json(self, 400, {"error": "request body is not JSON"})
                    return
                server.requests.append(body)
                if server.delay and server.stopping.wait(server.delay):
                    return
                send_json(self, *server.answer(body, self.headers.get("Authorization")))

        return Handler
