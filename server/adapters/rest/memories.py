"""REST handlers for memories: list, create, learn, read, change, delete, check, export
(shapes: server/schemas/memories.py)."""

from __future__ import annotations

from starlette.responses import JSONResponse, Response, StreamingResponse

from server.adapters.http_edge import Handler
from server.core.models.output import to_json
from server.recall.memory_check import check_memory, drifted_memories, record_current_value
from server.schemas import memories
from server.service.face import MemoryApi

DOWNLOADS = {
    "json": ("json", "application/json"),
    "jsonl": ("jsonl", "application/x-ndjson"),
    "markdown": ("md", "text/markdown"),
}


async def list_memories(service: MemoryApi, query: memories.ListMemories) -> JSONResponse:
    where = query.memory_filter()
    page = await service.list_memories(where, limit=query.limit, offset=query.offset)
    return JSONResponse(to_json(page))


async def create_memory(service: MemoryApi, body: memories.CreateMemory) -> JSONResponse:
    outcome = await service.save(
        body.content,
        tags=body.tags or [],
        project=body.project,
        source=body.source or "api",
        kind=body.kind,
        created_at=body.created_at,
        metadata=body.metadata,
        force=body.force,
        visibility=body.visibility,
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


async def learn_trajectory(service: MemoryApi, body: memories.LearnTrajectory) -> JSONResponse:
    outcome = await service.learn(body.trajectory(), source=body.source or "api")
    return JSONResponse(to_json(outcome), 201 if outcome.status == "saved" else 200)


async def create_many(service: MemoryApi, body: memories.BulkCreate) -> JSONResponse:
    drafts = [item.draft(default_source="api") for item in body.memories]
    return JSONResponse(to_json(await service.save_many(drafts, force=body.force)))


async def get_memory(service: MemoryApi, memory_id: int) -> JSONResponse:
    return JSONResponse(to_json(await service.get(memory_id)))


async def update_memory(
    service: MemoryApi, memory_id: int, body: memories.UpdateMemory
) -> JSONResponse:
    if body.current_from is not None:
        recorded = await record_current_value(service, memory_id, body.current_from)
        return JSONResponse(to_json(recorded))
    # supersedes: an id sets the link; 0, or null sent on purpose, clears it; absent keeps it.
    cleared = "supersedes" in body.model_fields_set and body.supersedes is None
    outcome = await service.update(
        memory_id,
        content=body.content,
        tags=body.tags,
        project=body.project,
        kind=body.kind,
        supersedes=0 if cleared else body.supersedes,
        force=body.force,
    )
    return JSONResponse(to_json(outcome))


async def delete_memory(
    service: MemoryApi, memory_id: int, query: memories.DeleteQuery
) -> JSONResponse:
    if query.purge:
        purged = await service.purge(memory_id)
        return JSONResponse({"purged_id": purged.id})
    return JSONResponse(to_json(await service.soft_delete(memory_id)))


async def restore_memory(service: MemoryApi, memory_id: int) -> JSONResponse:
    return JSONResponse(to_json(await service.restore(memory_id)))


async def lock(service: MemoryApi, memory_id: int, body: memories.LockRequest) -> JSONResponse:
    return JSONResponse(to_json(await service.set_locked(memory_id, body.locked)))


async def related(service: MemoryApi, memory_id: int, query: memories.RelatedQuery) -> JSONResponse:
    return JSONResponse(to_json(await service.related(memory_id, limit=query.limit)))


async def versions(service: MemoryApi, memory_id: int) -> JSONResponse:
    return JSONResponse(to_json(await service.versions(memory_id)))


async def check(service: MemoryApi, memory_id: int, query: memories.CodeCheckQuery) -> JSONResponse:
    return JSONResponse(to_json(await check_memory(service, memory_id, query.cwd)))


async def drifted(service: MemoryApi, query: memories.DriftedQuery) -> JSONResponse:
    return JSONResponse(to_json(await drifted_memories(service, query.project, query.cwd)))


async def bulk_delete(service: MemoryApi, query: memories.BulkDeleteEverything) -> JSONResponse:
    result = await service.bulk_soft_delete(
        tag=query.tag,
        project=query.project,
        source=query.source,
        everything=query.all,
        dry_run=query.dry_run,
    )
    return JSONResponse(to_json(result))


async def export(service: MemoryApi, query: memories.ExportQuery) -> Response:
    chunks = await service.export(query.memory_filter(), query.format)
    extension, media = DOWNLOADS[query.format]
    return StreamingResponse(
        (chunk.encode("utf-8") async for chunk in chunks),
        media_type=f"{media}; charset=utf-8",
        headers={"content-disposition": f'attachment; filename="claude-memory.{extension}"'},
    )


HANDLERS: dict[str, Handler] = {
    "listMemories": list_memories,
    "createMemory": create_memory,
    "bulkDeleteMemories": bulk_delete,
    "createMemories": create_many,
    "learnTrajectory": learn_trajectory,
    "getMemory": get_memory,
    "updateMemory": update_memory,
    "deleteMemory": delete_memory,
    "restoreMemory": restore_memory,
    "relatedMemories": related,
    "memoryVersions": versions,
    "checkMemory": check,
    "driftedMemories": drifted,
    "export": export,
    "lockMemory": lock,
}
