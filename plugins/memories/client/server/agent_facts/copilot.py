"""GitHub Copilot CLI, as the hook client and lessons see it (standard library only; see
__init__.py).

Hooks in `$COPILOT_HOME/hooks/claude-memory.json`, written by `connect copilot`
(server/agents/copilot.py): `{"version": 1, "hooks": {<event>: [{"type": "command", "bash",
"timeoutSec"}]}}`. Under Claude Code's event names Copilot (1.0.102) sends Claude Code's
snake_case payloads (`hook_event_name`, `session_id`, `cwd`, `prompt`, `source`; Stop also
`transcript_path`, its events.jsonl; SessionEnd has none, so the session is imported at Stop;
Copilot may not have written the turn's events yet when Stop runs, so that import can find
less than the turn, and the next import reads the rest).
It reads back a flat `{"additionalContext": ...}`, not the nested `hookSpecificOutput`: seen in
a real offline run, SessionStart's reaching the model as a user message and UserPromptSubmit's
inside a `<system_reminder>` after the prompt (tests/integration/test_copilot.py). Tool hooks
are not installed: their payloads carry no call id (the import would journal a call twice), and
what a PreToolUse answer may do was not checked. Its built-in tools, as its bundle names them:
`bash` runs a command; `edit`, `create` and `apply_patch` change files.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any

NAME = "copilot"
LABEL = "GitHub Copilot CLI"
# Its instruction files at a repository's root, and their notes' tag (see __init__.py).
INSTRUCTIONS_FILE = ".github/copilot-instructions.md"
MORE_INSTRUCTIONS_FILES: tuple[str, ...] = ()
INSTRUCTIONS_TAG = "copilot-instructions"
# The clientInfo.name its MCP client sends in `initialize`: its MCP saves are this agent's.
MCP_CLIENTS = ("copilot-cli", "github-copilot-developer")
# (its event name, the hook client's argument, timeout in seconds, what the client asks)
HOOKS = (
    ("SessionStart", "session-start", 5, "start"),
    ("UserPromptSubmit", "user-prompt-submit", 5, "prompt"),
    ("Stop", "stop", 5, "import"),
)
SHELL_TOOLS = ("bash",)
EDIT_TOOLS = ("edit", "create", "apply_patch")


def answer(hook_name: str, context: str, reason: str) -> dict[str, Any] | None:
    """The flat `{"additionalContext": context}` Copilot reads, if there is any context."""
    return {"additionalContext": context} if context else None


def copilot_home(environ: Mapping[str, str], home: Path) -> Path:
    """`$COPILOT_HOME`, else `~/.copilot`: where Copilot keeps its config and sessions."""
    from pathlib import Path  # here: the hook client imports this module, never pathlib (~6 ms)

    configured = environ.get("COPILOT_HOME")
    return Path(configured).expanduser() if configured else home / ".copilot"
