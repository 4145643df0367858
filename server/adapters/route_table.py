"""Every REST operation, declared once: method, path, shapes in and out, and OpenAPI links.

The REST adapters (server/adapters/rest/, the hooks' in its hooks.py) serve these entries with
a handler each, and server/adapters/openapi.py derives the document from them. Links pass an id from
a response to the operations that take it; schemathesis' stateful phase follows them to chain real
calls.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from server.core.models.journal import JournalPage
from server.core.models.lessons import Lesson
from server.core.models.memories import (
    BulkDeleteResult,
    BulkSaveResult,
    CodeCheck,
    DriftedList,
    Memory,
    MemoryPage,
    MemoryVersion,
    ProjectSummary,
    RelatedMemory,
    SaveOutcome,
    TagCount,
    UpdateOutcome,
)
from server.core.models.promotion import PromotionResult, Proposal
from server.core.models.receipts import ContextReport, ReceiptPage
from server.core.models.sessions import SessionPage
from server.core.models.stats import Stats
from server.core.models.views import PreferenceTiers, Timeline
from server.schemas import hooks, learning, memories, promote, search, sessions, system

Links = dict[str, Any]


@dataclass(frozen=True)
class Reply:
    """One response: its status, the type its JSON body has, and where its ids lead."""

    status: int
    shape: Any
    description: str = "OK"
    links: Links = field(default_factory=dict)
    media_types: tuple[str, ...] = ("application/json",)


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    operation_id: str
    summary: str
    replies: tuple[Reply, ...]
    query: type[BaseModel] | None = None
    body: type[BaseModel] | None = None


def memory_links(pointer: str, *targets: str) -> Links:
    """Links passing the memory id at `pointer` in the response to operations on it.

    A target is an operationId, or "purgeMemory": deleteMemory with purge=true.
    """
    links: Links = {}
    for target in targets:
        parameters: dict[str, Any] = {"path.memory_id": f"$response.body#{pointer}"}
        if target == "purgeMemory":
            parameters["query.purge"] = True
        links[target] = {
            "operationId": "deleteMemory" if target == "purgeMemory" else target,
            "parameters": parameters,
        }
    return links


def query_links(value: str, targets: dict[str, str]) -> Links:
    """Links passing `value` (a runtime expression) as the named query parameter of each target."""
    return {
        f"{operation_id}By{parameter.title().replace('_', '')}": {
            "operationId": operation_id,
            "parameters": {f"query.{parameter}": value},
        }
        for operation_id, parameter in targets.items()
    }


LESSON_LINKS = {
    "updateLesson": {
        "operationId": "updateLesson",
        "parameters": {"path.lesson_id": "$response.body#/id"},
    }
}
FIRST_MEMORY = memory_links("/memories/0/id", "getMemory", "updateMemory", "deleteMemory")
FIRST_HIT = memory_links("/hits/0/id", "getMemory", "relatedMemories")
BY_PROJECT = {
    "listMemories": "project",
    "timeline": "project",
    "preferences": "project",
    "listSessions": "project",
}
MEMORY = "/api/memories/{memory_id}"

OPERATIONS: tuple[Operation, ...] = (
    Operation(
        "GET",
        "/health",
        "health",
        "Liveness, database state, model and version",
        (
            Reply(200, system.Health, "healthy"),
            Reply(503, system.Health, "the database does not answer"),
        ),
    ),
    Operation(
        "POST",
        "/cache/invalidate",
        "invalidateCache",
        "Drop the read cache (batch jobs call this after writing)",
        (Reply(200, system.Done),),
    ),
    Operation(
        "GET",
        "/api/openapi.json",
        "openapi",
        "This document",
        (Reply(200, system.OpenApiDocument),),
    ),
    Operation(
        "GET", "/api/stats", "stats", "Counts, storage sizes, sessions", (Reply(200, Stats),)
    ),
    Operation(
        "GET",
        "/api/agents",
        "agents",
        "The coding agents claude-memory knows: name (a memory's source) and label",
        (Reply(200, list[system.AgentInfo]),),
    ),
    Operation(
        "GET",
        "/api/projects",
        "projects",
        "Projects with live memories",
        (
            Reply(
                200,
                list[ProjectSummary],
                links=query_links("$response.body#/0/project", BY_PROJECT),
            ),
        ),
    ),
    Operation(
        "GET",
        "/api/tags",
        "tags",
        "Tags with counts",
        (
            Reply(
                200,
                list[TagCount],
                links=query_links("$response.body#/0/tag", {"listMemories": "tag"}),
            ),
        ),
    ),
    Operation(
        "GET",
        "/api/memories",
        "listMemories",
        "List memories, newest first",
        (Reply(200, MemoryPage, links=FIRST_MEMORY),),
        query=memories.ListMemories,
    ),
    Operation(
        "POST",
        "/api/memories",
        "createMemory",
        "Create a memory (through the write guard)",
        (
            Reply(
                201,
                memories.SavedMemory,
                "saved",
                memory_links(
                    "/id",
                    "getMemory",
                    "updateMemory",
                    "deleteMemory",
                    "relatedMemories",
                    "lockMemory",
                ),
            ),
            Reply(
                200,
                memories.NotSaved,
                "not saved: already there or too close",
                memory_links("/id", "getMemory", "updateMemory", "deleteMemory", "restoreMemory"),
            ),
        ),
        body=memories.CreateMemory,
    ),
    Operation(
        "DELETE",
        "/api/memories",
        "bulkDeleteMemories",
        "Soft-delete every memory matching project, tag and/or source",
        (Reply(200, BulkDeleteResult),),
        query=memories.BulkDeleteEverything,
    ),
    Operation(
        "POST",
        "/api/trajectories",
        "learnTrajectory",
        "Learn a trajectory: a task, what worked, what to avoid (a memory of kind trajectory)",
        (
            Reply(201, SaveOutcome, "saved", memory_links("/id", "getMemory", "updateMemory")),
            Reply(200, SaveOutcome, "not saved: already there or too close"),
        ),
        body=memories.LearnTrajectory,
    ),
    Operation(
        "POST",
        "/api/memories/bulk",
        "createMemories",
        "Create up to 1,000 memories in one transaction",
        (
            Reply(
                200,
                BulkSaveResult,
                "per-item outcomes",
                memory_links("/items/0/id", "getMemory", "updateMemory", "deleteMemory"),
            ),
        ),
        body=memories.BulkCreate,
    ),
    Operation(
        "GET",
        MEMORY,
        "getMemory",
        "One memory",
        (
            Reply(
                200,
                Memory,
                links=memory_links(
                    "/id",
                    "updateMemory",
                    "deleteMemory",
                    "restoreMemory",
                    "relatedMemories",
                    "lockMemory",
                ),
            ),
        ),
    ),
    Operation(
        "PATCH",
        MEMORY,
        "updateMemory",
        "Change content, tags, project or kind",
        (
            Reply(
                200,
                UpdateOutcome,
                links=memory_links("/memory/id", "getMemory", "deleteMemory", "lockMemory"),
            ),
        ),
        body=memories.UpdateMemory,
    ),
    Operation(
        "DELETE",
        MEMORY,
        "deleteMemory",
        "Soft delete; with purge=true, erase a soft-deleted memory",
        (
            Reply(
                200,
                Memory | memories.Purged,
                "the soft-deleted memory, or the id of the purged one",
                memory_links("/id", "restoreMemory", "purgeMemory", "getMemory"),
            ),
        ),
        query=memories.DeleteQuery,
    ),
    Operation(
        "POST",
        f"{MEMORY}/restore",
        "restoreMemory",
        "Undo a soft delete",
        (
            Reply(
                200,
                Memory,
                links=memory_links("/id", "getMemory", "updateMemory", "deleteMemory"),
            ),
        ),
    ),
    Operation(
        "GET",
        f"{MEMORY}/related",
        "relatedMemories",
        "Nearest neighbours of a memory",
        (Reply(200, list[RelatedMemory], links=memory_links("/0/id", "getMemory")),),
        query=memories.RelatedQuery,
    ),
    Operation(
        "GET",
        f"{MEMORY}/check",
        "checkMemory",
        "A memory checked against the code: what it names and whether the code still agrees"
        " (single-user server; the folder defaults to the memory's project path)",
        (Reply(200, CodeCheck, links=memory_links("/memory_id", "getMemory", "updateMemory")),),
        query=memories.CodeCheckQuery,
    ),
    Operation(
        "GET",
        "/api/drifted",
        "driftedMemories",
        "A project's memories checked against its folder: those the code no longer agrees"
        " with, newest first, with what changed (single-user server)",
        (Reply(200, DriftedList),),
        query=memories.DriftedQuery,
    ),
    Operation(
        "GET",
        "/api/promote",
        "promoteProposal",
        "The changes proposed to the project's instruction files (CLAUDE.md, AGENTS.md,"
        " GEMINI.md, .github/copilot-instructions.md): memories used and still true become"
        " lines, lines whose memory stopped being true leave (single-user server)",
        (Reply(200, Proposal),),
        query=promote.PromoteQuery,
    ),
    Operation(
        "POST",
        "/api/promote",
        "promoteWrite",
        "Write the accepted changes to the instruction files (a backup beside each first) and"
        " record the rejected ones as declined; nothing is committed to git",
        (Reply(200, PromotionResult),),
        body=promote.PromoteRequest,
    ),
    Operation(
        "GET",
        f"{MEMORY}/versions",
        "memoryVersions",
        "The chain of versions of a memory's fact, oldest first",
        (Reply(200, list[MemoryVersion], links=memory_links("/0/id", "getMemory")),),
    ),
    Operation(
        "POST",
        "/api/recall",
        "recall",
        "Semantic search with a threshold (kept for compatibility)",
        (Reply(200, search.SearchResponse, links=FIRST_HIT),),
        body=search.RecallRequest,
    ),
    Operation(
        "POST",
        "/api/search",
        "search",
        "Semantic, keyword or hybrid search, with every score",
        (Reply(200, search.SearchResponse, links=FIRST_HIT),),
        body=search.SearchRequest,
    ),
    Operation(
        "GET",
        "/api/export",
        "export",
        "Download matching memories (streamed)",
        (
            Reply(
                200,
                list[Memory],
                "a download",
                media_types=("application/json", "application/x-ndjson", "text/markdown"),
            ),
        ),
        query=memories.ExportQuery,
    ),
    Operation(
        "GET",
        "/api/timeline",
        "timeline",
        "Newest memories as points, and per-day counts per project",
        (Reply(200, Timeline, links=memory_links("/points/0/id", "getMemory")),),
        query=sessions.TimelineQuery,
    ),
    Operation(
        "GET",
        "/api/preferences",
        "preferences",
        "Learned preferences: explicit, signals, inferred",
        (Reply(200, PreferenceTiers),),
        query=learning.PreferencesQuery,
    ),
    Operation(
        "POST",
        f"{MEMORY}/lock",
        "lockMemory",
        "Lock a learned preference (explicit tier), or unlock it with locked=false",
        (
            Reply(
                200,
                Memory,
                links=memory_links("/id", "getMemory", "updateMemory", "deleteMemory"),
            ),
        ),
        body=memories.LockRequest,
    ),
    Operation(
        "POST",
        "/api/sessions/reset-failures",
        "resetDistillFailures",
        "Make failed sessions (all, or one by id or prefix) pending for distill again",
        (Reply(200, learning.ResetCount),),
        body=learning.ResetFailures,
    ),
    Operation(
        "GET",
        "/api/sessions",
        "listSessions",
        "Imported sessions with import and learning state",
        (
            Reply(
                200,
                SessionPage,
                links={
                    "resetDistillFailures": {
                        "operationId": "resetDistillFailures",
                        "requestBody": {"session": "$response.body#/sessions/0/session_id"},
                    },
                    **query_links(
                        "$response.body#/sessions/0/session_id", {"listMemories": "session_id"}
                    ),
                },
            ),
        ),
        query=sessions.SessionsQuery,
    ),
    Operation(
        "GET",
        "/api/journal",
        "journal",
        "The tool-call journal: prompts and the calls that followed them, newest first",
        (
            Reply(
                200,
                JournalPage,
                links=query_links(
                    "$response.body#/entries/0/session_id", {"listMemories": "session_id"}
                ),
            ),
        ),
        query=sessions.JournalQuery,
    ),
    Operation(
        "GET",
        "/api/receipts",
        "receipts",
        "Receipts of what the hooks injected (memories, characters, estimated tokens), newest "
        "first, with totals; a user's own only",
        (Reply(200, ReceiptPage),),
        query=sessions.ReceiptsQuery,
    ),
    Operation(
        "GET",
        "/api/context",
        "context",
        "What the hooks injected per day and project (injections, estimated tokens, share "
        "used), the memories injected most, never used, used most and contradicted; a user's "
        "own only",
        (Reply(200, ContextReport),),
        query=sessions.ContextQuery,
    ),
    Operation(
        "GET",
        "/api/lessons",
        "listLessons",
        "Lessons: reminders before matching tool calls, newest first",
        (
            Reply(
                200,
                learning.LessonList,
                links={
                    "updateLesson": {
                        "operationId": "updateLesson",
                        "parameters": {"path.lesson_id": "$response.body#/lessons/0/id"},
                    }
                },
            ),
        ),
        query=learning.LessonsQuery,
    ),
    Operation(
        "POST",
        "/api/lessons",
        "createLesson",
        "Add a lesson: a tool, a pattern on its input, a project, a message, warn or ask",
        (Reply(201, Lesson, "added", LESSON_LINKS),),
        body=learning.NewLesson,
    ),
    Operation(
        "PATCH",
        "/api/lessons/{lesson_id}",
        "updateLesson",
        "Edit a lesson, or disable it (active=false) or enable it again",
        (Reply(200, Lesson, links=LESSON_LINKS),),
        body=learning.LessonEdit,
    ),
    Operation(
        "POST",
        "/api/hooks/pre-tool",
        "hookPreToolUse",
        "PreToolUse hook (Gemini: BeforeTool, AfterTool): the active lessons that apply to a call",
        (Reply(200, hooks.LessonsBeforeCall, "nothing to say when no lesson applies"),),
        body=hooks.PreToolHook,
    ),
    Operation(
        "POST",
        "/api/hooks/session-start",
        "hookSessionStart",
        "SessionStart hook: the startup context of the session's project",
        (
            Reply(
                200,
                hooks.SessionStartContext,
                "context for the session; project is null outside known projects",
                query_links("$response.body#/project", {"listMemories": "project"}),
            ),
        ),
        body=hooks.SessionStartHook,
    ),
    Operation(
        "POST",
        "/api/hooks/prompt",
        "hookPrompt",
        "UserPromptSubmit hook (Gemini: BeforeAgent): memories relevant to the prompt, each once",
        (Reply(200, hooks.PromptContext),),
        body=hooks.PromptHook,
    ),
    Operation(
        "POST",
        "/api/hooks/tool",
        "hookToolCall",
        "PostToolUse / PostToolUseFailure hook: one call into the journal",
        (Reply(202, hooks.CallRecorded, "stored, or ignored without a tool_use_id"),),
        body=hooks.ToolHook,
    ),
    Operation(
        "POST",
        "/api/hooks/session-end",
        "hookSessionEnd",
        "Stop / SessionEnd hook (Gemini: AfterAgent): import the session file in the background",
        (
            Reply(202, hooks.ImportStarted, "accepted; the import runs after the answer"),
            Reply(
                400,
                system.Error,
                "transcript_path is not an existing session file of `agent` under its session "
                "folder: Claude Code's <config dir>/projects/<project>/<session>.jsonl, Codex's "
                "sessions/YYYY/MM/DD/rollout-*.jsonl, Gemini CLI's tmp/<project>/chats/"
                "session-*.jsonl (one message whatever the reason)",
            ),
        ),
        body=hooks.SessionEndHook,
    ),
)
