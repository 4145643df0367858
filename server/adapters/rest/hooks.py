"""REST routes every agent's hook client (server/hooks.py and the agents' own plugins) calls:
thin adapters over recall/hook.py and ingest/session_imports.py.

    POST /api/hooks/session-start {session_id, cwd, source} -> {additionalContext, project, check,
        claimed_folder}
    POST /api/hooks/prompt {session_id, cwd, prompt, prompt_id} -> {additionalContext, memory_ids,
        check}
    POST /api/hooks/pre-tool {PreToolUse input} -> {additionalContext, permissionDecision, ...}
    POST /api/hooks/tool {PostToolUse or PostToolUseFailure input} -> 202 {recorded}
    POST /api/hooks/session-end {session_id, cwd, transcript_path, agent} -> 202 {status}

`additionalContext` is "" when there is nothing to add. `claimed_folder` is null unless this
session's folder was just taken to be a project's (a project named before its folder was known,
server/service/projects.py `claim_folder`): then the context starts with a line saying so.
`check` is [] unless the server could not check the memories shown against the session's
folder (a team's server, or a folder not on its machine): their ids, dates and anchors, for
the hook process to check (server/worktree/context_check.py). The session-end route answers at
once and imports the session file in the background, with the reader of `agent` (Claude Code's
by default); on a team's server it opens no path and answers "not_read", and for a Copilot
session file not written yet it answers "not_yet" (session_imports.py).
These routes sit behind the same Host/Origin guard and optional bearer token as every other
route; their shapes are in schemas/hooks.py.
"""

from __future__ import annotations

from starlette.responses import JSONResponse
from starlette.routing import BaseRoute

from server.adapters.http_edge import Handler, serve
from server.adapters.route_table import OPERATIONS
from server.agents.registry import SESSION_FORMATS
from server.core.models.output import to_json
from server.ingest.session_imports import NOT_YET, TEAM_NOT_READ, SessionImports
from server.recall.hook import HookRecall
from server.schemas import hooks


def routes(recall: HookRecall, sessions: SessionImports) -> list[BaseRoute]:
    """The /api/hooks routes over `recall` and `sessions` (the app owns and closes both)."""

    async def session_start(body: hooks.SessionStartHook) -> JSONResponse:
        # A folder first seen here that names a project with no folder is that project's:
        # claimed before the context is read, so the context is that project's, and said once.
        claimed = await recall.service.claim_folder(body.cwd)
        start = await recall.session_start(body.session_id, body.cwd, body.source)
        context = start.context
        markdown = context.markdown
        if claimed is not None:
            markdown = f"{claimed.note}\n\n{markdown}" if markdown else claimed.note
        return JSONResponse(
            {
                "additionalContext": markdown,
                "project": context.project,
                "check": start.check,
                "claimed_folder": to_json(claimed),
            }
        )

    async def prompt(body: hooks.PromptHook) -> JSONResponse:
        # One read and one write of the service: the prompt is journaled with its receipt.
        recalled = await recall.prompt(body.session_id, body.cwd, body.prompt, body.prompt_id)
        answer = {
            "additionalContext": recalled.markdown,
            "memory_ids": recalled.memory_ids,
            "check": recalled.check,
        }
        return JSONResponse(answer)

    async def pre_tool(body: hooks.PreToolHook) -> JSONResponse:
        found = await recall.lessons_before(
            body.session_id, body.cwd, body.tool_name, body.tool_input
        )
        return JSONResponse(
            {
                "additionalContext": found.text,
                "permissionDecision": "ask" if found.reason else None,
                "permissionDecisionReason": found.reason or None,
                "lesson_ids": [lesson.id for lesson in found.lessons],
            }
        )

    async def tool_call(body: hooks.ToolHook) -> JSONResponse:
        recorded = await recall.record_call(body.model_dump())
        return JSONResponse({"recorded": recorded}, status_code=202)

    async def session_end(body: hooks.SessionEndHook) -> JSONResponse:
        reader = SESSION_FORMATS[body.agent]
        status = sessions.request(reader, body.transcript_path, body.session_id)
        message = {"not_read": TEAM_NOT_READ, "not_yet": NOT_YET}.get(status, "")
        answer = {"status": status, "message": message}
        return JSONResponse(answer, status_code=202)

    handlers: dict[str, Handler] = {
        "hookSessionStart": session_start,
        "hookPrompt": prompt,
        "hookToolCall": tool_call,
        "hookPreToolUse": pre_tool,
        "hookSessionEnd": session_end,
    }
    return [
        serve(op, handlers[op.operation_id]) for op in OPERATIONS if op.operation_id in handlers
    ]
