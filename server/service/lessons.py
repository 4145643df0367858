"""Lessons: reminders before risky tool calls, written by users and agents or proposed from the
journal; the adapters' part is a MemoryService mixin, the proposal job's `LessonProposals`.

`lessons_for_call` runs on every PreToolUse hook, so the active lessons are read through the
read cache (one short state query while nothing changed) and their patterns are compiled once
per process (up to `COMPILED_PATTERNS` of them, server/domain/lessons.py). Matching runs in a
worker thread (RE2 releases the GIL) within MATCH_BUDGET_SECONDS, so no pattern and no input
holds up other requests. Proposals (server/learning/lesson_proposals_job.py) are stored
inactive, so none fires before the user accepts it.

With users, a lesson written by one is theirs: each user sees lessons for every project, for
their projects and their own (migration 018, `lesson_visible`), the hook applies those of the
call's project and their own and ownerless ones for every project (`applies_in`), and
`check_lesson_change` decides who may edit one; one they cannot see is not found.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import anyio

from server.core.access import current_viewer
from server.core.errors import NotFound
from server.core.models.journal import JournalEntry
from server.core.models.lessons import Lesson, LessonChange, LessonDraft
from server.core.redact import redact
from server.core.validation import blank_to_none, check_id, clean_field, redacted_field
from server.domain.lessons import (
    CallMatch,
    call_text,
    check_lesson_change,
    check_lesson_project,
    checked_message,
    checked_pattern,
    checked_strictness,
    match_call,
    proposal_key,
)
from server.service.cache import ReadCache
from server.service.journal import session_journals
from server.service.projects import ProjectRule
from server.store import lessons as lesson_store
from server.store.lessons import JournalCounts
from server.store.tx import Pool, transaction

logger = logging.getLogger(__name__)

# How long one PreToolUse hook may spend searching patterns. Real lessons take microseconds
# each; only a flood of costly patterns reaches this, and then the costliest go unsearched.
MATCH_BUDGET_SECONDS = 0.025


class Lessons(ProjectRule):
    """`lessons`, `add_lesson`, `update_lesson` and `lessons_for_call`, for MemoryService."""

    pool: Pool
    cache: ReadCache

    async def lessons(
        self, project: str | None = None, *, include_inactive: bool = True
    ) -> list[Lesson]:
        """The lessons the asking user sees, newest first; with a project, its own and those for
        every project."""
        project = await self.resolve_project(project)

        async def load() -> list[Lesson]:
            async with transaction(self.pool) as conn:
                return await lesson_store.listed(conn, project, include_inactive)

        return await self.cache.get_or_load(("lessons", project, include_inactive), load)

    async def add_lesson(self, draft: LessonDraft) -> Lesson:
        """Store a lesson; a bad pattern, an empty message or an unknown strictness is refused,
        and so is a user's lesson for a project they do not belong to (Forbidden).

        The message, tool and project are redacted like a memory's content. A pattern that
        holds a secret is refused rather than redacted (a redacted pattern would match
        something else). The lesson is the asking user's (the column default).
        """
        checked = _checked(draft)
        check_lesson_project(current_viewer(), checked.project)
        async with transaction(self.pool) as conn:
            return await lesson_store.insert(conn, checked)

    async def update_lesson(self, lesson_id: int, change: LessonChange) -> Lesson:
        """Edit, disable (active=False) or enable a lesson; NotFound when there is none or the
        asking user cannot see it, Forbidden when they may not change it or move it to that
        project."""
        check_id(lesson_id, "lesson")

        def kept(value: str | None, check: Any) -> str | None:
            return None if value is None else check(value)

        checked = LessonChange(
            tool=kept(change.tool, lambda text: redacted_field(text, "tool")[0]),
            pattern=kept(change.pattern, checked_pattern),
            project=kept(change.project, lambda text: redacted_field(text, "project")[0]),
            message=kept(change.message, lambda text: redact(checked_message(text)).text),
            strictness=kept(change.strictness, checked_strictness),
            active=change.active,
        )
        viewer = current_viewer()
        if checked.project is not None:
            check_lesson_project(viewer, checked.project)
        async with transaction(self.pool) as conn:
            ownership = await lesson_store.ownership(conn, lesson_id)
            if ownership is None:
                raise NotFound(f"no lesson with id {lesson_id}")
            only_switch = checked == LessonChange(active=checked.active)
            check_lesson_change(
                viewer,
                lesson_id,
                ownership.owner_id,
                ownership.owner,
                ownership.project,
                only_switch=only_switch,
            )
            lesson = await lesson_store.update(conn, lesson_id, checked)
        if lesson is None:
            raise NotFound(f"no lesson with id {lesson_id}")
        return lesson

    async def lessons_for_call(
        self, tool: str, tool_input: Any, project: str | None
    ) -> list[Lesson]:
        """The active lessons the asking user sees that apply to a call of `tool` with
        `tool_input` in `project` (a teammate's lesson for every project does not)."""
        active = await self.lessons(include_inactive=False)
        viewer = current_viewer()

        def search() -> CallMatch:
            return match_call(
                active,
                tool,
                call_text(tool_input),
                project,
                MATCH_BUDGET_SECONDS,
                viewer.name if viewer else None,
            )

        found = await anyio.to_thread.run_sync(search)
        _report(found, len(active))
        return found.lessons


_unusable_reported: set[tuple[int, str]] = set()


class LessonProposals:
    """The `lessons propose` job's steps (server/learning/lesson_proposals_job.py):
    `service.lesson_proposals`, apart from what the adapters call."""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool

    async def journals(self, session_ids: Sequence[str]) -> dict[str, list[JournalEntry]]:
        """Each session's prompts with the calls that followed them (journal.session_journals)."""
        return await session_journals(self.pool, session_ids)

    async def queue(
        self, project: str | None = None, *, rescan: bool = False
    ) -> list[JournalCounts]:
        """Sessions whose journal changed since lessons were last proposed from it (all with
        `rescan`); with a project, only its sessions."""
        async with transaction(self.pool) as conn:
            return await lesson_store.changed_sessions(conn, blank_to_none(project), rescan)

    async def known(self, drafts: Sequence[LessonDraft]) -> list[bool]:
        """For each draft, whether storing it as a proposal would add nothing: it was proposed
        before (and maybe edited or dismissed since), or a lesson says the same already."""
        keyed = [(_key(checked), checked) for checked in map(_checked, drafts)]
        async with transaction(self.pool) as conn:
            known = await lesson_store.known_proposals(conn, keyed)
        return [key in known for key, _ in keyed]

    async def store(
        self, drafts: Sequence[LessonDraft], read: Sequence[JournalCounts]
    ) -> list[Lesson]:
        """Store proposed lessons, inactive, and the sessions read for them, in one transaction.

        A draft proposed before, or one an existing lesson already says (same tool, pattern and
        project), adds nothing; the lessons added are returned.
        """
        checked = [_checked(draft) for draft in drafts]
        added: list[Lesson] = []
        async with transaction(self.pool) as conn:
            await lesson_store.lock_proposals(conn)
            for draft in checked:
                lesson = await lesson_store.insert_proposed(conn, draft, _key(draft))
                if lesson is not None:
                    added.append(lesson)
            await lesson_store.record_sessions_read(conn, read)
        return added


def _report(found: CallMatch, lessons: int) -> None:
    """Log what a hook could not search: each unusable pattern once per process, and every
    call whose budget ran out."""
    for lesson in found.unusable:
        if (lesson.id, lesson.pattern) not in _unusable_reported:
            _unusable_reported.add((lesson.id, lesson.pattern))
            logger.warning(
                "lesson %d skipped: RE2 cannot use its pattern; edit it (claude-memory lessons"
                " edit %d --pattern ...)",
                lesson.id,
                lesson.id,
            )
    if found.unchecked:
        logger.warning(
            "lesson matching ran out of time: %d of %d lessons not searched",
            found.unchecked,
            lessons,
        )


def _checked(draft: LessonDraft) -> LessonDraft:
    """The draft as stored: pattern and strictness checked, message, tool and project checked
    and redacted."""
    return LessonDraft(
        pattern=checked_pattern(draft.pattern),
        message=redact(checked_message(draft.message)).text,
        tool=redacted_field(draft.tool, "tool")[0],
        project=redacted_field(draft.project, "project")[0],
        strictness=checked_strictness(draft.strictness),
        origin=clean_field(draft.origin, "origin") or "user",
    )


def _key(draft: LessonDraft) -> str:
    return proposal_key(draft.tool, draft.pattern, draft.project)
