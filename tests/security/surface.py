"""The HTTP surface the security tests walk, and what a leaked internal error looks like.

Every REST operation (the hook routes included) comes from the OpenAPI document, so a route
added there is covered at once; the routes the document does not describe (MCP transports and
the UI) are listed here, and `test_every_app_route_is_walked` fails when the app grows one that
is in neither list.
"""

from __future__ import annotations

import httpx

from server.adapters.openapi import openapi_document

# Routes outside the OpenAPI document. /messages/ needs a session id to reach the SSE app.
EXTRA_ROUTES: tuple[tuple[str, str], ...] = (
    ("GET", "/"),
    ("GET", "/ui"),
    ("GET", "/sse"),
    ("POST", "/messages/"),
    ("GET", "/mcp"),
    ("POST", "/mcp"),
    ("DELETE", "/mcp"),
    ("GET", "/ui/"),
    ("GET", "/ui/search"),
)

# Open without the token: supervisors probe /health, the browser loads the UI before it has one.
OPEN_ROUTES = frozenset(
    {("GET", "/health"), ("GET", "/"), ("GET", "/ui"), ("GET", "/ui/"), ("GET", "/ui/search")}
)

# Text that only reaches a client when a database or Python error leaks through.
LEAK_MARKERS = (
    "traceback",
    'file "/',
    "psycopg",
    "sqlstate",
    "syntax error",
    "tsquery",
    "tsvector",
    "select ",
    "insert into",
    "operator does not exist",
    "unterminated",
    "invalid byte sequence",
    "null value in column",
    "violates",
    "asyncpg",
    "starlette",
)


def openapi_routes() -> list[tuple[str, str]]:
    """(METHOD, path template) of every operation in the OpenAPI document."""
    return [
        (method.upper(), path)
        for path, operations in openapi_document()["paths"].items()
        for method in operations
    ]


def every_route() -> list[tuple[str, str]]:
    return sorted(set(openapi_routes()) | set(EXTRA_ROUTES))


def concrete(path: str, memory_id: int = 1) -> str:
    """A requestable URL path for a route template."""
    if path == "/messages/":
        return "/messages/?session_id=0123456789abcdef0123456789abcdef"
    return path.replace("{memory_id}", str(memory_id))


def route_id(route: tuple[str, str]) -> str:
    return f"{route[0]} {route[1]}"


def leaked_internals(text: str) -> list[str]:
    """The leak markers found in a response or error message (case-insensitive)."""
    lowered = text.lower()
    return [marker for marker in LEAK_MARKERS if marker in lowered]


async def send(
    http: httpx.AsyncClient, method: str, path: str, headers: dict[str, str]
) -> tuple[int, bytes]:
    """Status and body of one request to a route (an empty JSON object as the body of POST
    and PATCH). An event stream's body is not read: /sse and GET /mcp would never end."""
    body = b"{}" if method in ("POST", "PATCH") else None
    headers = {"content-type": "application/json", **headers}
    async with http.stream(method, concrete(path), content=body, headers=headers) as response:
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            return response.status_code, b""
        return response.status_code, await response.aread()
