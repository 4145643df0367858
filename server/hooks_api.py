"""REST routes the Claude Code hook client (server/hooks.py) calls: thin adapters over recall.py.

    POST /api/hooks/session-start {session_id, cwd, source} -> {additionalContext, project}
    POST /api/hooks/prompt {session_id, cwd, prompt} -> {additionalContext, memory_ids}
    POST /api/hooks/session-end {session_id, cwd, transcript_path} -> 202 {status}

`additionalContext` is "" when there is nothing to add. The session-end route answers at once
and imports the transcript in the background. These routes sit behind the same Host/Origin
guard and optional bearer token as every other route.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from server.api import _field, _json_body
from server.recall import HookRecall


def routes(recall: HookRecall) -> list[BaseRoute]:
    """The /api/hooks routes over `recall` (the app owns it and closes it when stopping)."""

    async def session_start(request: Request) -> JSONResponse:
        body = await _json_body(request)
        context = await recall.session_start(
            _field(body, "session_id", str, ""),
            _field(body, "cwd", str, ""),
            _field(body, "source", str, "startup"),
        )
        return JSONResponse({"additionalContext": context.markdown, "project": context.project})

    async def prompt(request: Request) -> JSONResponse:
        body = await _json_body(request)
        context, ids = await recall.prompt(
            _field(body, "session_id", str, ""),
            _field(body, "cwd", str, ""),
            _field(body, "prompt", str, ""),
        )
        return JSONResponse({"additionalContext": context, "memory_ids": ids})

    async def session_end(request: Request) -> JSONResponse:
        body = await _json_body(request)
        started = recall.request_import(_field(body, "transcript_path", str, ""))
        return JSONResponse({"status": "importing" if started else "queued"}, status_code=202)

    return [
        Route("/api/hooks/session-start", session_start, methods=["POST"]),
        Route("/api/hooks/prompt", prompt, methods=["POST"]),
        Route("/api/hooks/session-end", session_end, methods=["POST"]),
    ]
