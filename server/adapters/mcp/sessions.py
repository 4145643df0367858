"""MCP tools for sessions: the context a session starts with, and the journal of what was done
(shapes: server/schemas/sessions.py)."""

from __future__ import annotations

from functools import partial

from server.adapters.mcp.tooling import READ_ONLY, Tool
from server.core.models.journal import JournalPage
from server.core.models.views import StartupContext
from server.recall.working_tree import WORKING_TREES
from server.schemas.fields import ProjectFilter, SourceFilter, StartupTree
from server.schemas.sessions import JournalQuery
from server.service.face import MemoryApi


async def startup_context(
    service: MemoryApi,
    project: ProjectFilter = None,
    source: SourceFilter = None,
    cwd: StartupTree = None,
) -> StartupContext:
    """Call at session start: learned preferences, patterns, recent work and counts.
    Recent work comes from every agent unless `source` names one. Given `cwd` (the
    project is then the one of that folder unless `project` names one), what the code
    there no longer agrees with is marked or left out."""
    vet = partial(WORKING_TREES.checked, cwd) if cwd else None
    return await service.startup_context(project or cwd, source=source, vet=vet)


async def journal(service: MemoryApi, args: JournalQuery) -> JournalPage:
    """What was done: prompts and the tool calls that followed them, newest first.

    For "which commands failed in this project this week" (tool="Bash", failed=true,
    since="7d") or "what did we run after the deploy prompt" (query="deploy").
    """
    return await service.journal(args.journal_filter(), limit=args.limit)


TOOLS = (
    Tool(startup_context, READ_ONLY),
    Tool(journal, READ_ONLY),
)
