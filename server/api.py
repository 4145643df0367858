"""REST routes under /api: thin adapters over MemoryService.

Each route parses its input into typed values, calls one service method and returns JSON with
the same snake_case fields the MCP tools return. Errors are raised as ServiceError subclasses
and rendered by the app's one handler as {"error": {"code", "message"}}: a value that is wrong
is 400, a value of the wrong type is 422. Unknown query parameters are ignored.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from server.errors import InvalidInput, ServiceError
from server.memory import MemoryService
from server.models import EXPORT_FORMATS, SEARCH_MODES, MemoryDraft, MemoryFilter, to_json
from server.openapi import openapi_document
from server.timeparse import parse_optional_time

MAX_PAGE = 500


class UnprocessableInput(ServiceError):
    """A field has the wrong type (422), as opposed to a bad value (400)."""

    code = "unprocessable"
    status = 422


def _reject_constant(name: str) -> Any:
    raise InvalidInput(f"the request body is not valid JSON: {name} is not a number in JSON")


class UnsupportedMediaType(ServiceError):
    """A request body that is not declared as JSON (415)."""

    code = "unsupported_media_type"
    status = 415


def _declared_json(content_type: str) -> bool:
    media_type = content_type.split(";", 1)[0].strip().lower()
    return media_type == "application/json" or media_type.endswith("+json")


async def _json_body(request: Request) -> dict[str, Any]:
    """The request's JSON object; a body must be declared `Content-Type: application/json`.

    A web page can send another site a text/plain or form body without asking first; a JSON
    content type makes the browser ask (a CORS preflight), and this server never says yes. So
    a page from any origin, another port on this machine included, cannot write here.
    """
    raw = await request.body()
    if raw and not _declared_json(request.headers.get("content-type", "")):
        raise UnsupportedMediaType(
            "send the request body as JSON with Content-Type: application/json"
        )
    try:
        body = json.loads(raw or b"{}", parse_constant=_reject_constant)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        raise InvalidInput("the request body is not valid JSON") from None
    if not isinstance(body, dict):
        raise UnprocessableInput("the request body must be a JSON object")
    try:
        json.dumps(body, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput("the request body has text that is not valid Unicode") from None
    return body


def _field(body: dict[str, Any], name: str, kind: type | tuple[type, ...], default: Any) -> Any:
    """body[name] if it has the expected type; missing or null gives the default."""
    value = body.get(name, default)
    if value is None:
        return default
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if (isinstance(value, bool) and bool not in kinds) or not isinstance(value, kinds):
        raise UnprocessableInput(f"{name} has the wrong type")
    return value


def _optional_unit(body: dict[str, Any], name: str) -> float | None:
    """A number from 0 to 1 if given; None leaves the default to the service."""
    value = _field(body, name, (int, float), None)
    return None if value is None else float(value)


def _supersedes(body: dict[str, Any]) -> int | None:
    """`supersedes`: an id sets the link, null or 0 clears it (0), absent leaves it (None)."""
    if "supersedes" not in body:
        return None
    if body["supersedes"] is None:
        return 0
    value = _field(body, "supersedes", int, None)
    if value < 0:
        raise InvalidInput("supersedes must be a memory id, or 0 / null to remove the link")
    return int(value)


def _string_list(body: dict[str, Any], name: str) -> list[str] | None:
    value = _field(body, name, list, None)
    if value is None:
        return None
    if not all(isinstance(item, str) for item in value):
        raise UnprocessableInput(f"{name} must be a list of strings")
    return [str(item) for item in value]


def _draft(item: Any, position: int) -> MemoryDraft:
    """One element of a bulk request; a wrong type names the element (422)."""
    if not isinstance(item, dict):
        raise UnprocessableInput(f"memories[{position}] must be a JSON object")
    try:
        return MemoryDraft(
            content=_field(item, "content", str, ""),
            tags=_string_list(item, "tags") or [],
            project=_field(item, "project", str, ""),
            source=_field(item, "source", str, "api"),
            kind=_field(item, "kind", str, "manual"),
            created_at=parse_optional_time(_field(item, "created_at", str, None), "created_at"),
            metadata=_field(item, "metadata", dict, {}),
        )
    except ServiceError as exc:
        raise type(exc)(f"memories[{position}]: {exc.message}") from None


def _query_int(request: Request, name: str, default: int) -> int:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise UnprocessableInput(f"{name} must be a whole number, got {raw!r}") from None


def _query_bool(request: Request, name: str, default: bool) -> bool:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    if raw.lower() in ("true", "1", "yes"):
        return True
    if raw.lower() in ("false", "0", "no"):
        return False
    raise UnprocessableInput(f"{name} must be true or false, got {raw!r}")


def _query_text(request: Request, name: str) -> str | None:
    raw = request.query_params.get(name)
    return raw.strip() if raw and raw.strip() else None


def _memory_id(request: Request) -> int:
    raw = request.path_params["memory_id"]
    try:
        return int(raw)
    except ValueError:
        raise UnprocessableInput(f"memory id must be a whole number, got {raw!r}") from None


def _filter_from_query(request: Request, *, archived_by_default: bool = False) -> MemoryFilter:
    return MemoryFilter(
        project=_query_text(request, "project"),
        tag=_query_text(request, "tag"),
        kind=_query_text(request, "kind"),
        source=_query_text(request, "source"),
        since=parse_optional_time(request.query_params.get("since"), "since"),
        before=parse_optional_time(request.query_params.get("before"), "before"),
        include_deleted=_query_bool(request, "include_deleted", False),
        text=_query_text(request, "q"),
        include_archived=_query_bool(request, "include_archived", archived_by_default),
        only_deleted=_query_bool(request, "only_deleted", False),
        session_id=_query_text(request, "session_id"),
    )


def routes(service: MemoryService) -> list[BaseRoute]:
    """The /api routes over `service`."""

    async def stats(request: Request) -> JSONResponse:
        return JSONResponse(to_json(await service.stats()))

    async def projects(request: Request) -> JSONResponse:
        return JSONResponse(to_json(await service.projects()))

    async def tags(request: Request) -> JSONResponse:
        return JSONResponse(to_json(await service.tags()))

    async def list_memories(request: Request) -> JSONResponse:
        limit = _query_int(request, "limit", 50)
        if not 1 <= limit <= MAX_PAGE:
            raise InvalidInput(f"limit must be between 1 and {MAX_PAGE}, got {limit}")
        page = await service.list_memories(
            _filter_from_query(request), limit=limit, offset=_query_int(request, "offset", 0)
        )
        return JSONResponse(to_json(page))

    async def create_memory(request: Request) -> JSONResponse:
        body = await _json_body(request)
        outcome = await service.save(
            _field(body, "content", str, ""),
            tags=_string_list(body, "tags") or [],
            project=_field(body, "project", str, ""),
            source=_field(body, "source", str, "api"),
            kind=_field(body, "kind", str, "manual"),
            created_at=parse_optional_time(_field(body, "created_at", str, None), "created_at"),
            metadata=_field(body, "metadata", dict, {}),
            force=_field(body, "force", bool, False),
        )
        if outcome.status == "saved":
            return JSONResponse({**to_json(outcome.memory), "redacted": outcome.redacted}, 201)
        return JSONResponse(
            {
                "status": outcome.status,
                "id": outcome.id,
                "similar": to_json(outcome.similar),
                "redacted": outcome.redacted,
            }
        )

    async def create_many(request: Request) -> JSONResponse:
        body = await _json_body(request)
        items = _field(body, "memories", list, None)
        if items is None:
            raise InvalidInput('send {"memories": [{"content": ...}, ...]}')
        drafts = [_draft(item, position) for position, item in enumerate(items)]
        result = await service.save_many(drafts, force=_field(body, "force", bool, False))
        return JSONResponse(to_json(result))

    async def get_memory(request: Request) -> JSONResponse:
        return JSONResponse(to_json(await service.get(_memory_id(request))))

    async def update_memory(request: Request) -> JSONResponse:
        memory_id = _memory_id(request)
        body = await _json_body(request)
        outcome = await service.update(
            memory_id,
            content=_field(body, "content", str, None),
            tags=_string_list(body, "tags"),
            project=_field(body, "project", str, None),
            kind=_field(body, "kind", str, None),
            supersedes=_supersedes(body),
            force=_field(body, "force", bool, False),
        )
        return JSONResponse(to_json(outcome))

    async def delete_memory(request: Request) -> JSONResponse:
        memory_id = _memory_id(request)
        if _query_bool(request, "purge", False):
            purged = await service.purge(memory_id)
            return JSONResponse({"purged_id": purged.id})
        return JSONResponse(to_json(await service.soft_delete(memory_id)))

    async def restore_memory(request: Request) -> JSONResponse:
        return JSONResponse(to_json(await service.restore(_memory_id(request))))

    async def related(request: Request) -> JSONResponse:
        limit = _query_int(request, "limit", 3)
        return JSONResponse(to_json(await service.related(_memory_id(request), limit=limit)))

    async def versions(request: Request) -> JSONResponse:
        return JSONResponse(to_json(await service.versions(_memory_id(request))))

    async def bulk_delete(request: Request) -> JSONResponse:
        result = await service.bulk_soft_delete(
            tag=_query_text(request, "tag"),
            project=_query_text(request, "project"),
            source=_query_text(request, "source"),
            everything=_query_bool(request, "all", False),
            dry_run=_query_bool(request, "dry_run", True),
        )
        return JSONResponse(to_json(result))

    async def recall(request: Request) -> JSONResponse:
        """The established /api/recall: semantic search with `threshold`, kept compatible."""
        body = await _json_body(request)
        project = _field(body, "project", str, None)
        result = await service.search_semantic(
            _field(body, "query", str, ""),
            limit=_field(body, "limit", int, 20),
            min_similarity=_optional_unit(body, "threshold"),
            where=MemoryFilter(project=project or None),
        )
        return JSONResponse(
            {"mode": result.mode, "results": to_json(result.hits), "took_ms": result.took_ms}
        )

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
            include_archived=_field(body, "include_archived", bool, False),
        )
        if mode == "semantic":
            result = await service.search_semantic(
                query,
                limit=limit,
                min_similarity=_optional_unit(body, "min_similarity"),
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

    async def export(request: Request) -> Response:
        output_format = request.query_params.get("format", "json")
        if output_format not in EXPORT_FORMATS:
            raise InvalidInput(
                f"format must be one of {', '.join(EXPORT_FORMATS)}, got {output_format!r}"
            )
        chunks = await service.export(
            _filter_from_query(request, archived_by_default=True), output_format
        )
        extension = {"json": "json", "jsonl": "jsonl", "markdown": "md"}[output_format]
        media = {"json": "application/json", "jsonl": "application/x-ndjson"}.get(
            output_format, "text/markdown"
        )
        return StreamingResponse(
            (chunk.encode("utf-8") async for chunk in chunks),
            media_type=f"{media}; charset=utf-8",
            headers={"content-disposition": f'attachment; filename="claude-memory.{extension}"'},
        )

    async def timeline(request: Request) -> JSONResponse:
        where = MemoryFilter(
            project=_query_text(request, "project"),
            kind=_query_text(request, "kind"),
            since=parse_optional_time(request.query_params.get("since"), "since"),
            before=parse_optional_time(request.query_params.get("before"), "before"),
        )
        result = await service.timeline(where, limit=_query_int(request, "limit", 2_000))
        return JSONResponse(to_json(result))

    async def preferences(request: Request) -> JSONResponse:
        return JSONResponse(to_json(await service.preferences(_query_text(request, "project"))))

    async def sessions(request: Request) -> JSONResponse:
        page = await service.sessions(
            project=_query_text(request, "project"),
            source=_query_text(request, "source"),
            limit=_query_int(request, "limit", 50),
            offset=_query_int(request, "offset", 0),
        )
        return JSONResponse(to_json(page))

    async def lock(request: Request) -> JSONResponse:
        memory_id = _memory_id(request)
        body = await _json_body(request)
        locked = _field(body, "locked", bool, True)
        return JSONResponse(to_json(await service.set_locked(memory_id, locked)))

    async def reset_failures(request: Request) -> JSONResponse:
        body = await _json_body(request)
        session = _field(body, "session", str, None)
        return JSONResponse({"reset": await service.reset_distill_failures(session or None)})

    async def openapi(request: Request) -> JSONResponse:
        return JSONResponse(openapi_document())

    return [
        Route("/api/openapi.json", openapi, methods=["GET"]),
        Route("/api/stats", stats, methods=["GET"]),
        Route("/api/projects", projects, methods=["GET"]),
        Route("/api/tags", tags, methods=["GET"]),
        Route("/api/memories", list_memories, methods=["GET"]),
        Route("/api/memories", create_memory, methods=["POST"]),
        Route("/api/memories", bulk_delete, methods=["DELETE"]),
        Route("/api/memories/bulk", create_many, methods=["POST"]),
        Route("/api/memories/{memory_id}", get_memory, methods=["GET"]),
        Route("/api/memories/{memory_id}", update_memory, methods=["PATCH"]),
        Route("/api/memories/{memory_id}", delete_memory, methods=["DELETE"]),
        Route("/api/memories/{memory_id}/restore", restore_memory, methods=["POST"]),
        Route("/api/memories/{memory_id}/related", related, methods=["GET"]),
        Route("/api/memories/{memory_id}/versions", versions, methods=["GET"]),
        Route("/api/recall", recall, methods=["POST"]),
        Route("/api/search", search, methods=["POST"]),
        Route("/api/export", export, methods=["GET"]),
        Route("/api/timeline", timeline, methods=["GET"]),
        Route("/api/preferences", preferences, methods=["GET"]),
        Route("/api/sessions", sessions, methods=["GET"]),
        Route("/api/sessions/reset-failures", reset_failures, methods=["POST"]),
        Route("/api/memories/{memory_id}/lock", lock, methods=["POST"]),
    ]
