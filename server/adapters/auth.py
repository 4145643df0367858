"""Optional bearer token (CLAUDE_MEMORY_TOKEN) in front of every route but /health and /ui.

Other local users (and any process on the machine) can reach 127.0.0.1; a token keeps them out
of the memories. /health stays open so supervisors can probe it, and the UI's static files stay
open so the browser can load the page that then asks for the token. The comparison takes the
same time whatever the guess, and a refusal says nothing about why.
"""

from __future__ import annotations

import hmac

from starlette.types import ASGIApp, Receive, Scope, Send

from server.adapters.http_guard import send_json_error

OPEN_PATHS = ("/health", "/", "/favicon.ico")
OPEN_PREFIXES = ("/ui",)


class BearerTokenGuard:
    """ASGI middleware: 401 unless `Authorization: Bearer <token>` matches."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or _is_open(scope["path"]):
            await self.app(scope, receive, send)
            return
        given = b""
        for key, value in scope["headers"]:
            if key == b"authorization":
                given = value
                break
        if not hmac.compare_digest(given, self.expected):
            await send_json_error(
                send, 401, "unauthorized", "this server needs its token (CLAUDE_MEMORY_TOKEN)"
            )
            return
        await self.app(scope, receive, send)


def _is_open(path: str) -> bool:
    return path in OPEN_PATHS or any(
        path == prefix or path.startswith(prefix + "/") for prefix in OPEN_PREFIXES
    )
