"""A filter's project read as MCP reads it (service.resolve_project), for the handlers that
take a filter shape."""

from __future__ import annotations

from dataclasses import replace
from typing import TypeVar

from server.core.models.journal import JournalFilter
from server.core.models.memories import MemoryFilter
from server.core.models.receipts import ReceiptFilter
from server.service.face import MemoryApi

Filter = TypeVar("Filter", MemoryFilter, JournalFilter, ReceiptFilter)


async def resolved(service: MemoryApi, where: Filter) -> Filter:
    """`where` with its project resolved (a name, a path, or a folder's project)."""
    return replace(where, project=await service.resolve_project(where.project))
