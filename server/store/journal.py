"""SQL for the tool-call journal: `journal_prompts` and the calls in `session_events`.

Imports and hooks both write here, in either order: a prompt is upserted on (session_id,
prompt_key) and a call on tool_use_id, each per owner, and every column keeps the first value
anyone knew (`coalesce`), so the second writer only fills what the first did not know.

Rows are keyed per owner (migration 017): a hook sent with someone else's ids makes a row of
its sender's and never touches theirs. A write acts for the user of its transaction, or for
nobody (a batch import without --user, single-user mode): ownerless rows. Sessions are keyed
per owner too (migration 025), so no import, for a user or for nobody, writes into the journal
of a session because its file carries that session's id.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from datetime import datetime

from psycopg.rows import class_row

from server.core.models.journal import (
    JournalCall,
    JournalEntry,
    JournalPrompt,
    SessionEvent,
    ToolOutcome,
)
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


# Whom a write acts for: the transaction's user (NULL: nobody).
_WRITER = "current_viewer()"


async def insert_calls(conn: Conn, events: Sequence[SessionEvent]) -> None:
    """Store tool calls; a call the same owner stored already (same tool_use_id) gains what it
    lacked. Another owner's row with that id is left alone: this one gets its own."""
    if not events:
        return
    async with conn.cursor() as cur:
        await cur.executemany(
            "INSERT INTO session_events (session_id, agent_id, record_uuid, tool_use_id, tool,"
            " target, success, at, project, prompt_key, output_preview, error, owner_id)"
            " VALUES (%(session_id)s, %(agent_id)s, %(record_uuid)s, %(tool_use_id)s, %(tool)s,"
            " %(target)s, %(success)s, %(at)s, %(project)s, %(prompt_key)s, %(output_preview)s,"
            f" %(error)s, {_WRITER})"
            " ON CONFLICT (tool_use_id, coalesce(owner_id, 0))"
            f" DO UPDATE SET {_KEEP_FIRST},"
            " project = CASE WHEN session_events.project = '' THEN EXCLUDED.project"
            " ELSE session_events.project END",
            [dataclasses.asdict(event) for event in events],
        )


async def record_results(conn: Conn, results: Mapping[str, ToolOutcome]) -> None:
    """Outcomes of calls stored by an earlier run, now that their results were read.

    Only the rows of whom the transaction acts for change: the user's own; with no user, the
    ownerless ones (as `insert_calls` stamped them).
    """
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
        " WHERE session_events.tool_use_id = r.tool_use_id"
        " AND coalesce(session_events.owner_id, 0) = coalesce(current_viewer(), 0)",
        {
            "ids": list(results),
            "outcomes": [outcome.success for outcome in results.values()],
            "previews": [outcome.output_preview for outcome in results.values()],
            "errors": [outcome.error for outcome in results.values()],
            "prompts": [outcome.prompt_key for outcome in results.values()],
        },
    )


async def insert_prompts(conn: Conn, prompts: Sequence[JournalPrompt]) -> None:
    """Store human prompts; one the same owner stored already keeps its text and gains a time
    or project. Another owner's prompt with the same key is left alone."""
    if not prompts:
        return
    async with conn.cursor() as cur:
        await cur.executemany(
            "INSERT INTO journal_prompts (session_id, prompt_key, text, at, project, owner_id)"
            " VALUES (%(session_id)s, %(prompt_key)s, %(text)s, %(at)s, %(project)s,"
            f" {_WRITER})"
            " ON CONFLICT (session_id, prompt_key, coalesce(owner_id, 0)) DO UPDATE SET"
            " at = coalesce(journal_prompts.at, EXCLUDED.at),"
            " project = CASE WHEN journal_prompts.project = '' THEN EXCLUDED.project"
            " ELSE journal_prompts.project END",
            [dataclasses.asdict(prompt) for prompt in prompts],
        )


@dataclasses.dataclass(frozen=True, slots=True)
class CallRow(JournalCall):
    """A call as read, with its session and the prompt it followed."""

    session_id: str
    project: str
    prompt_key: str | None
    prompt: str | None
    prompt_at: datetime | None

    def call(self) -> JournalCall:
        """The call as the journal shows it."""
        return JournalCall(**{f.name: getattr(self, f.name) for f in _CALL_FIELDS})


_CALL_FIELDS = dataclasses.fields(JournalCall)


@dataclasses.dataclass(frozen=True, slots=True)
class PromptRow:
    session_id: str
    project: str
    prompt_key: str
    text: str
    at: datetime | None

    def entry(self) -> JournalEntry:
        """The prompt as a journal entry, its calls yet to be filed in."""
        return JournalEntry(self.session_id, self.project, self.prompt_key, self.text, self.at, [])


# Filters shared by both reads; %(text)s is a LIKE pattern matched against prompts and inputs.
# A user sees the calls and prompts their own hooks and imports recorded, and nobody's (the
# CLI, before users) unless someone else owns a session of that id (server/store/sessions.py):
# another user's import of a file with the session's id hides none of the user's own rows.
_SCOPE = (
    "(current_viewer() IS NULL OR {table}.owner_id = current_viewer()"
    " OR ({table}.owner_id IS NULL AND NOT EXISTS (SELECT 1 FROM imported_sessions AS other"
    "   WHERE other.session_id = {table}.session_id AND other.owner_id <> current_viewer())))"
    " AND (%(project)s::text IS NULL OR {table}.project = %(project)s)"
    " AND (%(session)s::text IS NULL OR starts_with({table}.session_id, %(session)s))"
    " AND (%(since)s::timestamptz IS NULL OR {table}.at >= %(since)s)"
    " AND (%(before)s::timestamptz IS NULL OR {table}.at < %(before)s)"
)


