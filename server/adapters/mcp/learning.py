"""MCP tools for what the service learned: recent distilled context, near duplicates, lessons
(shapes: server/schemas/learning.py)."""

from __future__ import annotations

from dataclasses import dataclass

from server.adapters.mcp.tooling import READ_ONLY, WRITES, Tool
from server.core.models.lessons import Lesson, LessonDraft
from server.core.models.memories import DuplicatePair
from server.core.models.views import RecentContext
from server.schemas.learning import (
    FindDuplicates,
    LessonList,
    LessonsQuery,
    RecentContextArguments,
    SaveLesson,
)
from server.service.face import MemoryApi


@dataclass(frozen=True, slots=True)
class DuplicateList:
    pairs: list[DuplicatePair]


async def recent_context(service: MemoryApi, args: RecentContextArguments) -> RecentContext:
    """Newest distilled memories of a project (or newest of any kind when none are
    distilled)."""
    return await service.recent_context(args.project, limit=args.limit, source=args.source)


async def find_duplicates(service: MemoryApi, args: FindDuplicates) -> DuplicateList:
    """Find pairs of near-duplicate memories to merge or delete."""
    pairs = await service.find_duplicates(
        threshold=args.threshold,
        limit=args.limit,
        project=args.project,
        scan_limit=args.scan_limit,
    )
    return DuplicateList(pairs=pairs)


async def list_lessons(service: MemoryApi, args: LessonsQuery) -> LessonList:
    """Lessons: reminders shown before tool calls that match them (tool, pattern, project)."""
    project = args.project
    found = await service.lessons(project, include_inactive=args.include_inactive)
    return LessonList(lessons=found)


async def save_lesson(service: MemoryApi, args: SaveLesson) -> Lesson:
    """Add a lesson, or change one (with lesson_id; active=false disables it).

    Write one when a call should not be repeated: "never run load tests against staging:
    use the local stack" (tool "Bash", pattern "staging"). strictness "ask" makes Claude
    Code ask the user before such a call; "warn" only reminds the agent.
    """
    if args.lesson_id is not None:
        return await service.update_lesson(args.lesson_id, args.change())
    draft = LessonDraft(
        pattern=args.pattern or "",
        message=args.message or "",
        tool=args.tool or "",
        project=args.project or "",
        strictness=args.strictness or "warn",
        origin="agent",
    )
    return await service.add_lesson(draft)


TOOLS = (
    Tool(recent_context, READ_ONLY),
    Tool(find_duplicates, READ_ONLY),
    Tool(list_lessons, READ_ONLY),
    Tool(save_lesson, WRITES),
)
