"""REST handlers for the service itself: health, cache, the OpenAPI document, counts, agents,
projects, tags (shapes: server/schemas/system.py)."""

from __future__ import annotations

from starlette.responses import JSONResponse

from server import __version__
from server.adapters.http_edge import Handler
from server.adapters.openapi import openapi_document
from server.agents.registry import AGENTS
from server.core.errors import Unavailable
from server.core.models.output import to_json
from server.service.face import MemoryApi


async def health(service: MemoryApi) -> JSONResponse:
    """Liveness plus database state; never echoes the database's own error text."""
    database_ok = await service.database_ok()
    body = {
        "status": "ok" if database_ok else "degraded",
        "database": "ok" if database_ok else "unavailable",
        "database_kind": "embedded" if service.settings.uses_embedded_database else "external",
        "embedding_provider": service.embedder.provider,
        "embedding_model": service.embedder.name,
        "embedding_dimension": service.embedder.dimension,
        "embeddings": "ok" if service.embedder.reachable else "unavailable",
        "vectors_waiting": await _vectors_waiting(service) if database_ok else None,
        "version": __version__,
    }
    return JSONResponse(body, status_code=200 if database_ok else 503)


async def _vectors_waiting(service: MemoryApi) -> int | None:
    """For /health, which never fails on a database that drops between two statements."""
    try:
        return await service.vectors_waiting()
    except Unavailable:
        return None


async def invalidate_cache(service: MemoryApi) -> JSONResponse:
    service.invalidate_cache()
    return JSONResponse({"status": "ok"})


async def openapi(service: MemoryApi) -> JSONResponse:
    return JSONResponse(openapi_document())


async def stats(service: MemoryApi) -> JSONResponse:
    return JSONResponse(to_json(await service.stats()))


async def agents(service: MemoryApi) -> JSONResponse:
    return JSONResponse([{"name": a.name, "label": a.label} for a in AGENTS.values()])


async def projects(service: MemoryApi) -> JSONResponse:
    return JSONResponse(to_json(await service.projects()))


async def tags(service: MemoryApi) -> JSONResponse:
    return JSONResponse(to_json(await service.tags()))


HANDLERS: dict[str, Handler] = {
    "health": health,
    "invalidateCache": invalidate_cache,
    "openapi": openapi,
    "stats": stats,
    "agents": agents,
    "projects": projects,
    "tags": tags,
}
