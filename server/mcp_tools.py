"""The MCP server: tools are thin adapters over MemoryService.

Tools cannot see the Starlette app's state, so the lifespan puts the service in a module-level
holder (`bind_service`) and every tool fetches it with `service()`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from fastmcp import FastMCP
from fastmcp.exceptions import ToolError

from server.errors import ServiceError
from server.memory import MemoryService

INSTRUCTIONS = (
    "Persistent memory across coding sessions: decisions, bug root causes, corrections and "
    "the user's preferences. Search it before starting work on a topic; save what should "
    "outlive this session."
)

_service: MemoryService | None = None


def bind_service(memory_service: MemoryService | None) -> None:
    """Set (or clear, with None) the service the tools use; called by the app's lifespan."""
    global _service
    _service = memory_service


def service() -> MemoryService:
    if _service is None:
        raise ToolError("the memory service is not running yet; try again in a moment")
    return _service


@contextmanager
def tool_errors() -> Iterator[None]:
    """Turn service errors into MCP tool errors carrying the service's message."""
    try:
        yield
    except ServiceError as exc:
        raise ToolError(exc.message) from exc


def build_mcp() -> FastMCP:
    """The MCP server with every tool registered; mounted over SSE and streamable HTTP."""
    return FastMCP("claude-memory", instructions=INSTRUCTIONS, mask_error_details=True)
