"""What runs around every tool call: as whom it runs, and how bad arguments are reported."""

from __future__ import annotations

import mcp.types as mt
from fastmcp import FastMCP
from fastmcp.exceptions import ToolError, ValidationError
from fastmcp.server.dependencies import get_http_request
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools import ToolResult
from pydantic import ValidationError as PydanticValidationError

from server.core.access import Viewer, acting_as
from server.schemas.parsing import input_error


class ActAsCaller(Middleware):
    """Run each tool call as the user whose request carried it (server/adapters/auth.py).

    The MCP transports run tools in the session's task, not in the HTTP request that
    delivered the call, so the viewer is read from that request's scope for every call: a
    session opened with one token never acts with another's rights. Over stdio there is no
    request and no user: the process already holds the database's own credentials.
    """

    async def on_call_tool(
        self,
        context: MiddlewareContext[mt.CallToolRequestParams],
        call_next: CallNext[mt.CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        try:
            request = get_http_request()
        except RuntimeError:
            return await call_next(context)
        viewer = request.scope.get("state", {}).get("viewer")
        with acting_as(viewer if isinstance(viewer, Viewer) else None):
            return await call_next(context)


class ArgumentErrors(Middleware):
    """Arguments that fail validation get the message a REST caller gets, not pydantic's report.

    "limit must be between 1 and 100, got 0" tells an agent what to send; the bounds come from
    the tool's input schema, which FastMCP derived from the same shapes.
    """

    def __init__(self, mcp: FastMCP) -> None:
        self.mcp = mcp

    async def on_call_tool(
        self,
        context: MiddlewareContext[mt.CallToolRequestParams],
        call_next: CallNext[mt.CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        try:
            return await call_next(context)
        except ValidationError as failure:
            if not isinstance(failure.__cause__, PydanticValidationError):
                raise
            tool = await self.mcp.get_tool(context.message.name)
            schema = tool.parameters if tool is not None else {}
            message = input_error(failure.__cause__.errors(), schema).message
            raise ToolError(message) from None
