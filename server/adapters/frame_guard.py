"""Forbid other pages from framing ours (clickjacking): every response says so.

A page on another site could load the UI in an invisible frame and trick a click onto it.
Every HTTP response, whichever route or guard answers, carries `Content-Security-Policy:
frame-ancestors 'none'` (added to a policy the response already has) and, for browsers that
predate that directive, `X-Frame-Options: DENY`.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

FRAME_ANCESTORS = b"frame-ancestors 'none'"


def _with_no_framing(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    kept: list[tuple[bytes, bytes]] = []
    policy_seen = False
    for name, value in headers:
        lowered = name.lower()
        if lowered == b"x-frame-options":
            continue
        if lowered == b"content-security-policy":
            policy_seen = True
            if b"frame-ancestors" not in value.lower():
                value = b"; ".join(part for part in (value.rstrip(b"; "), FRAME_ANCESTORS) if part)
        kept.append((name, value))
    if not policy_seen:
        kept.append((b"content-security-policy", FRAME_ANCESTORS))
    kept.append((b"x-frame-options", b"DENY"))
    return kept


class NoFraming:
    """ASGI middleware: the no-framing headers on every HTTP response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_without_framing(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": _with_no_framing(list(message.get("headers", [])))}
            await send(message)

        await self.app(scope, receive, send_without_framing)
