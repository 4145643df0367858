"""Is a claude-memory server answering at a URL, and does it take our token? Standard library only.

`connect` and `install-hooks` ask before they write a URL into an agent's files, and `doctor`
asks of every URL an agent is configured with. Any HTTP server answers something; ours answers
`/health` with a JSON object naming its embedding model, its database kind and its version
(server/adapters/rest/system.py), so that is what makes it ours. /health is open, so it is
asked without a token: a URL may come from a cloned repository's files (a project's
`.mcp.json`), and a token never goes where a repository says. `check_access` is the one call
that carries the token, an authenticated read (`GET /api/agents`); its callers ask it only of a
URL the user chose (the settings, `--url`, the agent's own settings in their home folder).

What a server answers is printed for people, and a hostile one answers terminal escapes: every
text taken from an answer goes through `printable` first.
"""

from __future__ import annotations

import json
import unicodedata
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
ACCESS_PATH = "/api/agents"  # needs the token when the server has one; reads no memory
MAX_SAID_CHARS = 80


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


@dataclass(frozen=True, slots=True)
class AccessCheck:
    """What the server at `url` said to an authenticated read with a token, or with none."""

    url: str
    with_token: bool
    ok: bool  # it answered the read
    refused: bool  # it answered 401: the token is missing or not one it takes
    detail: str


def without_controls(text: str) -> str:
    """`text` without control or format characters (terminal escapes, bidi overrides); a tab
    or line break becomes a space."""
    kept = "".join(" " if ch in "\t\n\r" else ch for ch in text)
    return "".join(ch for ch in kept if unicodedata.category(ch) not in ("Cc", "Cf"))


def printable(text: str) -> str:
    """What a server says, fit to print: no control characters, at most MAX_SAID_CHARS."""
    kept = without_controls(text)
    return kept if len(kept) <= MAX_SAID_CHARS else kept[: MAX_SAID_CHARS - 1] + "…"


def _get(url: str, token: str | None) -> tuple[int, bytes] | str:
    """GET `url` (the token as a bearer header when given): status and body, or why not."""
    headers = {"Accept": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, headers=headers)
    try:
        with _DIRECT.open(request, timeout=TIMEOUT_SECONDS) as response:
            return response.status, response.read(65536)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(65536)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return _said(getattr(exc, "reason", exc))


def check_server(url: str) -> ServerCheck:
    """GET `<url>/health`, with no token, with a short timeout; never raises."""
    base = base_url(url)
    # 503 is ours with its database down: still ours, and it says so.
    answered = _get(f"{base}/health", None)
    if isinstance(answered, str):
        return ServerCheck(base, False, None, answered)
    status, body = answered
    try:
        answer = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        answer = None
    if not isinstance(answer, dict) or not all(key in answer for key in OUR_FIELDS):
        return ServerCheck(
            base, False, None, f"HTTP {status} from something that is not claude-memory"
        )
    version = printable(str(answer["version"]))
    state = (
        ""
        if answer.get("status") == "ok"
        else printable(f", {answer.get('status')}: database {answer.get('database')}")
    )
    return ServerCheck(base, True, version, f"claude-memory {version}{state}")


def check_access(url: str, token: str | None) -> AccessCheck:
    """An authenticated read at `url` with `token` (none: without one); never raises.

    Only for a URL the user chose, never one from a repository's files: the token goes there."""
    base = base_url(url)
    answered = _get(f"{base}{ACCESS_PATH}", token)
    with_token = token is not None
    if isinstance(answered, str):
        return AccessCheck(base, with_token, False, False, answered)
    status = answered[0]
    if status == 401:
        said = "refuses the token in CLAUDE_MEMORY_TOKEN" if with_token else "needs a token"
        return AccessCheck(base, with_token, False, True, f"{said} (HTTP 401)")
    if status >= 400:
        return AccessCheck(base, with_token, False, False, f"HTTP {status}")
    return AccessCheck(base, with_token, True, False, "answers")


def _said(reason: object) -> str:
    if isinstance(reason, OSError) and reason.strerror:
        return printable(reason.strerror.lower())
    return printable(str(reason)) or type(reason).__name__


def start_hint(url: str) -> str:
    """The command that starts a server at `url` (its port; its host unless the default)."""
    parts = urlsplit(base_url(url))
    command = "claude-memory serve"
    if parts.hostname not in (None, "127.0.0.1", "localhost"):
        command += f" --host {parts.hostname}"
    if parts.port is not None:
        command += f" --port {parts.port}"
    return command


def token_refusal(access: AccessCheck) -> str:
    """Why a URL is not written: its server refuses the token this environment has (or none)."""
    if access.with_token:
        fix = (
            "set CLAUDE_MEMORY_TOKEN to the server's token (on a server with users, your own "
            "from `claude-memory users add`)"
        )
    else:
        fix = "export CLAUDE_MEMORY_TOKEN=<the server's token>"
    return (
        f"the claude-memory server at {access.url} {access.detail}, so the agent would get "
        f"nothing from it: {fix} and run this again (--no-check writes the URL anyway)"
    )


def refusal(check: ServerCheck, option: str = "--url") -> str:
    """Why a URL is not written, and what to run instead."""
    return (
        f"no claude-memory server answers at {check.url} ({check.detail}): start it with "
        f"`{start_hint(check.url)}`, or pass {option} with the address of the one running "
        "(--no-check writes the URL anyway)"
    )
