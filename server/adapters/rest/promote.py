"""REST handlers for promote (#58): the proposed diff to a project's instruction files, and
writing the accepted changes (shapes: server/schemas/promote.py; the rules:
server/recall/promote.py)."""

from __future__ import annotations

from starlette.responses import JSONResponse

from server.adapters.http_edge import Handler
from server.core.models.output import to_json
from server.recall.promote import apply, propose
from server.schemas import promote
from server.service.face import MemoryApi


async def proposal(service: MemoryApi, query: promote.PromoteQuery) -> JSONResponse:
    return JSONResponse(to_json(await propose(service, query.project, query.cwd)))


async def write(service: MemoryApi, body: promote.PromoteRequest) -> JSONResponse:
    result = await apply(
        service, body.project, body.cwd, accept=set(body.accept), reject=set(body.reject)
    )
    return JSONResponse(to_json(result))


HANDLERS: dict[str, Handler] = {"promoteProposal": proposal, "promoteWrite": write}
