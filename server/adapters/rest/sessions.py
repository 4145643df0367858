"""REST handlers for what sessions left: the timeline, sessions, the journal, receipts and the
context report (shapes: server/schemas/sessions.py)."""

from __future__ import annotations

from starlette.responses import JSONResponse

from server.adapters.http_edge import Handler
from server.core.models.output import to_json
from server.schemas import sessions
from server.service.face import MemoryApi


async def timeline(service: MemoryApi, query: sessions.TimelineQuery) -> JSONResponse:
    return JSONResponse(to_json(await service.timeline(query.memory_filter(), limit=query.limit)))


async def list_sessions(service: MemoryApi, query: sessions.SessionsQuery) -> JSONResponse:
    page = await service.sessions(
        project=query.project,
        source=query.source,
        limit=query.limit,
        offset=query.offset,
    )
    return JSONResponse(to_json(page))


async def journal(service: MemoryApi, query: sessions.JournalQuery) -> JSONResponse:
    where = query.journal_filter()
    return JSONResponse(to_json(await service.journal(where, limit=query.limit)))


async def receipts(service: MemoryApi, query: sessions.ReceiptsQuery) -> JSONResponse:
    where = query.receipt_filter()
    return JSONResponse(to_json(await service.receipts(where, limit=query.limit)))


async def context(service: MemoryApi, query: sessions.ContextQuery) -> JSONResponse:
    project = query.project
    report = await service.context_report(project, days=query.days, top=query.top)
    return JSONResponse(to_json(report))


HANDLERS: dict[str, Handler] = {
    "timeline": timeline,
    "listSessions": list_sessions,
    "journal": journal,
    "receipts": receipts,
    "context": context,
}
