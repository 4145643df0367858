"""MCP tools for the store as a whole: its tags and counts (shapes: server/schemas/system.py)."""

from __future__ import annotations

from dataclasses import dataclass

from server.adapters.mcp.tooling import READ_ONLY, Tool
from server.core.models.memories import TagCount
from server.core.models.stats import Stats
from server.service.face import MemoryApi


@dataclass(frozen=True, slots=True)
class TagList:
    tags: list[TagCount]


async def list_tags(service: MemoryApi) -> TagList:
    """All tags in use, with how many live memories carry each."""
    return TagList(tags=await service.tags())


async def get_stats(service: MemoryApi) -> Stats:
    """Counts by project, source and kind; deleted; sessions; storage; cache."""
    return await service.stats()


TOOLS = (
    Tool(list_tags, READ_ONLY),
    Tool(get_stats, READ_ONLY),
)
