"""Refuse request bodies over a size limit with 413, before any route reads them.

A declared Content-Length over the limit is refused at once. A body without one (chunked) is
read up to the limit, refused if it goes past it, and otherwise handed to the app unchanged.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from server.adapters.http_guard import send_json_error

MAX_BODY_BYTES = 2 * 1024 * 1024


class BodySizeLimit:
    def __init__(self, app: ASGIApp, max_bytes: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        declared = headers.get(b"content-length")
        if declared is not None:
            if not declared.isdigit() or int(declared) > self.max_bytes:
                await self._refuse(send)
                return
            await self.app(scope, receive, send)
            return
        if headers.get(b"transfer-encoding", b"").lower() != b"chunked":
            await self.app(scope, receive, send)
            return
        buffered: list[Message] = []
        size = 0
        while True:
            message = await receive()
            buffered.append(message)
            size += len(message.get("body", b""))
            if size > self.max_bytes:
                await self._refuse(send)
                return
            if message["type"] != "http.request" or not message.get("more_body", False):
                break

        async def replay() -> Message:
            return buffered.pop(0) if buffered else await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, send: Send) -> None:
        message = f"request body is over the {self.max_bytes:,}-byte limit"
        await send_json_error(send, 413, "too_large", message)
