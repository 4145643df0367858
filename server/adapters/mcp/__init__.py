"""The MCP server: 22 tools, one module per resource mirroring server/schemas/ (memories,
search, sessions, learning, system), each tool a thin adapter over the service's face
(server/service/face.py). How a tool is written: server/adapters/mcp/tooling.py.

The service reaches the tools through FastMCP's lifespan context: `build_mcp(service)` gives
the server a lifespan that yields {"service": service}, entered by whichever transport runs it
(SSE and streamable HTTP in server/app.py, stdio in `claude-memory mcp`). Names and parameters
match the established claude-memory tool set, so existing CLAUDE.md instructions keep working.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastmcp import FastMCP

from server import __version__
from server.adapters.mcp import learning, memories, search, sessions, system
from server.adapters.mcp.middleware import ActAsCaller, ArgumentErrors
from server.adapters.mcp.tooling import SERVICE, Tool, exposed
from server.service.face import MemoryApi

INSTRUCTIONS = (
    "Persistent memory across coding sessions: decisions, bug root causes, corrections and "
    "the user's preferences. Call startup_context at session start, search before starting "
    "work on a topic, and save_memory what should outlive this session."
)
TOOLS: tuple[Tool, ...] = (
    *sessions.TOOLS,
    *memories.TOOLS,
    *search.TOOLS,
    *learning.TOOLS,
    *system.TOOLS,
)


def build_mcp(service: MemoryApi | None = None) -> FastMCP:
    """The MCP server over `service`, every tool registered; mounted over SSE and streamable
    HTTP, or run over stdio. Without a service (to list the tools) a call answers that the
    service is not running."""

    @asynccontextmanager
    async def lifespan(server: FastMCP) -> AsyncIterator[dict[str, Any]]:
        yield {SERVICE: service}

    mcp = FastMCP(
        "claude-memory",
        instructions=INSTRUCTIONS,
        version=__version__,
        mask_error_details=True,
        lifespan=lifespan,
    )
    mcp.add_middleware(ActAsCaller())
    mcp.add_middleware(ArgumentErrors(mcp))
    for tool in TOOLS:
        mcp.tool(annotations=tool.annotations)(exposed(tool.function))
    return mcp
