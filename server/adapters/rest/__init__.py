"""REST routes: one module per resource, mirroring server/schemas/ (memories, search, sessions,
learning, system, promote); the hooks' routes are hooks.py here, served apart (they need
recall and the session imports, not only the service).

Each handler is a top-level function whose first parameter is the service (`MemoryApi`, the
service's face) and whose other parameters are what server/adapters/http_edge.py parsed for its
operation of server/adapters/route_table.py: the ids its path names, `query`, `body`. Each
module lists its handlers in `HANDLERS` by operationId; `routes` binds the service to each and
serves them. A handler can be called alone: `await memories.get_memory(service, 7)`.
"""

from __future__ import annotations

from functools import partial

from starlette.routing import BaseRoute

from server.adapters.http_edge import Handler, serve
from server.adapters.rest import learning, memories, promote, search, sessions, system
from server.adapters.route_table import OPERATIONS
from server.service.face import MemoryApi

HANDLERS: dict[str, Handler] = {
    **system.HANDLERS,
    **memories.HANDLERS,
    **search.HANDLERS,
    **sessions.HANDLERS,
    **learning.HANDLERS,
    **promote.HANDLERS,
}


def routes(service: MemoryApi) -> list[BaseRoute]:
    """The REST routes over `service`: every operation of the route table but the hooks'."""
    return [
        serve(op, partial(HANDLERS[op.operation_id], service))
        for op in OPERATIONS
        if op.operation_id in HANDLERS
    ]
