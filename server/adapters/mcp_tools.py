"""The MCP server: its tools, each a thin adapter over one method of the service's face
(server/service/face.py).

Tools cannot see the Starlette app's state, so the lifespan puts the service in a module-level
holder (`bind_service`) and every tool fetches it with `service()`. Names and parameters match
the established claude-memory tool set, so existing CLAUDE.md instructions keep working.
"""

from __future__ import annotations

import inspect
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Annotated, Any, TypeVar, get_type_hints

import anyio
import mcp.types as mt
from fastmcp import FastMCP
from fastmcp.exceptions import ToolError, ValidationError
from fastmcp.server.dependencies import get_http_request
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools import ToolResult
from pydantic import BaseModel, Field
from pydantic import ValidationError as PydanticValidationError

from server import __version__
from server.agents.registry import DEFAULT_AGENT
from server.core.access import Viewer, acting_as, current_viewer
from server.core.errors import ServiceError
from server.core.models.journal import JournalPage
from server.core.models.lessons import Lesson, LessonDraft
from server.core.models.memories import (
    BulkDeleteResult,
    CheckResult,
    DuplicatePair,
    Memory,
    MemoryFilter,
    MemoryPage,
    SaveOutcome,
    TagCount,
    UpdateOutcome,
)
from server.core.models.search import SearchResult
from server.core.models.stats import Stats
from server.core.models.views import RecentContext, StartupContext
from server.recall.memory_check import record_current_value
from server.recall.working_tree import WORKING_TREES
from server.schemas.fields import MemoryId, ProjectFilter, SourceFilter, StartupTree
from server.schemas.learning import (
    FindDuplicates,
    LessonList,
    LessonsQuery,
    RecentContextArguments,
    SaveLesson,
)
from server.schemas.memories import (
    BulkDeleteQuery,
    ExportMemories,
    LearnTrajectory,
    MemoryListPage,
    Purged,
    SaveMemory,
    UpdateMemoryArguments,
)
from server.schemas.parsing import input_error
from server.schemas.search import HybridSearch, KeywordSearch, SemanticSearch
from server.schemas.sessions import JournalQuery
from server.service.face import MemoryApi

ShapeT = TypeVar("ShapeT", bound=BaseModel)
ResultT = TypeVar("ResultT")

