"""REST routes under /api: thin adapters over MemoryService.

Each route parses its input into typed values, calls one service method and returns JSON with
the same snake_case fields the MCP tools return. Errors are raised as ServiceError subclasses
and rendered by the app's one handler as {"error": {"code", "message"}}.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from server.errors import InvalidInput, ServiceError
from server.memory import MemoryService
from server.models import SEARCH_MODES, MemoryFilter, to_json
from server.timeparse import parse_optional_time


class UnprocessableInput(ServiceError):
    """A field has the wrong type (422), as opposed to a bad value (400)."""

    code = "unprocessable"
    status = 422


async def _json_body(request: Request) -> dict[str, Any]:
    try:
        body = json.loads(await request.body() or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise InvalidInput("the request body is not valid JSON") from None
    if not isinstance(body, dict):
        raise UnprocessableInput("the request body must be a JSON object")
    return body


def _field(body: dict[str, Any], name: str, kind: type | tuple[type, ...], default: Any) -> Any:
    value = body.get(name, default)
    if value is None:
        return default
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise UnprocessableInput(f"{name} has the wrong type")
    if not isinstance(value, kind):
        raise UnprocessableInput(f"{name} has the wrong type")
    return value


def routes(service: MemoryService) -> list[BaseRoute]:
    async def search(request: Request) -> JSONResponse:
        body = await _json_body(request)
        query = _field(body, "query", str, "")
        mode = _field(body, "mode", str, "hybrid")
        if mode not in SEARCH_MODES:
            raise InvalidInput(f"mode must be one of {', '.join(SEARCH_MODES)}, got {mode!r}")
        limit = _field(body, "limit", int, 10)
        where = MemoryFilter(
            project=_field(body, "project", str, None),
            tag=_field(body, "tag", str, None),
            kind=_field(body, "kind", str, None),
            since=parse_optional_time(_field(body, "since", str, None), "since"),
            before=parse_optional_time(_field(body, "before", str, None), "before"),
        )
        if mode == "semantic":
            result = await service.search_semantic(
                query,
                limit=limit,
                min_similarity=float(_field(body, "min_similarity", (int, float), 0.3)),
                where=where,
            )
        elif mode == "keyword":
            result = await service.search_keyword(query, limit=limit, where=where)
        else:
            result = await service.search_hybrid(
                query,
                limit=limit,
                keyword_weight=float(_field(body, "keyword_weight", (int, float), 0.5)),
                semantic_weight=float(_field(body, "semantic_weight", (int, float), 0.5)),
                min_similarity=float(_field(body, "min_similarity", (int, float), 0.0)),
                where=where,
            )
        return JSONResponse(
            {"mode": result.mode, "results": to_json(result.hits), "took_ms": result.took_ms}
        )

    return [Route("/api/search", search, methods=["POST"])]
