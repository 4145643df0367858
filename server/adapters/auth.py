"""Who may call, and as whom: bearer tokens in front of every route but /health and /ui.

Two modes, decided on every request by the database, so a user added or revoked by the CLI
(or on another replica) counts at once:

- No users ever added (the single-user default): the optional CLAUDE_MEMORY_TOKEN, as always.
  Without it the server is open to this machine; with it, every call needs it.
- Users (`claude-memory users add`): every call needs an active user's token, and runs as that
  user (server/core/access.py): their own memories, and the team's shared ones.
  CLAUDE_MEMORY_TOKEN opens nothing then, a revoked token is refused like an unknown one, and
  revoking every user leaves the server closed rather than reopening it.

/health stays open so supervisors can probe it, and the UI's static files stay open so the
browser can load the page that then asks for the token. Comparisons take the same time
whatever the guess, and a refusal says nothing about why.
"""

from __future__ import annotations

import hmac

from starlette.types import ASGIApp, Receive, Scope, Send

from server.adapters.http_guard import send_json_error
from server.core.access import acting_as
from server.core.errors import Unavailable
from server.service.users import UserDirectory

OPEN_PATHS = ("/health", "/", "/favicon.ico")
OPEN_PREFIXES = ("/ui",)
_BEARER = b"bearer "


class AccessGuard:
    """ASGI middleware: 401 unless the request carries a token this server accepts."""

    def __init__(self, app: ASGIApp, users: UserDirectory, token: str | None) -> None:
        self.app = app
        self.users = users
        self.expected = f"Bearer {token}".encode() if token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or _is_open(scope["path"]):
            await self.app(scope, receive, send)
            return
        given = _authorization(scope)
        try:
            check = await self.users.check(_token_of(given))
        except Unavailable as exc:
            await send_json_error(send, 503, Unavailable.code, exc.message)
            return
        if check.users_exist:
            if check.user is None:
                await _refuse(send, "this server needs your user token")
                return
            viewer = self.users.viewer(check.user)
            # The MCP sub-apps run tools outside this request's context; they read it here.
            scope.setdefault("state", {})["viewer"] = viewer
            with acting_as(viewer):
                await self.app(scope, receive, send)
            return
        if self.expected is not None and not hmac.compare_digest(given, self.expected):
            await _refuse(send, "this server needs its token (CLAUDE_MEMORY_TOKEN)")
            return
        await self.app(scope, receive, send)


def _authorization(scope: Scope) -> bytes:
    for key, value in scope["headers"]:
        if key == b"authorization":
            return bytes(value)
    return b""


def _token_of(header: bytes) -> str | None:
    """The token of an `Authorization: Bearer <token>` header, or None."""
    if header[: len(_BEARER)].lower() != _BEARER:
        return None
    token = header[len(_BEARER) :].strip().decode("latin-1")
    return token or None


async def _refuse(send: Send, message: str) -> None:
    await send_json_error(send, 401, "unauthorized", message)


def _is_open(path: str) -> bool:
    return path in OPEN_PATHS or any(
        path == prefix or path.startswith(prefix + "/") for prefix in OPEN_PREFIXES
    )
