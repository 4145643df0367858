"""Shapes of the hook routes the hook client calls (server/hooks.py) for every agent."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from server.agents.registry import DEFAULT_AGENT, SESSION_FORMATS
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
    prompt_id: str = Field(
        "", description="Claude Code's id of the prompt (2.1.196+); the journal keeps it."
    )


class ToolHook(Shape):
    """PostToolUse and PostToolUseFailure, as Claude Code and Codex send them (FORMATS.md §3.2)."""

    hook_event_name: Literal["PostToolUse", "PostToolUseFailure"] = "PostToolUse"
    session_id: str = ""
    cwd: str = ""
    prompt_id: str = ""
    agent_id: str = ""
    tool_name: str = ""
    tool_use_id: str = ""
    tool_input: dict[str, Any] = Field(default_factory=dict)
    tool_response: Any = Field(None, description="The tool's result (PostToolUse).")
    error: str = Field("", description="The failure (PostToolUseFailure).")
    is_interrupt: bool = False


class SessionEndHook(Shape):
    session_id: str = ""
    cwd: str = ""
    transcript_path: str = Field(
        "",
        description="Absolute path of the session file, as the agent's hook names it (each "
        "agent's form is in docs/API.md); only the agent's own session files, under its session "
        "folder on the server's machine, are read, and only in single-user mode.",
    )
    agent: str = Field(
        DEFAULT_AGENT,
        description="Whose session file it is, so it is read by that agent's reader.",
        json_schema_extra={"enum": list(SESSION_FORMATS)},
    )

    @field_validator("agent")
    @classmethod
    def _known_agent(cls, value: str) -> str:
        if value not in SESSION_FORMATS:
            raise ValueError(f"must be one of {', '.join(SESSION_FORMATS)}")
        return value


class CheckItem(BaseModel):
    """A memory shown that the server could not check against the session's folder."""

    id: int
    created_at: str = Field(description="When it was written (ISO 8601): git's renames since.")
    anchors: list[tuple[str, str, str | None]] = Field(
        description="(kind, name, value): path, symbol, setting or version it names."
    )


CHECK_DESCRIPTION = (
    "Empty unless the server could not check the memories shown against `cwd` (a team's "
    "server, or a folder not on its machine): the hook client checks them where the tree is."
)


class ClaimedFolder(BaseModel):
    folder: str
    project: str
    matched_by: str = Field(description="name, remote (its git remote) or user")
    note: str


class SessionStartContext(BaseModel):
    additionalContext: str = Field(description='Markdown; "" when empty.')
    project: str | None
    check: list[CheckItem] = Field(default_factory=list, description=CHECK_DESCRIPTION)
    claimed_folder: ClaimedFolder | None = Field(
        None,
        description="Set once: the session's folder was just taken to be this project's, "
        "which had no folder known (its name or git remote matched).",
    )


class PromptContext(BaseModel):
    additionalContext: str = Field(description='Markdown; "" when nothing fits.')
    memory_ids: list[int]
    check: list[CheckItem] = Field(default_factory=list, description=CHECK_DESCRIPTION)


class PreToolHook(Shape):
    """PreToolUse as Claude Code and Codex send it (Gemini: BeforeTool, AfterTool): the call."""

    session_id: str = ""
    cwd: str = ""
    tool_name: str = ""
    tool_use_id: str = ""
    tool_input: dict[str, Any] = Field(default_factory=dict)


class LessonsBeforeCall(BaseModel):
    """What the PreToolUse hook prints back, from the lessons that apply to the call."""

    additionalContext: str = Field(description='The lessons\' messages; "" when none apply.')
    permissionDecision: Literal["ask"] | None = Field(
        description='"ask" when a strict lesson applies: Claude Code asks the user first.'
    )
    permissionDecisionReason: str | None
    lesson_ids: list[int]


class CallRecorded(BaseModel):
    recorded: bool = Field(description="false: the call named no tool_use_id and was ignored.")


class ImportStarted(BaseModel):
    status: Literal["importing", "queued", "not_read", "not_yet"] = Field(
        description="queued: that transcript is being imported and will be read once more. "
        "not_read: a team's server opens no path a hook sends; the user's own import brings it. "
        "not_yet: the agent has not written that session file yet (Copilot may stop first); "
        "the next session-end hook or import run reads it."
    )
    message: str = Field(
        "", description="Why the file was not read (not_read, not_yet), else empty."
    )
