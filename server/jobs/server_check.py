"""Is a claude-memory server answering at a URL? One GET of its `/health`, standard library only.

`connect` and `install-hooks` ask before they write a URL into an agent's files, and `doctor`
asks of every URL an agent is configured with. Any HTTP server answers something; ours answers
`/health` with a JSON object naming its embedding model, its database kind and its version
(server/adapters/rest/system.py), so that is what makes it ours. The token, when one is given,
goes along as a bearer header (/health is open, but a proxy in front may not be).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from urllib.parse import urlsplit

TIMEOUT_SECONDS = 2.0
# Straight to the server, as the hook client goes (a plain socket): an HTTP_PROXY in the
# environment would otherwise answer for 127.0.0.1.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))
# Fields of our /health answer that together tell it from anyone else's.
OUR_FIELDS = ("status", "database_kind", "embedding_model", "version")


@dataclass(frozen=True, slots=True)
class ServerCheck:
    """What answered at `url`: ours (with its version), something else, or nothing."""

    url: str  # the server's base URL, as asked
    ours: bool
    version: str | None  # ours only
    detail: str  # for people: "claude-memory 0.1.0", "connection refused", "HTTP 404 ..."


def base_url(url: str) -> str:
    """The server's base URL from a base, `/mcp` or `/sse` URL, without a trailing slash."""
    base = url.rstrip("/")
    for suffix in ("/mcp", "/sse"):
        base = base.removesuffix(suffix)
    return base


def check_server(url: str, token: str | None = None) -> ServerCheck:
    """GET `<url>/health` with a short timeout; never raises."""
    base = base_url(url)
    headers = {"Accept": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(f"{base}/health", headers=headers)
    try:
        with _DIRECT.open(request, timeout=TIMEOUT_SECONDS) as response:
            status, body = response.status, response.read(65536)
    except urllib.error.HTTPError as exc:
        # 503 is ours with its database down: still ours, and it says so.
        status, body = exc.code, exc.read(65536)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return ServerCheck(base, False, None, _said(reason))
    try:
        answer = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        answer = None
    if not isinstance(answer, dict) or not all(key in answer for key in OUR_FIELDS):
        return ServerCheck(
            base, False, None, f"HTTP {status} from something that is not claude-memory"
        )
    version = str(answer["version"])
    state = (
        ""
        if answer.get("status") == "ok"
        else f", {answer.get('status')}: database {answer.get('database')}"
    )
    return ServerCheck(base, True, version, f"claude-memory {version}{state}")


def _said(reason: object) -> str:
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror.lower()
    return str(reason) or type(reason).__name__


def start_hint(url: str) -> str:
    """The command that starts a server at `url` (its port; its host unless the default)."""
    parts = urlsplit(base_url(url))
    command = "claude-memory serve"
    if parts.hostname not in (None, "127.0.0.1", "localhost"):
        command += f" --host {parts.hostname}"
    if parts.port is not None:
        command += f" --port {parts.port}"
    return command


def refusal(check: ServerCheck, option: str = "--url") -> str:
    """Why a URL is not written, and what to run instead."""
    return (
        f"no claude-memory server answers at {check.url} ({check.detail}): start it with "
        f"`{start_hint(check.url)}`, or pass {option} with the address of the one running "
        "(--no-check writes the URL anyway)"
    )