INSTRUCTIONS = (
    "Persistent memory across coding sessions: decisions, bug root causes, corrections and "
    "the user's preferences. Call startup_context at session start, search before starting "
    "work on a topic, and save_memory what should outlive this session."
)
READ_ONLY = {"readOnlyHint": True, "openWorldHint": False}
WRITES = {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False}
DESTRUCTIVE = {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": False}
INLINE_EXPORT_LIMIT = 200

_service: MemoryApi | None = None


def bind_service(memory_service: MemoryApi | None) -> None:
    """Set (or clear, with None) the service the tools use; called by the app's lifespan."""
    global _service
    _service = memory_service


def service() -> MemoryApi:
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


async def _filter(
    project: str | None = None,
    tag: str | None = None,
    since: datetime | None = None,
    before: datetime | None = None,
    source: str | None = None,
    *,
    with_general: bool = False,
) -> MemoryFilter:
    return MemoryFilter(
        project=await service().resolve_project(project),
        with_general=with_general,
        tag=tag,
        source=source,
        since=since,
        before=before,
    )


@dataclass(frozen=True, slots=True)
class TagList:
    tags: list[TagCount]


@dataclass(frozen=True, slots=True)
class DuplicateList:
    pairs: list[DuplicatePair]


@dataclass(frozen=True, slots=True)
class ExportResult:
    """Small exports come back inline in `content`; large ones are written to `path`, the
    caller's one export file in that format, which their next large export replaces."""

    count: int
    output_format: str
    content: str | None
    path: str | None


def build_mcp() -> FastMCP:
    """The MCP server with every tool registered; mounted over SSE and streamable HTTP.

    A tool with several parameters takes a shape from server/schemas (`@arguments(Shape)`):
    its parameters, their defaults, limits and descriptions are the shape's fields, the same
    ones the REST route for that operation parses.
    """
    mcp = FastMCP(
        "claude-memory", instructions=INSTRUCTIONS, version=__version__, mask_error_details=True
    )
    mcp.add_middleware(ActAsCaller())
    mcp.add_middleware(ArgumentErrors(mcp))

    @mcp.tool(annotations=READ_ONLY)
    async def startup_context(
        project: ProjectFilter = None, source: SourceFilter = None, cwd: StartupTree = None
    ) -> StartupContext:
        """Call at session start: learned preferences, patterns, recent work and counts.
        Recent work comes from every agent unless `source` names one. Given `cwd` (the
        project is then the one of that folder unless `project` names one), what the code
        there no longer agrees with is marked or left out."""
        with tool_errors():
            vet = partial(WORKING_TREES.checked, cwd) if cwd else None
            return await service().startup_context(project or cwd, source=source, vet=vet)

    @mcp.tool(annotations=WRITES)
    @arguments(SaveMemory)
    async def save_memory(args: SaveMemory) -> SaveOutcome:
        """Save a decision, root cause, correction or preference worth keeping.

        Near duplicates are not saved twice (status noop/duplicate, with the match).
        """
        with tool_errors():
            return await service().save(
                args.content,
                tags=args.tags or [],
                source=args.source or DEFAULT_AGENT,
                project=args.project,
                force=args.force,
                visibility=args.visibility,
            )

    @mcp.tool(annotations=WRITES)
    @arguments(LearnTrajectory)
    async def learn(args: LearnTrajectory) -> SaveOutcome:
        """Record how a task got done after failed attempts, so the next time is faster.

        Call it after a non-obvious fix: the task as someone would ask for it again, what
        worked, what to avoid. Searches and prompt recall show it as a trajectory, ranked
        first when a related task comes up.
        """
        with tool_errors():
            return await service().learn(args.trajectory(), source=args.source or DEFAULT_AGENT)

    @mcp.tool(annotations=READ_ONLY)
    async def check_memory(
        content: Annotated[str, Field(description="The text you are thinking of saving.")],
    ) -> CheckResult:
        """Check without saving: is content new (ADD), close to a memory (UPDATE) or known
        (NOOP)?"""
        with tool_errors():
            return await service().check(content)

    @mcp.tool(annotations=READ_ONLY)
    @arguments(SemanticSearch)
    async def semantic_search(args: SemanticSearch) -> SearchResult:
        """Find memories close in meaning to a question, even in other words."""
        with tool_errors():
            result = await service().search_semantic(
                args.query,
                limit=args.limit,
                min_similarity=args.min_similarity,
                where=await _filter(
                    args.project,
                    since=args.since,
                    before=args.before,
                    source=args.source,
                    with_general=not args.project_only,
                ),
            )
            return await WORKING_TREES.with_verdicts(result, args.cwd)

    @mcp.tool(annotations=READ_ONLY)
    @arguments(KeywordSearch)
    async def search_memories(args: KeywordSearch) -> SearchResult:
        """Keyword search: exact words and identifiers (ERR_POOL_TIMEOUT, --frozen-lockfile)."""
        with tool_errors():
            result = await service().search_keyword(
                args.query,
                limit=args.limit,
                where=await _filter(
                    args.project,
                    since=args.since,
                    before=args.before,
                    source=args.source,
                    with_general=not args.project_only,
                ),
            )
            return await WORKING_TREES.with_verdicts(result, args.cwd)

    @mcp.tool(annotations=READ_ONLY)
    @arguments(HybridSearch)
    async def hybrid_search(args: HybridSearch) -> SearchResult:
        """Best general search: meaning and exact words combined. Prefer this one."""
        with tool_errors():
            where = await _filter(
                args.project,
                since=args.since,
                before=args.before,
                source=args.source,
                with_general=not args.project_only,
            )
            result = await service().search_hybrid(
                args.query,
                limit=args.limit,
                keyword_weight=args.keyword_weight,
                semantic_weight=args.semantic_weight,
                where=replace(where, include_archived=args.include_archived),
            )
            return await WORKING_TREES.with_verdicts(result, args.cwd)

    @mcp.tool(annotations=READ_ONLY)
    @arguments(MemoryListPage)
    async def list_memories(args: MemoryListPage) -> MemoryPage:
        """List memories newest first, with the total for paging."""
        with tool_errors():
            where = await _filter(args.project, args.tag, args.since, args.before)
            return await service().list_memories(where, limit=args.limit, offset=args.offset)

    @mcp.tool(annotations=READ_ONLY)
    async def get_memory(memory_id: MemoryId) -> Memory:
        """Read one memory in full, including whether it is deleted."""
        with tool_errors():
            return await service().get(memory_id)

    @mcp.tool(annotations=READ_ONLY)
    @arguments(RecentContextArguments)
    async def recent_context(args: RecentContextArguments) -> RecentContext:
        """Newest distilled memories of a project (or newest of any kind when none are
        distilled)."""
        with tool_errors():
            return await service().recent_context(
                args.project, limit=args.limit, source=args.source
            )

    @mcp.tool(annotations={**WRITES, "idempotentHint": True})
    @arguments(UpdateMemoryArguments)
    async def update_memory(args: UpdateMemoryArguments) -> UpdateOutcome:
        """Correct or extend a memory instead of saving a near copy. Given `current_from`
        (alone), record what the code says now for a drifted memory, as a new version."""
        with tool_errors():
            if args.current_from is not None:
                return await record_current_value(service(), args.memory_id, args.current_from)
            return await service().update(
                args.memory_id,
                content=args.content,
                tags=args.tags,
                supersedes=args.supersedes,
                force=args.force,
            )

    @mcp.tool(annotations=DESTRUCTIVE)
    async def delete_memory(memory_id: MemoryId) -> Memory:
        """Soft-delete a wrong or outdated memory; restore_memory undoes it."""
        with tool_errors():
            return await service().soft_delete(memory_id)

    @mcp.tool(annotations={**WRITES, "idempotentHint": False})
    async def restore_memory(memory_id: MemoryId) -> Memory:
        """Undo delete_memory."""
        with tool_errors():
            return await service().restore(memory_id)

    @mcp.tool(annotations=DESTRUCTIVE)
    async def purge_memory(memory_id: MemoryId) -> Purged:
        """Permanently erase a memory that was already soft-deleted. Cannot be undone."""
        with tool_errors():
            purged = await service().purge(memory_id)
            return Purged(purged_id=purged.id)

    @mcp.tool(annotations=READ_ONLY)
    @arguments(FindDuplicates)
    async def find_duplicates(args: FindDuplicates) -> DuplicateList:
        """Find pairs of near-duplicate memories to merge or delete."""
        with tool_errors():
            pairs = await service().find_duplicates(
                threshold=args.threshold,
                limit=args.limit,
                project=await service().resolve_project(args.project),
                scan_limit=args.scan_limit,
            )
            return DuplicateList(pairs=pairs)

    @mcp.tool(annotations=DESTRUCTIVE)
    @arguments(BulkDeleteQuery)
    async def bulk_delete(args: BulkDeleteQuery) -> BulkDeleteResult:
        """Soft-delete every memory matching all given filters. Previews unless dry_run=false."""
        with tool_errors():
            return await service().bulk_soft_delete(
                tag=args.tag,
                project=await service().resolve_project(args.project),
                source=args.source,
                dry_run=args.dry_run,
            )

    @mcp.tool(annotations=READ_ONLY)
    async def list_tags() -> TagList:
        """All tags in use, with how many live memories carry each."""
        with tool_errors():
            return TagList(tags=await service().tags())

    @mcp.tool(annotations=READ_ONLY)
    async def get_stats() -> Stats:
        """Counts by project, source and kind; deleted; sessions; storage; cache."""
        with tool_errors():
            return await service().stats()

    @mcp.tool(annotations=READ_ONLY)
    @arguments(ExportMemories)
    async def export_memories(args: ExportMemories) -> ExportResult:
        """Export memories: up to 200 inline, more to a file whose path is returned (your
        one export file in that format, replaced by your next large export)."""
        with tool_errors():
            where = await _filter(args.project, args.tag, args.since, args.before)
            return await _export(where, args.output_format)

    @mcp.tool(annotations=READ_ONLY)
    @arguments(JournalQuery)
    async def journal(args: JournalQuery) -> JournalPage:
        """What was done: prompts and the tool calls that followed them, newest first.

        For "which commands failed in this project this week" (tool="Bash", failed=true,
        since="7d") or "what did we run after the deploy prompt" (query="deploy").
        """
        with tool_errors():
            where = replace(
                args.journal_filter(), project=await service().resolve_project(args.project)
            )
            return await service().journal(where, limit=args.limit)

    @mcp.tool(annotations=READ_ONLY)
    @arguments(LessonsQuery)
    async def list_lessons(args: LessonsQuery) -> LessonList:
        """Lessons: reminders shown before tool calls that match them (tool, pattern, project)."""
        with tool_errors():
            project = await service().resolve_project(args.project)
            found = await service().lessons(project, include_inactive=args.include_inactive)
            return LessonList(lessons=found)

    @mcp.tool(annotations=WRITES)
    @arguments(SaveLesson)
    async def save_lesson(args: SaveLesson) -> Lesson:
        """Add a lesson, or change one (with lesson_id; active=false disables it).

        Write one when a call should not be repeated: "never run load tests against staging:
        use the local stack" (tool "Bash", pattern "staging"). strictness "ask" makes Claude
        Code ask the user before such a call; "warn" only reminds the agent.
        """
        with tool_errors():
            if args.lesson_id is not None:
                return await service().update_lesson(args.lesson_id, args.change())
            draft = LessonDraft(
                pattern=args.pattern or "",
                message=args.message or "",
                tool=args.tool or "",
                project=args.project or "",
                strictness=args.strictness or "warn",
                origin="agent",
            )
            return await service().add_lesson(draft)

    return mcp


def arguments(
    shape: type[ShapeT],
) -> Callable[[Callable[[ShapeT], Awaitable[ResultT]]], Callable[..., Awaitable[ResultT]]]:
    """Give a tool `shape`'s fields as its parameters; the tool receives them as one `shape`.

    FastMCP reads a tool's parameters from its signature, so the wrapper's signature is built
    from the shape's fields: type, constraints, default and description each come from there.
    FastMCP has validated the arguments by the time the wrapper runs.
    """

    def expose(tool: Callable[[ShapeT], Awaitable[ResultT]]) -> Callable[..., Awaitable[ResultT]]:
        async def tool_with_fields(**values: Any) -> ResultT:
            return await tool(shape.model_construct(**values))

        fields = sorted(shape.model_fields.items(), key=lambda item: not item[1].is_required())
        parameters = [
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                default=(
                    inspect.Parameter.empty
                    if field.is_required()
                    else field.get_default(call_default_factory=True)
                ),
                annotation=Annotated[
                    field.annotation,
                    *field.metadata,
                    Field(description=field.description, json_schema_extra=field.json_schema_extra),
                ],
            )
            for name, field in fields
        ]
        returns = get_type_hints(tool)["return"]
        tool_with_fields.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            parameters, return_annotation=returns
        )
        tool_with_fields.__annotations__ = {p.name: p.annotation for p in parameters}
        tool_with_fields.__annotations__["return"] = returns
        tool_with_fields.__name__ = tool.__name__
        tool_with_fields.__qualname__ = tool.__qualname__
        tool_with_fields.__doc__ = tool.__doc__
        return tool_with_fields

    return expose


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


async def _export(where: MemoryFilter, output_format: str) -> ExportResult:
    memory_service = service()
    count = (await memory_service.list_memories(where, limit=1)).total
    chunks = await memory_service.export(where, output_format)
    if count <= INLINE_EXPORT_LIMIT:
        return ExportResult(count, output_format, "".join([c async for c in chunks]), None)
    folder = memory_service.settings.claude_memory_home / "exports"
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
