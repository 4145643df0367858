"""Refuse requests whose Host or Origin is not this machine (DNS rebinding protection), and
requests a browser says another site or origin made (cross-site request forgery).

A web page on another site can make a browser send requests to 127.0.0.1 under a hostname the
attacker controls; those arrive with that foreign Host, or with a foreign Origin, and stop here
before they reach any route: MCP, REST or UI.

A page can also send requests that carry no Origin at all: an `<img src>`, a `<script src>`, a
`fetch(..., {mode: "no-cors"})` GET. For those the browser still says where they came from, in
`Sec-Fetch-Site`: `cross-site` (another site), `same-site` (another port or subdomain of a site,
as a web app on localhost:8080 is to us on 127.0.0.1:3471) or `same-origin` (our own UI). Any
request a browser marks `cross-site` or `same-site` is refused, whatever its method and whether
or not it has an Origin, except a top-level navigation (the user following a link to the UI:
`Sec-Fetch-Mode: navigate`, `Sec-Fetch-Dest: document`, GET or HEAD), which a page cannot read.

Why `Sec-Fetch-Site` and not a per-install token the UI reads from its own page (#65): every
browser the UI supports sends it (Chromium 76, Firefox 90, Safari 16.4), a page cannot set or
remove it (a forbidden header), and it needs nothing from the UI, the hooks, the CLI or an MCP
client (programs that are not browsers send no `Sec-Fetch-*` and pass as before, as they must:
they run as the user already). A token would add a secret to the UI's page and to every one of
its requests, and would still leave the two other defences doing the work: no GET changes
anything (promote's GET only proposes), and every REST write takes a JSON body only
(server/adapters/http_edge.py), which a page cannot send cross-origin without a CORS preflight
this server never approves. An old browser that sends no `Sec-Fetch-Site` still meets those
two, and the Origin check for every POST it sends.
"""

from __future__ import annotations

import json
import re

from starlette.types import ASGIApp, Receive, Scope, Send

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


def allowed_hosts_for(bind_host: str, extra: tuple[str, ...] = ()) -> frozenset[str]:
    """Loopback names, the bound address when it is a concrete one, and any extra names."""
    hosts = set(LOOPBACK_HOSTS) | {h.lower() for h in extra}
    if bind_host not in ("0.0.0.0", "::", ""):
        hosts.add(bind_host.lower().strip("[]"))
    hosts.discard("")  # what a malformed Host or Origin reads as
    return frozenset(hosts)


# A Host header is a name or address and an optional port, nothing else (RFC 9110 7.2): no
# user part ("127.0.0.1:3471@evil.com"), no path, no second value. An IPv6 address is bracketed.
_HOST = re.compile(r"(?:\[(?P<ipv6>[0-9a-f:.]+)\]|(?P<name>[a-z0-9._-]+))(?::[0-9]{1,5})?")
# An Origin is one scheme://host[:port] (RFC 6454): no path, no list of origins.
_ORIGIN = re.compile(r"(?P<scheme>https?)://(?P<host>[^/?#@\s]+)")


def _hostname(host_header: str) -> str:
    """The name part of a well-formed Host header (port and IPv6 brackets stripped); "" when
    the header is malformed, which no allowed name matches."""
    match = _HOST.fullmatch(host_header.strip().lower())
    if match is None:
        return ""
    return match["ipv6"] or match["name"]


def _origin_hostname(origin: str) -> str:
    """The host of a well-formed Origin header; "" when it is malformed or opaque ("null")."""
    match = _ORIGIN.fullmatch(origin.strip().lower())
    return _hostname(match["host"]) if match else ""


# What a browser says of a request from another origin; "same-origin" (our UI) and "none" (the
# user typed the address or opened a bookmark) pass.
FOREIGN_FETCH_SITES = frozenset({"cross-site", "same-site"})
NAVIGATION_METHODS = frozenset({"GET", "HEAD"})


def from_another_origin(method: str, headers: dict[str, str]) -> bool:
    """Whether a browser marks this request as made by a page of another origin, and it is
    not the user following a link to a page of ours."""
    site = headers.get("sec-fetch-site", "").strip().lower()
    if site not in FOREIGN_FETCH_SITES:
        return False
    navigation = (
        method in NAVIGATION_METHODS
        and headers.get("sec-fetch-mode", "").strip().lower() == "navigate"
        and headers.get("sec-fetch-dest", "").strip().lower() == "document"
    )
    return not navigation


class HostOriginGuard:
    """ASGI middleware: 403 JSON for a foreign Host, a foreign Origin when one is sent, or a
    request a browser marks as sent by another site or origin (see the module's docstring)."""

    def __init__(self, app: ASGIApp, allowed_hosts: frozenset[str]) -> None:
        self.app = app
        self.allowed_hosts = allowed_hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            # Lifespan events pass; we serve no websockets, so none are accepted.
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
                return
            await self.app(scope, receive, send)
            return
        headers = {
            key.decode("latin-1"): value.decode("latin-1") for key, value in scope["headers"]
        }
        host = _hostname(headers.get("host", ""))
        origin = headers.get("origin")
        if host not in self.allowed_hosts:
            await send_json_error(
                send, 403, "forbidden_host", "requests must be addressed to this machine"
            )
            return
        if origin is not None and not self._origin_allowed(origin):
            await send_json_error(
                send, 403, "forbidden_origin", "cross-site requests are not allowed"
            )
            return
        if from_another_origin(scope["method"], headers):
            await send_json_error(
                send, 403, "forbidden_origin", "requests from other sites are not allowed"
            )
            return
        await self.app(scope, receive, send)

    def _origin_allowed(self, origin: str) -> bool:
        return _origin_hostname(origin) in self.allowed_hosts


async def send_json_error(send: Send, status: int, code: str, message: str) -> None:
    """Answer with our JSON error shape from ASGI middleware, before any route runs."""
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
