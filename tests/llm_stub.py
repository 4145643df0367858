"""ScriptedLLM: a real local HTTP server speaking the OpenAI chat API, with scripted replies.

The one stand-in the suite allows (DESIGN.md, "Tests"): code under test talks to it through the
real `openai` client over real HTTP, so timeouts, status codes and malformed bodies reach the
same code paths a real Ollama would exercise.

    with ScriptedLLM() as llm:
        llm.script(Reply.text("not json"), Reply.json({"memories": []}))
        ...point a ChatClient at llm.base_url...
        assert len(llm.requests) == 2

Replies are consumed one per `POST /v1/chat/completions`, in order; once the queue is empty,
`llm.default` answers. `GET /v1/models` lists `llm.model`.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.stub_server import QuietHandler, StubServer, read_body, send_json


@dataclass(frozen=True, slots=True)
class ContentReply:
    """A 200 chat completion whose message content is `content`, verbatim."""

    content: str


@dataclass(frozen=True, slots=True)
class StatusReply:
    """An HTTP error with a JSON body."""

    code: int
    body: Any


@dataclass(frozen=True, slots=True)
class DelayedReply:
    """Wait `seconds` (cut short when the server stops), then answer with `then`."""

    seconds: float
    then: ScriptedReply


@dataclass(frozen=True, slots=True)
class PromptReply:
    """Let `respond` choose the reply from the request's messages."""

    respond: Callable[[list[dict[str, Any]]], ScriptedReply]


ScriptedReply = ContentReply | StatusReply | DelayedReply | PromptReply


class Reply:
    """Constructors for scripted replies."""

    @staticmethod
    def json(obj: Any) -> ScriptedReply:
        """Content that is `obj` as JSON, as a well-behaved model would send it."""
        return ContentReply(json.dumps(obj))

    @staticmethod
    def text(content: str) -> ScriptedReply:
        """Raw content: prose around JSON, broken JSON, an injection attempt."""
        return ContentReply(content)

    @staticmethod
    def status(code: int, body: Any = None) -> ScriptedReply:
        """An HTTP error; without `body`, an OpenAI-style `{"error": {...}}`."""
        if body is None:
            body = {"error": {"message": f"scripted HTTP {code}", "type": "api_error"}}
        return StatusReply(code, body)

    @staticmethod
    def delay(seconds: float, then: ScriptedReply | None = None) -> ScriptedReply:
        """Answer late, to run into a client's timeout; `then` defaults to an empty result."""
        return DelayedReply(seconds, then or Reply.json({"memories": []}))

    @staticmethod
    def by_prompt(respond: Callable[[list[dict[str, Any]]], ScriptedReply]) -> ScriptedReply:
        """Answer according to the request's messages (e.g. by what the transcript says)."""
        return PromptReply(respond)


class ScriptedLLM(StubServer):
    """A local OpenAI-compatible server on a free 127.0.0.1 port, in a background thread."""

    def __init__(self, *, default: ScriptedReply | None = None, model: str = "qwen2.5:7b"):
        self.default = default or Reply.json({"memories": []})
        self.model = model
        self._queue: deque[ScriptedReply] = deque()
        self._requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        super().__init__()

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every chat request body received so far, oldest first."""
        with self._lock:
            return list(self._requests)

    def script(self, *replies: ScriptedReply) -> None:
        """Queue replies for the next requests, in order."""
        with self._lock:
            self._queue.extend(replies)

    def _next(self, body: dict[str, Any]) -> ScriptedReply:
        with self._lock:
            self._requests.append(body)
            return self._queue.popleft() if self._queue else self.default

    def handler(self) -> type[BaseHTTPRequestHandler]:
        llm = self

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                if self.path.rstrip("/") != "/v1/models":
                    send_json(self, 404, _error_body(f"no route {self.path}"))
                    return
                model = {"id": llm.model, "object": "model", "created": 0, "owned_by": "scripted"}
                send_json(self, 200, {"object": "list", "data": [model]})

            def do_POST(self) -> None:
                raw = read_body(self)
                if self.path.rstrip("/") != "/v1/chat/completions":
                    send_json(self, 404, _error_body(f"no route {self.path}"))
                    return
                try:
                    body = json.loads(raw)
                except ValueError:
                    send_json(self, 400, _error_body("request body is not JSON"))
                    return
                reply = llm._next(body)
                while True:
                    if isinstance(reply, DelayedReply):
                        if llm.stopping.wait(reply.seconds):
                            return
                        reply = reply.then
                    elif isinstance(reply, PromptReply):
                        try:
                            reply = reply.respond(body.get("messages", []))
                        except Exception as exc:  # surfaced to the test as a 500 naming the bug
                            reply = StatusReply(500, _error_body(f"by_prompt raised {exc!r}"))
                    else:
                        break
                if isinstance(reply, StatusReply):
                    send_json(self, reply.code, reply.body)
                else:
                    send_json(self, 200, _completion(body, reply.content))

        return Handler


def _error_body(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error"}}


def _completion(request: dict[str, Any], content: str) -> dict[str, Any]:
    """A chat completion body shaped like OpenAI's, with rough token counts."""
    prompt_chars = sum(len(str(m.get("content", ""))) for m in request.get("messages", []))
    prompt_tokens, completion_tokens = prompt_chars // 4, len(content) // 4
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", ""),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }
