"""Each user's own share of streamable HTTP MCP sessions (/mcp).

The MCP SDK keeps at most 10,000 open sessions for the whole server, each idle for up to 30
minutes before it is closed; on a team, one user (or a script with their token) opening
sessions in a loop would fill them all and lock everyone else out. `SessionsPerUser` sits in
front of the /mcp app: a user may hold at most MAX_SESSIONS_PER_USER open sessions, a new one
beyond that is refused with 503 (their own sessions are untouched, and nobody else's count),
and a session is used only by the user who opened it (anyone else is told it does not exist).
Without users (the single-user default) every caller shares one allowance.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.streamable_http_manager import DEFAULT_SESSION_IDLE_TIMEOUT
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from server.core.access import Viewer

# Far more than the agents one person runs at once; a client that never closes its sessions
# waits for the idle ones to expire.
MAX_SESSIONS_PER_USER = 100


@dataclass
class _Session:
    owner: int | None
    in_flight: int = 0
    last_seen: float = field(default_factory=time.monotonic)


def _owner(scope: Scope) -> int | None:
    viewer = scope.get("state", {}).get("viewer")
    return viewer.user_id if isinstance(viewer, Viewer) else None


def _json_rpc_error(status: int, message: str) -> JSONResponse:
    error = {"code": -32603 if status >= 500 else -32600, "message": message}
    return JSONResponse({"jsonrpc": "2.0", "id": None, "error": error}, status_code=status)


class SessionsPerUser:
    """ASGI wrapper of the streamable HTTP app: sessions counted, capped and kept per user.

    A session counts from the answer that opened it until it is closed (DELETE), the SDK no
    longer knows it (404), or nothing has been in flight on it for the SDK's idle timeout.
    """

    def __init__(
        self,
        app: ASGIApp,
        limit: int = MAX_SESSIONS_PER_USER,
        idle_seconds: float = DEFAULT_SESSION_IDLE_TIMEOUT,
    ) -> None:
        self.app = app
        self.limit = limit
        self.idle_seconds = idle_seconds
        self.sessions: dict[str, _Session] = {}
        self.opening: Counter[int | None] = Counter()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        owner = _owner(scope)
        session_id = _header(scope, MCP_SESSION_ID_HEADER)
        if session_id is None:
            await self._open(owner, scope, receive, send)
            return
        session = self.sessions.get(session_id)
        if session is None:
            await self.app(scope, receive, send)
            return
        if session.owner != owner:
            await _json_rpc_error(404, "Session not found")(scope, receive, send)
            return
        session.in_flight += 1
        try:
            status, _ = await self._serve(scope, receive, send)
        finally:
            session.in_flight -= 1
            session.last_seen = time.monotonic()
        if status == 404 or (scope["method"] == "DELETE" and status < 400):
            self.sessions.pop(session_id, None)

    async def _open(self, owner: int | None, scope: Scope, receive: Receive, send: Send) -> None:
        self._forget_idle()
        held = sum(1 for s in self.sessions.values() if s.owner == owner) + self.opening[owner]
        if held >= self.limit:
            message = (
                f"too many open MCP sessions for this user ({self.limit}); close some or wait"
                f" {self.idle_seconds / 60:.0f} minutes for idle ones to expire"
            )
            await _json_rpc_error(503, message)(scope, receive, send)
            return
        self.opening[owner] += 1
        try:
            status, opened = await self._serve(scope, receive, send)
        finally:
            self.opening[owner] -= 1
        if status < 400 and opened is not None:
            self.sessions[opened] = _Session(owner)

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> tuple[int, str | None]:
        """Run the app; the answer's status and the session id it gave (if any)."""
        answer: dict[str, object] = {"status": 500, "session": None}

        async def watching(message: Message) -> None:
            if message["type"] == "http.response.start":
                answer["status"] = message["status"]
                for name, value in message.get("headers", []):
                    if name.lower() == MCP_SESSION_ID_HEADER.encode():
                        answer["session"] = value.decode("latin-1")
            await send(message)

        await self.app(scope, receive, watching)
        status, session = answer["status"], answer["session"]
        return (
            status if isinstance(status, int) else 500,
            session if isinstance(session, str) else None,
        )

    def _forget_idle(self) -> None:
        """Drop the sessions the SDK has closed for idling (nothing in flight for its timeout)."""
        cutoff = time.monotonic() - self.idle_seconds
        idle = [
            key for key, s in self.sessions.items() if s.in_flight == 0 and s.last_seen < cutoff
        ]
        for key in idle:
            del self.sessions[key]


def _header(scope: Scope, name: str) -> str | None:
    wanted = name.lower().encode()
    for key, value in scope["headers"]:
        if key.lower() == wanted:
            return str(value.decode("latin-1"))
    return None
