"""Close connections whose request headers or body do not arrive in time (slow or half-open
clients).

uvicorn closes a connection that sits idle between requests (its keep-alive timeout), but not
one that has sent part of a request and then nothing more: without a token, anyone who can
reach the port could hold hundreds of such sockets open, and with one, a client trickling its
body a byte a second holds its connection as long as it likes. `HeaderDeadlineProtocol` is
uvicorn's h11 protocol with two additions: a connection must finish each request's headers
within HEADER_DEADLINE_SECONDS of being opened, or of its previous response, and the request's
body within `body_deadline_seconds` of its headers, or it is closed (the app reading the body
sees the client gone). `serve` starts uvicorn with `with_body_deadline(settings'
CLAUDE_MEMORY_REQUEST_BODY_DEADLINE_SECONDS)`.
"""

from __future__ import annotations

import asyncio

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol, RequestResponseCycle

# A client sends its headers at once; ten seconds leaves room for a slow network.
HEADER_DEADLINE_SECONDS = 10.0
# Our largest body (server/adapters/body_limit.py, 2 MB) at 70 kB/s; the setting's default.
BODY_DEADLINE_SECONDS = 30.0


class HeaderDeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol; a request's headers, then its body, must arrive in time."""

    body_deadline_seconds = BODY_DEADLINE_SECONDS
    _header_deadline: asyncio.TimerHandle | None = None
    _body_deadline: asyncio.TimerHandle | None = None
    _body_of: RequestResponseCycle | None = None  # the request whose body is being timed

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[arg-type]
        self._arm_header_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_deadline()
        self._disarm_body_deadline()
        super().connection_lost(exc)

    def handle_events(self) -> None:
        super().handle_events()
        self._watch_body()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_header_deadline()

    def _arm_header_deadline(self) -> None:
        self._disarm_header_deadline()
        waiting_since = self.cycle
        self._header_deadline = self.loop.call_later(
            HEADER_DEADLINE_SECONDS, self._close_if_headers_missing, waiting_since
        )

    def _disarm_header_deadline(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _close_if_headers_missing(self, waiting_since: object) -> None:
        """Close the connection when no request began since the deadline was set (the request
        cycle is still the one of then) and the client is between requests or mid-headers."""
        self._header_deadline = None
        if self.transport.is_closing() or self.cycle is not waiting_since:
            return
        if self.cycle is not None and not self.cycle.response_complete:
            return
        if self.conn.their_state is h11.IDLE:
            self.transport.close()

    def _watch_body(self) -> None:
        """Time the current request's body from its headers on; stop once it is all in."""
        cycle = self.cycle
        if cycle is None or not cycle.more_body or self.conn.their_state is not h11.SEND_BODY:
            self._disarm_body_deadline()
            return
        if self._body_of is not cycle:
            self._disarm_body_deadline()
            self._body_of = cycle
            self._body_deadline = self.loop.call_later(
                self.body_deadline_seconds, self._close_if_body_missing, cycle
            )

    def _disarm_body_deadline(self) -> None:
        if self._body_deadline is not None:
            self._body_deadline.cancel()
            self._body_deadline = None
        self._body_of = None

    def _close_if_body_missing(self, cycle: RequestResponseCycle) -> None:
        """Close the connection when the request timed is still short of its body's end.

        Not when uvicorn stopped reading because the app has not taken what came (64 kB
        waiting): then the client is not the slow one."""
        self._body_deadline = None
        self._body_of = None
        if self.transport.is_closing() or self.cycle is not cycle or not cycle.more_body:
            return
        if self.flow.read_paused:
            return
        self.transport.close()


def with_body_deadline(seconds: float) -> type[HeaderDeadlineProtocol]:
    """The protocol with a request's body due `seconds` after its headers."""
    return type(
        "BodyDeadlineProtocol", (HeaderDeadlineProtocol,), {"body_deadline_seconds": seconds}
    )
