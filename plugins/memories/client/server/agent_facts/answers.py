"""The answer shapes the agents' hooks share, standard library only (see __init__.py).

`nested` is Claude Code's documented `{"hookSpecificOutput": {"hookEventName": ...,
"additionalContext": ...}}`, which Codex and Gemini CLI read too. `DENIAL` is the reason given
when a strict lesson stops a call in an agent whose hooks cannot ask the user first.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs ~4 ms to import; only the type checker needs it
if TYPE_CHECKING:
    from typing import Any

DENIAL = (
    "{reason} (a strict lesson from claude-memory: the call was stopped because this agent's "
    "hooks cannot ask for approval; tell the user, who can run it themselves or disable the "
    "lesson)"
)
# What a hook asks of the server, by kind (server/hooks.py maps each to its route): the
# session-start context, prompt recall, the lessons of a tool call, a call for the journal,
# the session file's import. Only the first three are answered back to the agent.
ANSWERED = ("start", "prompt", "lessons")


def nested(hook_name: str, **specific: str) -> dict[str, Any] | None:
    """`{"hookSpecificOutput": {"hookEventName": hook_name, **specific}}`, or None if empty."""
    if not specific:
        return None
    return {"hookSpecificOutput": {"hookEventName": hook_name, **specific}}


def context_only(hook_name: str, context: str) -> dict[str, Any] | None:
    """The nested shape carrying `context`, if there is any."""
    return nested(hook_name, additionalContext=context) if context else None
