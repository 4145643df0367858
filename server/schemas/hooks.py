"""Shapes of the hook routes the Claude Code hook client calls (server/hooks.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from server.schemas.fields import Shape


class SessionStartHook(Shape):
    session_id: str = ""
    cwd: str = Field("", description="The session's folder; finds its project.")
    source: str = Field(
        "startup", description="clear and compact let earlier recalls be injected again."
    )


class PromptHook(Shape):
    session_id: str = ""
    cwd: str = ""
    prompt: str = ""


class SessionEndHook(Shape):
    session_id: str = ""
    cwd: str = ""
    transcript_path: str = Field(
        "", description="Absolute path of <config dir>/projects/<project>/<session>.jsonl."
    )


class SessionStartContext(BaseModel):
    additionalContext: str = Field(description='Markdown; "" when empty.')
    project: str | None


class PromptContext(BaseModel):
    additionalContext: str = Field(description='Markdown; "" when nothing fits.')
    memory_ids: list[int]


class ImportStarted(BaseModel):
    status: Literal["importing", "queued"] = Field(
        description="queued: that transcript is being imported and will be read once more."
    )
