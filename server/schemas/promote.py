"""Shapes of promote's operations (#58): the proposal for a project's instruction files, and
writing the accepted part of it."""

from __future__ import annotations

from pydantic import Field

from server.schemas.fields import Shape

MAX_IDS = 1_000

PROJECT = "The project (name or folder)."
CWD = (
    "A working folder inside the project's folder; its repository's root holds the instruction"
    " files (default: the project's folder)."
)


class PromoteQuery(Shape):
    """GET /api/promote."""

    project: str = Field(min_length=1, max_length=4096, description=PROJECT)
    cwd: str | None = Field(None, max_length=4096, description=CWD)


class PromoteRequest(Shape):
    """POST /api/promote."""

    project: str = Field(min_length=1, max_length=4096, description=PROJECT)
    cwd: str | None = Field(None, max_length=4096, description=CWD)
    accept: list[int] = Field(
        default_factory=list,
        max_length=MAX_IDS,
        description="Memory ids whose proposed change (add, change, remove) is written.",
    )
    reject: list[int] = Field(
        default_factory=list,
        max_length=MAX_IDS,
        description="Memory ids whose proposed line is declined: never proposed again here.",
    )
