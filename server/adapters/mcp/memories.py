"""MCP tools for memories: save, learn, check, list, read, change, delete, export
(shapes: server/schemas/memories.py)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import anyio
from pydantic import Field

from server.adapters.mcp.tooling import (
    DESTRUCTIVE,
    READ_ONLY,
    WRITES,
    Tool,
    calling_agent,
)
from server.core.access import Viewer, current_viewer
from server.core.models.memories import (
    BulkDeleteResult,
    CheckResult,
    Memory,
    MemoryFilter,
    MemoryPage,
    SaveOutcome,
    UpdateOutcome,
)
from server.recall.memory_check import record_current_value
from server.schemas.fields import MemoryId
from server.schemas.memories import (
    BulkDeleteQuery,
    ExportMemories,
    LearnTrajectory,
    MemoryListPage,
    Purged,
    SaveMemory,
    UpdateMemoryArguments,
)
from server.service.face import MemoryApi

INLINE_EXPORT_LIMIT = 200


@dataclass(frozen=True, slots=True)
class ExportResult:
    """Small exports come back inline in `content`; large ones are written to `path`, the
    caller's one export file in that format, which their next large export replaces."""

    count: int
    output_format: str
    content: str | None
    path: str | None


async def save_memory(service: MemoryApi, args: SaveMemory) -> SaveOutcome:
    """Save a decision, root cause, correction or preference worth keeping.

    Near duplicates are not saved twice (status noop/duplicate, with the match).
    """
    return await service.save(
        args.content,
        tags=args.tags or [],
        source=args.source or calling_agent(),
        project=args.project,
        force=args.force,
        visibility=args.visibility,
    )


async def learn(service: MemoryApi, args: LearnTrajectory) -> SaveOutcome:
    """Record how a task got done after failed attempts, so the next time is faster.

    Call it after a non-obvious fix: the task as someone would ask for it again, what
    worked, what to avoid. Searches and prompt recall show it as a trajectory, ranked
    first when a related task comes up.
    """
    return await service.learn(args.trajectory(), source=args.source or calling_agent())


async def check_memory(
    service: MemoryApi,
    content: Annotated[str, Field(description="The text you are thinking of saving.")],
) -> CheckResult:
    """Check without saving: is content new (ADD), close to a memory (UPDATE) or known
    (NOOP)?"""
    return await service.check(content)


async def list_memories(service: MemoryApi, args: MemoryListPage) -> MemoryPage:
    """List memories newest first, with the total for paging."""
    return await service.list_memories(args.memory_filter(), limit=args.limit, offset=args.offset)


async def get_memory(service: MemoryApi, memory_id: MemoryId) -> Memory:
    """Read one memory in full, including whether it is deleted."""
    return await service.get(memory_id)


async def update_memory(service: MemoryApi, args: UpdateMemoryArguments) -> UpdateOutcome:
    """Correct or extend a memory instead of saving a near copy. Given `current_from`
    (alone), record what the code says now for a drifted memory, as a new version."""
    if args.current_from is not None:
        return await record_current_value(service, args.memory_id, args.current_from)
    return await service.update(
        args.memory_id,
        content=args.content,
        tags=args.tags,
        supersedes=args.supersedes,
        force=args.force,
    )


async def delete_memory(service: MemoryApi, memory_id: MemoryId) -> Memory:
    """Soft-delete a wrong or outdated memory; restore_memory undoes it."""
    return await service.soft_delete(memory_id)


async def restore_memory(service: MemoryApi, memory_id: MemoryId) -> Memory:
    """Undo delete_memory."""
    return await service.restore(memory_id)


async def purge_memory(service: MemoryApi, memory_id: MemoryId) -> Purged:
    """Permanently erase a memory that was already soft-deleted. Cannot be undone."""
    purged = await service.purge(memory_id)
    return Purged(purged_id=purged.id)


async def bulk_delete(service: MemoryApi, args: BulkDeleteQuery) -> BulkDeleteResult:
    """Soft-delete every memory matching all given filters. Previews unless dry_run=false."""
    return await service.bulk_soft_delete(
        tag=args.tag,
        project=args.project,
        source=args.source,
        dry_run=args.dry_run,
    )


async def export_memories(service: MemoryApi, args: ExportMemories) -> ExportResult:
    """Export memories: up to 200 inline, more to a file whose path is returned (your
    one export file in that format, replaced by your next large export)."""
    return await _export(service, args.memory_filter(), args.output_format)


async def _export(service: MemoryApi, where: MemoryFilter, output_format: str) -> ExportResult:
    count = (await service.list_memories(where, limit=1)).total
    chunks = await service.export(where, output_format)
    if count <= INLINE_EXPORT_LIMIT:
        return ExportResult(count, output_format, "".join([c async for c in chunks]), None)
    folder = service.settings.claude_memory_home / "exports"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = folder / _export_name(current_viewer(), output_format)
    await _replace_with_chunks(path, chunks)
    return ExportResult(count, output_format, None, str(path))


def _export_name(viewer: Viewer | None, output_format: str) -> str:
    """The one file a caller's large exports in this format go to, each replacing the last, so
    calls cannot pile files up on the server: per user on a team, one for the local user."""
    owner = f"-user-{viewer.user_id}" if viewer is not None else ""
    return f"memories{owner}.{'md' if output_format == 'markdown' else 'json'}"


async def _replace_with_chunks(path: Path, chunks: AsyncIterator[str]) -> None:
    """Replace `path` with an export readable by its owner only (it holds every memory it
    lists), written beside it first so a reader never sees half of one."""
    draft = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
    draft.touch(mode=0o600, exist_ok=False)
    try:
        async with await anyio.open_file(draft, "w", encoding="utf-8") as handle:
            async for chunk in chunks:
                await handle.write(chunk)
        draft.replace(path)
    finally:
        draft.unlink(missing_ok=True)


TOOLS = (
    Tool(save_memory, WRITES),
    Tool(learn, WRITES),
    Tool(check_memory, READ_ONLY),
    Tool(list_memories, READ_ONLY),
    Tool(get_memory, READ_ONLY),
    Tool(update_memory, {**WRITES, "idempotentHint": True}),
    Tool(delete_memory, DESTRUCTIVE),
    Tool(restore_memory, {**WRITES, "idempotentHint": False}),
    Tool(purge_memory, DESTRUCTIVE),
    Tool(bulk_delete, DESTRUCTIVE),
    Tool(export_memories, READ_ONLY),
)
