"""The tool-call journal: what the agent did, prompt by prompt; a mixin of MemoryService.

Imports write it with the rest of a transcript file (server/service/bulk_writes.py); the hooks
write it live through `record_calls` and `record_prompts`. Every text is redacted and cut to a
bounded size here, before it is stored, whichever way it came in.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import replace
from itertools import groupby

from server.core.models.journal import (
    ERROR_CHARS,
    OUTPUT_PREVIEW_CHARS,
    PROMPT_CHARS,
    JournalCall,
    JournalEntry,
    JournalFilter,
    JournalPage,
    JournalPrompt,
    SessionEvent,
)
from server.core.redact import redact
from server.core.validation import MAX_PAGE, blank_to_none, check_limit, clean_text
from server.service.projects import ProjectRule
from server.store import journal as journal_store
from server.store.tx import Pool, transaction

TARGET_CHARS = 500  # a call's input summary: command, path, pattern
NAME_CHARS = 500  # ids and names: a session id, a tool name
REDACT_MARGIN = 512  # longer than any secret the redaction rules recognise


def bounded(text: str | None, limit: int) -> str | None:
    """`text` made storable, redacted and cut to `limit` characters; None stays None."""
    if text is None:
        return None
    # Redact a window a little longer than what is kept: a secret that starts inside the kept
    # part lies whole inside the window, and a long text costs no more than a short one.
    cleaned = redact(clean_text(text[: limit + REDACT_MARGIN])).text
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 1] + "…"


def redacted_call(event: SessionEvent) -> SessionEvent:
    """A call with secrets replaced and sizes bounded in everything it says.

    Ids and names are only made storable (a hook may send anything): they are not free text.
    """
    return replace(
        event,
        session_id=_name(event.session_id) or "",
        agent_id=_name(event.agent_id),
        record_uuid=_name(event.record_uuid),
        tool_use_id=_name(event.tool_use_id) or "",
        tool=_name(event.tool) or "unknown",
        project=_name(event.project) or "",
        prompt_key=_name(event.prompt_key),
        target=bounded(event.target, TARGET_CHARS),
        output_preview=bounded(event.output_preview, OUTPUT_PREVIEW_CHARS),
        error=bounded(event.error, ERROR_CHARS),
    )


def redacted_prompt(prompt: JournalPrompt) -> JournalPrompt:
    return replace(
        prompt,
        session_id=_name(prompt.session_id) or "",
        prompt_key=_name(prompt.prompt_key) or "",
        project=_name(prompt.project) or "",
        text=bounded(prompt.text, PROMPT_CHARS) or "",
    )


def _name(value: str | None) -> str | None:
    """An id or name Postgres can store, at most NAME_CHARS long; None stays None."""
    return None if value is None else clean_text(value)[:NAME_CHARS]


class ToolJournal(ProjectRule):
    """`journal`, `record_calls` and `record_prompts`, for MemoryService."""

    pool: Pool

    async def record_calls(self, calls: Sequence[SessionEvent]) -> None:
        """Store calls a hook reported; an import of the same session later completes them."""
        async with transaction(self.pool) as conn:
            await journal_store.insert_calls(conn, [redacted_call(call) for call in calls])

    async def record_prompts(self, prompts: Sequence[JournalPrompt]) -> None:
        """Store prompts a hook reported (keyed like the transcript's, so never twice)."""
        async with transaction(self.pool) as conn:
            await journal_store.insert_prompts(conn, [redacted_prompt(p) for p in prompts])

    async def journal(self, where: JournalFilter | None = None, *, limit: int = 50) -> JournalPage:
        """Prompts and the calls that followed them, newest first, at most `limit` of each.

        With a tool or failed-only filter only calls count, so prompts without a matching call
        are left out; otherwise prompts that no call followed are listed too.
        """
        where = where or JournalFilter()
        check_limit(limit, MAX_PAGE)
        text = blank_to_none(where.text)
        params = {
            "project": await self.resolve_project(where.project),
            "session": blank_to_none(where.session_id),
            "since": where.since,
            "before": where.before,
            "tool": blank_to_none(where.tool),
            "failed": where.failed_only,
            "text": None if text is None else f"%{_escaped(text)}%",
        }
        calls_only = params["tool"] is not None or where.failed_only
        async with transaction(self.pool) as conn:
            call_rows = await journal_store.calls(conn, params, limit + 1)
            prompt_rows = [] if calls_only else await journal_store.prompts(conn, params, limit + 1)
        truncated = len(call_rows) > limit or len(prompt_rows) > limit
        call_rows, prompt_rows = call_rows[:limit], prompt_rows[:limit]

        entries: dict[tuple[str, str | None], JournalEntry] = {}
        for prompt in prompt_rows:
            entries[(prompt.session_id, prompt.prompt_key)] = prompt.entry()
        for row in reversed(call_rows):  # oldest first within each entry
            key = (row.session_id, row.prompt_key)
            if key not in entries:
                entries[key] = JournalEntry(
                    row.session_id, row.project, row.prompt_key, row.prompt, row.prompt_at, []
                )
            entries[key].calls.append(row.call())
        ordered = sorted(entries.values(), key=_entry_time, reverse=True)
        return JournalPage(entries=ordered, calls=len(call_rows), truncated=truncated)


def _with_calls(
    entries: list[JournalEntry], calls: list[journal_store.CallRow]
) -> list[JournalEntry]:
    """A session's prompt entries (in time order) with its calls (in time order) filed in."""
    by_key = {entry.prompt_key: entry for entry in entries}
    timed = [entry for entry in entries if entry.at is not None]
    stamps = [entry.at for entry in timed if entry.at is not None]
    before_any: list[JournalCall] = []
    for row in calls:
        call = row.call()
        entry = by_key.get(row.prompt_key) if row.prompt_key is not None else None
        if entry is None and row.at is not None and (index := bisect_right(stamps, row.at)):
            entry = timed[index - 1]
        if entry is None and row.at is None and entries:
            entry = entries[-1]
        if entry is None:
            before_any.append(call)
        else:
            entry.calls.append(call)
    if not before_any:
        return entries
    first = calls[0]
    return [JournalEntry(first.session_id, first.project, None, None, None, before_any), *entries]


def _entry_time(entry: JournalEntry) -> float:
    times = [entry.at, *(call.at for call in entry.calls)]
    known = [moment.timestamp() for moment in times if moment is not None]
    return min(known) if known else 0.0


def _escaped(text: str) -> str:
    """`text` as a literal inside a LIKE pattern (backslash is the escape character)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


async def session_journals(pool: Pool, session_ids: Sequence[str]) -> dict[str, list[JournalEntry]]:
    """Each session's prompts in order, each with the calls that followed it, oldest first.

    A call goes with the prompt it names; one that names none known (a sub-agent's call)
    with the last prompt before it in time; calls before the first prompt come first, in
    an entry without a prompt.
    """
    async with transaction(pool) as conn:
        prompts = await journal_store.sessions_prompts(conn, session_ids)
        calls = await journal_store.sessions_calls(conn, session_ids)
    journals: dict[str, list[JournalEntry]] = {}
    for prompt in prompts:
        journals.setdefault(prompt.session_id, []).append(prompt.entry())
    for session_id, rows in groupby(calls, key=lambda row: row.session_id):
        journals[session_id] = _with_calls(journals.get(session_id, []), list(rows))
    return journals
