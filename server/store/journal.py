"""SQL for the tool-call journal: `journal_prompts` and the calls in `session_events`.

Imports and hooks both write here, in either order: a prompt is upserted on (session_id,
prompt_key) and a call on tool_use_id, and every column keeps the first value anyone knew
(`coalesce`), so the second writer only fills what the first did not know.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from datetime import datetime

from psycopg.rows import class_row

from server.core.models import JournalPrompt, SessionEvent, ToolOutcome
from server.store.tx import Conn

_KEEP_FIRST = ", ".join(
    f"{column} = coalesce(session_events.{column}, EXCLUDED.{column})"
    for column in (
        "agent_id",
        "record_uuid",
        "target",
        "success",
        "at",
        "prompt_key",
        "output_preview",
        "error",
    )
)


async def insert_calls(conn: Conn, events: Sequence[SessionEvent]) -> None:
    """Store tool calls; a call already stored (same tool_use_id) gains what it lacked."""
    if not events:
        return
    async with conn.cursor() as cur:
        await cur.executemany(
            "INSERT INTO session_events (session_id, agent_id, record_uuid, tool_use_id, tool,"
            " target, success, at, project, prompt_key, output_preview, error)"
            " VALUES (%(session_id)s, %(agent_id)s, %(record_uuid)s, %(tool_use_id)s, %(tool)s,"
            " %(target)s, %(success)s, %(at)s, %(project)s, %(prompt_key)s, %(output_preview)s,"
            " %(error)s)"
            f" ON CONFLICT (tool_use_id) DO UPDATE SET {_KEEP_FIRST},"
            " project = CASE WHEN session_events.project = '' THEN EXCLUDED.project"
            " ELSE session_events.project END",
            [dataclasses.asdict(event) for event in events],
        )


async def record_results(conn: Conn, results: Mapping[str, ToolOutcome]) -> None:
    """Outcomes of calls stored by an earlier run, now that their results were read."""
    if not results:
        return
    await conn.execute(
        "UPDATE session_events SET success = r.success,"
        " output_preview = coalesce(session_events.output_preview, r.output_preview),"
        " error = coalesce(session_events.error, r.error),"
        " prompt_key = coalesce(session_events.prompt_key, r.prompt_key)"
        " FROM unnest(%(ids)s::text[], %(outcomes)s::boolean[], %(previews)s::text[],"
        " %(errors)s::text[], %(prompts)s::text[])"
        " AS r (tool_use_id, success, output_preview, error, prompt_key)"
        " WHERE session_events.tool_use_id = r.tool_use_id",
        {
            "ids": list(results),
            "outcomes": [outcome.success for outcome in results.values()],
            "previews": [outcome.output_preview for outcome in results.values()],
            "errors": [outcome.error for outcome in results.values()],
            "prompts": [outcome.prompt_key for outcome in results.values()],
        },
    )


async def insert_prompts(conn: Conn, prompts: Sequence[JournalPrompt]) -> None:
    """Store human prompts; one already stored keeps its text and gains a time or project."""
    if not prompts:
        return
    async with conn.cursor() as cur:
        await cur.executemany(
            "INSERT INTO journal_prompts (session_id, prompt_key, text, at, project)"
            " VALUES (%(session_id)s, %(prompt_key)s, %(text)s, %(at)s, %(project)s)"
            " ON CONFLICT (session_id, prompt_key) DO UPDATE SET"
            " at = coalesce(journal_prompts.at, EXCLUDED.at),"
            " project = CASE WHEN journal_prompts.project = '' THEN EXCLUDED.project"
            " ELSE journal_prompts.project END",
            [dataclasses.asdict(prompt) for prompt in prompts],
        )


@dataclasses.dataclass(frozen=True, slots=True)
class CallRow:
    session_id: str
    project: str
    tool_use_id: str
    tool: str
    target: str | None
    success: bool | None
    error: str | None
    output_preview: str | None
    at: datetime | None
    agent_id: str | None
    prompt_key: str | None
    prompt: str | None
    prompt_at: datetime | None


@dataclasses.dataclass(frozen=True, slots=True)
class PromptRow:
    session_id: str
    project: str
    prompt_key: str
    text: str
    at: datetime | None


# Filters shared by both reads; %(text)s is a LIKE pattern matched against prompts and inputs.
# A user sees the calls and prompts their own hooks recorded (or nobody's: the CLI, before
# users), and none of a session someone else owns (server/store/sessions.py).
_SCOPE = (
    "(current_viewer() IS NULL OR (coalesce({table}.owner_id, current_viewer()) = current_viewer()"
    " AND NOT EXISTS (SELECT 1 FROM imported_sessions AS other"
    "   WHERE other.session_id = {table}.session_id AND other.owner_id <> current_viewer())))"
    " AND (%(project)s::text IS NULL OR {table}.project = %(project)s)"
    " AND (%(session)s::text IS NULL OR starts_with({table}.session_id, %(session)s))"
    " AND (%(since)s::timestamptz IS NULL OR {table}.at >= %(since)s)"
    " AND (%(before)s::timestamptz IS NULL OR {table}.at < %(before)s)"
)


async def calls(
    conn: Conn,
    params: Mapping[str, object],
    limit: int,
) -> list[CallRow]:
    """The newest calls in scope, each with the prompt it followed (newest first).

    `params`: project, session (an id or its prefix), since, before, tool, failed (bool) and
    text (a LIKE pattern on the prompt or the call's input summary, or None).
    """
    async with conn.cursor(row_factory=class_row(CallRow)) as cur:
        await cur.execute(
            "SELECT e.session_id, e.project, e.tool_use_id, e.tool, e.target, e.success,"
            " e.error, e.output_preview, e.at, e.agent_id, e.prompt_key, p.text AS prompt,"
            " p.at AS prompt_at"
            " FROM session_events e LEFT JOIN journal_prompts p"
            " ON p.session_id = e.session_id AND p.prompt_key = e.prompt_key"
            f" WHERE {_SCOPE.format(table='e')}"
            " AND (%(tool)s::text IS NULL OR lower(e.tool) = lower(%(tool)s))"
            " AND (NOT %(failed)s OR e.success IS FALSE)"
            " AND (%(text)s::text IS NULL OR p.text ILIKE %(text)s ESCAPE '\\'"
            " OR e.target ILIKE %(text)s ESCAPE '\\')"
            " ORDER BY e.at DESC NULLS LAST, e.id DESC LIMIT %(limit)s",
            {**params, "limit": limit},
        )
        return await cur.fetchall()


async def prompts(conn: Conn, params: Mapping[str, object], limit: int) -> list[PromptRow]:
    """The newest prompts in scope (newest first), whether or not any call followed them."""
    async with conn.cursor(row_factory=class_row(PromptRow)) as cur:
        await cur.execute(
            "SELECT session_id, project, prompt_key, text, at FROM journal_prompts"
            f" WHERE {_SCOPE.format(table='journal_prompts')}"
            " AND (%(text)s::text IS NULL OR text ILIKE %(text)s ESCAPE '\\')"
            " ORDER BY at DESC NULLS LAST, id DESC LIMIT %(limit)s",
            {**params, "limit": limit},
        )
        return await cur.fetchall()


async def sessions_prompts(conn: Conn, session_ids: Sequence[str]) -> list[PromptRow]:
    """Every prompt of these sessions, each session's in order (by time, then as stored)."""
    async with conn.cursor(row_factory=class_row(PromptRow)) as cur:
        await cur.execute(
            "SELECT session_id, project, prompt_key, text, at FROM journal_prompts"
            " WHERE session_id = ANY(%(ids)s) ORDER BY session_id, at NULLS LAST, id",
            {"ids": list(session_ids)},
        )
        return await cur.fetchall()


async def sessions_calls(conn: Conn, session_ids: Sequence[str]) -> list[CallRow]:
    """Every call of these sessions, each session's in order; `prompt` and `prompt_at` unset."""
    async with conn.cursor(row_factory=class_row(CallRow)) as cur:
        await cur.execute(
            "SELECT session_id, project, tool_use_id, tool, target, success, error,"
            " output_preview, at, agent_id, prompt_key, NULL::text AS prompt,"
            " NULL::timestamptz AS prompt_at FROM session_events"
            " WHERE session_id = ANY(%(ids)s) ORDER BY session_id, at NULLS LAST, id",
            {"ids": list(session_ids)},
        )
        return await cur.fetchall()
