"""REST routes: one handler per operation of server/adapters/route_table.py, each a thin adapter.

A handler receives its input already parsed into the shapes of server/schemas (by
server/adapters/http_edge.py), calls one service method and returns JSON with the same snake_case
fields the MCP tools return. Errors are ServiceError subclasses, rendered by the app's one handler
as {"error": {"code", "message"}}: a value that is wrong is 400, a value of the wrong type 422.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TypeVar

from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute

from server import __version__
from server.adapters.http_edge import Handler, serve
from server.adapters.openapi import openapi_document
from server.adapters.route_table import OPERATIONS
from server.agents.registry import AGENTS
from server.core.errors import Unavailable
from server.core.models.journal import JournalFilter
from server.core.models.memories import MemoryFilter
from server.core.models.output import to_json
from server.core.models.receipts import ReceiptFilter
from server.core.models.search import SearchResult
from server.recall.memory_check import check_memory, drifted_memories, record_current_value
from server.recall.working_tree import WORKING_TREES
from server.schemas import learning, memories, search, sessions
from server.service.face import MemoryApi

DOWNLOADS = {
    "json": ("json", "application/json"),
    "jsonl": ("jsonl", "application/x-ndjson"),
    "markdown": ("md", "text/markdown"),
}


async def _vectors_waiting(service: MemoryApi) -> int | None:
    """For /health, which never fails on a database that drops between two statements."""
    try:
        return await service.vectors_waiting()
    except Unavailable:
        return None


Filter = TypeVar("Filter", MemoryFilter, JournalFilter, ReceiptFilter)


def search_body(result: SearchResult) -> dict[str, object]:
    """A search's answer: `hits`, as MCP's search tools name them. `results` holds the same
    list under its old name, deprecated (docs/API.md), for one release."""
    hits = to_json(result.hits)
    return {
        "mode": result.mode,
        "hits": hits,
        "results": hits,
        "took_ms": result.took_ms,
        "reranked_by": result.reranked_by,
        "rerank_skipped": result.rerank_skipped,
    }


def routes(service: MemoryApi) -> list[BaseRoute]:
    """The REST routes over `service`: every operation of the route table but the hooks'."""

    async def health() -> JSONResponse:
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

    async def invalidate_cache() -> JSONResponse:
        service.invalidate_cache()
        return JSONResponse({"status": "ok"})

    async def resolved(where: Filter) -> Filter:
        """`where` with its project read as MCP reads it (service.resolve_project)."""
        return replace(where, project=await service.resolve_project(where.project))

    async def openapi() -> JSONResponse:
        return JSONResponse(openapi_document())

    async def stats() -> JSONResponse:
        return JSONResponse(to_json(await service.stats()))

    async def agents() -> JSONResponse:
        return JSONResponse([{"name": a.name, "label": a.label} for a in AGENTS.values()])

    async def projects() -> JSONResponse:
        return JSONResponse(to_json(await service.projects()))

    async def tags() -> JSONResponse:
        return JSONResponse(to_json(await service.tags()))

    async def list_memories(query: memories.ListMemories) -> JSONResponse:
        page = await service.list_memories(
            await resolved(query.memory_filter()), limit=query.limit, offset=query.offset
        )
        return JSONResponse(to_json(page))

    async def create_memory(body: memories.CreateMemory) -> JSONResponse:
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

    async def learn_trajectory(body: memories.LearnTrajectory) -> JSONResponse:
        outcome = await service.learn(body.trajectory(), source=body.source or "api")
        return JSONResponse(to_json(outcome), 201 if outcome.status == "saved" else 200)

    async def create_many(body: memories.BulkCreate) -> JSONResponse:
        drafts = [item.draft(default_source="api") for item in body.memories]
        return JSONResponse(to_json(await service.save_many(drafts, force=body.force)))

    async def get_memory(memory_id: int) -> JSONResponse:
        return JSONResponse(to_json(await service.get(memory_id)))

    async def update_memory(memory_id: int, body: memories.UpdateMemory) -> JSONResponse:
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

    async def delete_memory(memory_id: int, query: memories.DeleteQuery) -> JSONResponse:
        if query.purge:
            purged = await service.purge(memory_id)
            return JSONResponse({"purged_id": purged.id})
        return JSONResponse(to_json(await service.soft_delete(memory_id)))

    async def restore_memory(memory_id: int) -> JSONResponse:
        return JSONResponse(to_json(await service.restore(memory_id)))

    async def related(memory_id: int, query: memories.RelatedQuery) -> JSONResponse:
        return JSONResponse(to_json(await service.related(memory_id, limit=query.limit)))

    async def check(memory_id: int, query: memories.CodeCheckQuery) -> JSONResponse:
        return JSONResponse(to_json(await check_memory(service, memory_id, query.cwd)))

    async def drifted(query: memories.DriftedQuery) -> JSONResponse:
        return JSONResponse(to_json(await drifted_memories(service, query.project, query.cwd)))

    async def versions(memory_id: int) -> JSONResponse:
        return JSONResponse(to_json(await service.versions(memory_id)))

    async def bulk_delete(query: memories.BulkDeleteEverything) -> JSONResponse:
        result = await service.bulk_soft_delete(
            tag=query.tag,
            project=await service.resolve_project(query.project),
            source=query.source,
            everything=query.all,
            dry_run=query.dry_run,
        )
        return JSONResponse(to_json(result))

    async def recall(body: search.RecallRequest) -> JSONResponse:
        """The established /api/recall: semantic search with `threshold`, kept compatible."""
        result = await service.search_semantic(
            body.query,
            limit=body.limit,
            min_similarity=body.threshold,
            where=MemoryFilter(
                project=await service.resolve_project(body.project),
                with_general=not body.project_only,
            ),
        )
        return JSONResponse(search_body(result))

    async def search_memories(body: search.SearchRequest) -> JSONResponse:
        where = MemoryFilter(
            project=await service.resolve_project(body.project),
            with_general=not body.project_only,
            tag=body.tag,
            kind=body.kind,
            source=body.source,
            since=body.since,
            before=body.before,
            include_archived=body.include_archived,
        )
        if body.mode == "semantic":
            result = await service.search_semantic(
                body.query, limit=body.limit, min_similarity=body.min_similarity, where=where
            )
        elif body.mode == "keyword":
            result = await service.search_keyword(body.query, limit=body.limit, where=where)
        else:
            result = await service.search_hybrid(
                body.query,
                limit=body.limit,
                keyword_weight=body.keyword_weight,
                semantic_weight=body.semantic_weight,
                min_similarity=body.min_similarity or 0.0,
                where=where,
            )
        return JSONResponse(search_body(await WORKING_TREES.with_verdicts(result, body.cwd)))

    async def export(query: memories.ExportQuery) -> Response:
        chunks = await service.export(await resolved(query.memory_filter()), query.format)
        extension, media = DOWNLOADS[query.format]
        return StreamingResponse(
            (chunk.encode("utf-8") async for chunk in chunks),
            media_type=f"{media}; charset=utf-8",
            headers={"content-disposition": f'attachment; filename="claude-memory.{extension}"'},
        )

    async def timeline(query: sessions.TimelineQuery) -> JSONResponse:
        where = MemoryFilter(
            project=await service.resolve_project(query.project),
            kind=query.kind,
            source=query.source,
            since=query.since,
            before=query.before,
        )
        return JSONResponse(to_json(await service.timeline(where, limit=query.limit)))

    async def preferences(query: learning.PreferencesQuery) -> JSONResponse:
        project = await service.resolve_project(query.project)
        return JSONResponse(to_json(await service.preferences(project)))

    async def list_sessions(query: sessions.SessionsQuery) -> JSONResponse:
        page = await service.sessions(
            project=await service.resolve_project(query.project),
            source=query.source,
            limit=query.limit,
            offset=query.offset,
        )
        return JSONResponse(to_json(page))

    async def journal(query: sessions.JournalQuery) -> JSONResponse:
        return JSONResponse(
            to_json(
                await service.journal(await resolved(query.journal_filter()), limit=query.limit)
            )
        )

    async def receipts(query: sessions.ReceiptsQuery) -> JSONResponse:
        where = await resolved(query.receipt_filter())
        return JSONResponse(to_json(await service.receipts(where, limit=query.limit)))

    async def context(query: sessions.ContextQuery) -> JSONResponse:
        project = await service.resolve_project(query.project)
        report = await service.context_report(project, days=query.days, top=query.top)
        return JSONResponse(to_json(report))

    async def list_lessons(query: learning.LessonsQuery) -> JSONResponse:
        project = await service.resolve_project(query.project)
        found = await service.lessons(project, include_inactive=query.include_inactive)
        return JSONResponse({"lessons": to_json(found)})

    async def create_lesson(body: learning.NewLesson) -> JSONResponse:
        return JSONResponse(to_json(await service.add_lesson(body.draft())), status_code=201)

    async def update_lesson(lesson_id: int, body: learning.LessonEdit) -> JSONResponse:
        return JSONResponse(to_json(await service.update_lesson(lesson_id, body.change())))

    async def lock(memory_id: int, body: memories.LockRequest) -> JSONResponse:
        return JSONResponse(to_json(await service.set_locked(memory_id, body.locked)))

    async def reset_failures(body: learning.ResetFailures) -> JSONResponse:
        return JSONResponse({"reset": await service.reset_distill_failures(body.session or None)})

    handlers: dict[str, Handler] = {
        "health": health,
        "invalidateCache": invalidate_cache,
        "openapi": openapi,
        "stats": stats,
        "agents": agents,
        "projects": projects,
        "tags": tags,
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
        "recall": recall,
        "search": search_memories,
        "export": export,
        "timeline": timeline,
        "preferences": preferences,
        "lockMemory": lock,
        "resetDistillFailures": reset_failures,
        "listSessions": list_sessions,
        "journal": journal,
        "receipts": receipts,
        "context": context,
        "listLessons": list_lessons,
        "createLesson": create_lesson,
        "updateLesson": update_lesson,
    }
    return [
        serve(op, handlers[op.operation_id]) for op in OPERATIONS if op.operation_id in handlers
    ]
