"""create_app(): one Starlette app serving MCP (SSE + streamable HTTP), REST and the UI.

The service (database pool, model, cache) is opened by the caller and passed in, so `serve`
can report start-up problems in one line before the web server starts, and tests can share
one loaded model across apps. The app's own lifespan only starts the MCP sub-apps.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from server.adapters import rest
from server.adapters.auth import AccessGuard
from server.adapters.body_limit import BodySizeLimit
from server.adapters.frame_guard import NoFraming
from server.adapters.http_guard import HostOriginGuard, allowed_hosts_for
from server.adapters.mcp import build_mcp
from server.adapters.mcp_sessions import SessionsPerUser
from server.adapters.rest import hooks as hook_routes
from server.core.config import Settings
from server.core.errors import ServiceError
from server.ingest.session_imports import SessionImports
from server.recall.hook import HookRecall
from server.service.memory import MemoryService
from server.service.vector_backfill import VectorBackfill

logger = logging.getLogger(__name__)

UI_DIST = Path(__file__).resolve().parents[1] / "ui" / "dist"


def error_body(code: str, message: str) -> dict[str, dict[str, str]]:
    """The one JSON error shape every REST error keeps: {"error": {"code", "message"}}."""
    return {"error": {"code": code, "message": message}}


def create_app(
    settings: Settings, memory_service: MemoryService, *, ui_dist: Path = UI_DIST
) -> Starlette:
    mcp = build_mcp(memory_service)
    sse_app = mcp.http_app(transport="sse", host_origin_protection="auto")
    http_app = mcp.http_app(transport="http", path="/mcp", host_origin_protection="auto")

    hook_recall = HookRecall(memory_service, settings)
    session_imports = SessionImports(memory_service)
    backfill = VectorBackfill(memory_service.vectors)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        backfill.start()
        try:
            async with sse_app.lifespan(app), http_app.lifespan(app):
                yield
        finally:
            await backfill.close()
            await session_imports.close()

    async def root(request: Request) -> Response:
        return RedirectResponse("/ui/")

    routes: list[BaseRoute] = [
        Route("/", root),
        *rest.routes(memory_service),
        *hook_routes.routes(hook_recall, session_imports),
        Route("/ui", root),
        Mount("/ui", app=_ui_app(ui_dist)),
        # The SSE app serves /sse and /messages/; the streamable HTTP app serves /mcp.
        Mount("/", app=_McpRouter(sse_app, SessionsPerUser(http_app))),
    ]
    allowed_hosts = allowed_hosts_for(settings.host, settings.allowed_hosts)
    token = settings.claude_memory_token
    middleware = [
        Middleware(NoFraming),
        Middleware(HostOriginGuard, allowed_hosts=allowed_hosts),
        Middleware(
            AccessGuard,
            users=memory_service.users,
            token=token.reveal() if token is not None else None,
        ),
        Middleware(BodySizeLimit),
    ]
    return Starlette(
        routes=routes,
        middleware=middleware,
        exception_handlers={
            ServiceError: _service_error,
            HTTPException: _http_error,
            ClientDisconnect: _client_gone,
            Exception: _internal_error,
        },
        lifespan=lifespan,
    )


class _McpRouter:
    """Send /sse and /messages/ to the SSE app, /mcp to the streamable HTTP app.

    The sub-apps are mounted whole (their routes are not copied) at the root, because each
    expects its full path; anything else that reaches here is answered with a JSON 404.
    """

    def __init__(self, sse_app: ASGIApp, http_app: ASGIApp) -> None:
        self.sse_app = sse_app
        self.http_app = http_app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if path == "/mcp" or path.startswith("/mcp/"):
            await self.http_app(scope, receive, send)
        elif path == "/sse" or path.startswith("/messages"):
            await self.sse_app(scope, receive, send)
        else:
            response = JSONResponse(error_body("not_found", f"no route {path}"), status_code=404)
            await response(scope, receive, send)


def _ui_app(ui_dist: Path) -> StaticFiles | Starlette:
    if (ui_dist / "index.html").is_file():
        return _SpaStaticFiles(directory=ui_dist, html=True)

    async def not_built(request: Request) -> HTMLResponse:
        return HTMLResponse(
            "<!doctype html><title>claude-memory</title><h1>claude-memory</h1>"
            "<p>The web UI has not been built. Run <code>cd ui &amp;&amp; npm ci &amp;&amp; "
            "npm run build</code> (or <code>./quickstart.sh</code>) and restart the server.</p>"
        )

    return Starlette(routes=[Route("/{path:path}", not_built)])


class _SpaStaticFiles(StaticFiles):
    """Static files where unknown paths get index.html, so client-side routes reload."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        try:
            return await super().get_response(path, scope)
        except HTTPException as exc:
            if exc.status_code != 404:
                raise
            return await super().get_response("index.html", scope)


async def _service_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ServiceError)
    return JSONResponse(error_body(exc.code, exc.message), status_code=exc.status)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    code = {404: "not_found", 405: "method_not_allowed", 413: "too_large"}.get(
        exc.status_code, "http_error"
    )
    return JSONResponse(error_body(code, str(exc.detail)), status_code=exc.status_code)


async def _client_gone(request: Request, exc: Exception) -> Response:
    """The client left before its body was in (or the body deadline closed it): nobody to
    answer, and no fault of ours to log with a traceback."""
    logger.info(
        "client left before its request body was in: %s %s", request.method, request.url.path
    )
    return Response(status_code=400)


async def _internal_error(request: Request, exc: Exception) -> Response:
    logger.exception("unhandled error on %s %s", request.method, request.url.path)
    return JSONResponse(
        error_body("internal", "internal server error; see the server log"), status_code=500
    )
