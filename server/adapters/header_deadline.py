"""Close connections whose request headers do not arrive in time (slow or half-open clients).

uvicorn closes a connection that sits idle between requests (its keep-alive timeout), but not
one that has sent part of a request and then nothing more: without a token, anyone who can
reach the port could hold hundreds of such sockets open. `HeaderDeadlineProtocol` is uvicorn's
h11 protocol with one addition: a connection must finish each request's headers within
HEADER_DEADLINE_SECONDS of being opened, or of its previous response, or it is closed.
`serve` starts uvicorn with it (`http=HeaderDeadlineProtocol`).
"""

from __future__ import annotations

import asyncio

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

# A client sends its headers at once; ten seconds leaves room for a slow network.
HEADER_DEADLINE_SECONDS = 10.0


class HeaderDeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol; a request's headers must arrive within the deadline."""

    _header_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[arg-type]
        self._arm_header_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_deadline()
        super().connection_lost(exc)

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
