"""Shapes of the learning operations: preferences, duplicates, startup context, distill state."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from server.core.models.lessons import Lesson, LessonChange, LessonDraft
from server.core.validation import MAX_SCAN_LIMIT
from server.schemas.fields import ProjectFilter, SearchLimit, Shape, SourceFilter, Unit


class PreferencesQuery(Shape):
    """GET /api/preferences."""

    project: ProjectFilter = None


class FindDuplicates(Shape):
    """find_duplicates: near-duplicate pairs among the newest memories."""

    threshold: Unit | None = Field(
        None,
        description="Similarity cut-off, 0-1; by default the one measured for the embedding"
        " model (0.8 for the bundled one).",
    )
    limit: SearchLimit = Field(20, description="Maximum pairs, 1-100.")
    project: ProjectFilter = None
    scan_limit: int = Field(
        500,
        ge=1,
        le=MAX_SCAN_LIMIT,
        description=f"How many of the newest memories to check, 1-{MAX_SCAN_LIMIT}.",
    )


class RecentContextArguments(Shape):
    """recent_context: the newest distilled memories of a project."""

    project: ProjectFilter = None
    source: SourceFilter = None
    limit: SearchLimit = Field(10, description="How many, 1-100.")


class ResetFailures(Shape):
    """POST /api/sessions/reset-failures: all failed sessions, or one by id or prefix."""

    session: str | None = None


class ResetCount(Shape):
    reset: int = Field(ge=0)


Strictness = Literal["warn", "ask"]
LESSON_TOOL = "The tool it applies to (Bash, Edit, Write, ...); empty for every tool."
LESSON_PATTERN = (
    "A regular expression (RE2 syntax: no backreferences or lookaround; case-insensitive)"
    " looked for in the call's input: its command, path or content. A plain word works:"
    " staging. Never a secret itself: match its prefix (ghp_) instead."
)


class NewLesson(Shape):
    """POST /api/lessons and save_lesson without an id: a reminder before matching calls."""

    pattern: str = Field(description=LESSON_PATTERN)
    message: str = Field(description="What the agent should know or do instead.")
    tool: str = Field("", description=LESSON_TOOL)
    project: str = Field("", description="The project it applies to; empty for every project.")
    strictness: Strictness = Field(
        "warn", description="warn: tell the agent; ask: also ask the user before the call runs."
    )
    origin: str = Field("user", description="Who wrote it: user, agent, journal, correction.")

    def draft(self) -> LessonDraft:
        return LessonDraft(
            pattern=self.pattern,
            message=self.message,
            tool=self.tool,
            project=self.project,
            strictness=self.strictness,
            origin=self.origin,
        )


class LessonEdit(Shape):
    """PATCH /api/lessons/{lesson_id}: an absent field is kept; active=false disables it."""

    tool: str | None = Field(None, description=LESSON_TOOL)
    pattern: str | None = Field(None, description=LESSON_PATTERN)
    project: str | None = None
    message: str | None = None
    strictness: Strictness | None = None
    active: bool | None = Field(None, description="false disables the lesson, true enables it.")

    def change(self) -> LessonChange:
        return LessonChange(
            tool=self.tool,
            pattern=self.pattern,
            project=self.project,
            message=self.message,
            strictness=self.strictness,
            active=self.active,
        )


class SaveLesson(LessonEdit):
    """save_lesson: with lesson_id, edit (or disable) that lesson; without, add a new one."""

    lesson_id: int | None = Field(None, ge=1, description="The lesson to change; omit to add.")


class LessonsQuery(Shape):
    """GET /api/lessons and list_lessons."""

    project: ProjectFilter = None
    include_inactive: bool = Field(True, description="Also disabled lessons.")


class LessonList(BaseModel):
    lessons: list[Lesson]