# The prompt a call followed: one of the same owner (an ownerless row, from before users or
# single-user mode, goes with anyone's), that the reader may see; the call's own owner's first.
_PROMPT_OF_CALL = (
    "SELECT jp.text, jp.at FROM journal_prompts AS jp"
    " WHERE jp.session_id = e.session_id AND jp.prompt_key = e.prompt_key"
    " AND (jp.owner_id IS NULL OR e.owner_id IS NULL OR jp.owner_id = e.owner_id)"
    " AND (current_viewer() IS NULL OR coalesce(jp.owner_id, current_viewer()) = current_viewer())"
    " ORDER BY jp.owner_id IS NOT DISTINCT FROM e.owner_id DESC, jp.id LIMIT 1"
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
            f" FROM session_events e LEFT JOIN LATERAL ({_PROMPT_OF_CALL}) AS p ON true"
            f" WHERE {_SCOPE.format(table='e')}"
            " AND (%(tool)s::text IS NULL OR lower(e.tool) = lower(%(tool)s))"
            " AND (NOT %(failed)s OR e.success IS FALSE)"
            " AND (%(text)s::text IS NULL OR p.text ILIKE %(text)s ESCAPE '\\'"
            " OR e.target ILIKE %(text)s ESCAPE '\\')"
            " ORDER BY e.at DESC NULLS LAST, e.id DESC LIMIT %(limit)s",
            {**params, "limit": limit},
        )
        return await cur.fetchall()


async def project_names(conn: Conn) -> list[str]:
    """The projects of the prompts and calls the reader may see (a project's hooks may have
    recorded work before any memory of it was stored)."""
    params = {"project": None, "session": None, "since": None, "before": None}
    cur = await conn.execute(
        f"SELECT project FROM journal_prompts WHERE project <> ''"
        f" AND {_SCOPE.format(table='journal_prompts')}"
        f" UNION SELECT project FROM session_events WHERE project <> ''"
        f" AND {_SCOPE.format(table='session_events')} ORDER BY project",
        params,
    )
    return [str(row[0]) for row in await cur.fetchall()]


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


def journal_owners(sessions: str) -> str:
    """A `WITH o (session_id, owner_id)` clause: whose each session of the `sessions` query
    (one column, session_id) is, for the readers of whole sessions. The owner its import
    recorded (several users' imports of one id: nobody's first, then the lowest user id), or
    before any import the owner of its first owned prompt or call (hooks record as they go, so
    that is the session's user: a teammate cannot know its id before it starts). NULL:
    nobody's, and only ownerless rows are read. A teammate's rows with the same session id are
    never read into the session."""
    return (
        "WITH o AS (SELECT s.session_id, (SELECT k.owner_id FROM ("
        " SELECT i.owner_id, 0 AS rank, NULL::timestamptz AS at FROM imported_sessions AS i"
        "   WHERE i.session_id = s.session_id"
        " UNION ALL SELECT f.owner_id, 1, f.at FROM journal_prompts AS f"
        "   WHERE f.session_id = s.session_id AND f.owner_id IS NOT NULL"
        " UNION ALL SELECT c.owner_id, 1, c.at FROM session_events AS c"
        "   WHERE c.session_id = s.session_id AND c.owner_id IS NOT NULL"
        " ) AS k ORDER BY k.rank, k.at NULLS LAST, k.owner_id NULLS FIRST LIMIT 1) AS owner_id"
        f" FROM ({sessions}) AS s)"
    )


_JOURNAL_OWNERS = journal_owners("SELECT DISTINCT unnest(%(ids)s::text[]) AS session_id")


async def sessions_prompts(conn: Conn, session_ids: Sequence[str]) -> list[PromptRow]:
    """Every prompt of these sessions, each session's in order (by time, then as stored).

    A session's prompts are its owner's (`_JOURNAL_OWNERS`; with a user asking, theirs) and
    the ownerless ones."""
    async with conn.cursor(row_factory=class_row(PromptRow)) as cur:
        await cur.execute(
            f"{_JOURNAL_OWNERS} SELECT jp.session_id, jp.project, jp.prompt_key, jp.text, jp.at"
            " FROM journal_prompts AS jp JOIN o ON o.session_id = jp.session_id"
            " WHERE jp.owner_id IS NULL OR jp.owner_id = coalesce(current_viewer(), o.owner_id)"
            " ORDER BY jp.session_id, jp.at NULLS LAST, jp.id",
            {"ids": list(session_ids)},
        )
        return await cur.fetchall()


async def sessions_calls(conn: Conn, session_ids: Sequence[str]) -> list[CallRow]:
    """Every call of these sessions, each session's in order; `prompt` and `prompt_at` unset.

    Whose calls, as in `sessions_prompts`."""
    async with conn.cursor(row_factory=class_row(CallRow)) as cur:
        await cur.execute(
            f"{_JOURNAL_OWNERS} SELECT e.session_id, e.project, e.tool_use_id, e.tool, e.target,"
            " e.success, e.error, e.output_preview, e.at, e.agent_id, e.prompt_key,"
            " NULL::text AS prompt, NULL::timestamptz AS prompt_at"
            " FROM session_events AS e JOIN o ON o.session_id = e.session_id"
            " WHERE e.owner_id IS NULL OR e.owner_id = coalesce(current_viewer(), o.owner_id)"
            " ORDER BY e.session_id, e.at NULLS LAST, e.id",
            {"ids": list(session_ids)},
        )
        return await cur.fetchall()
