"""Gemini CLI, as the hook client and lessons see it (standard library only; see __init__.py).

Hooks under `hooks` in its settings.json, written by `connect gemini` (server/agents/gemini.py):
its own event names, timeouts in milliseconds. Its tool hooks carry no call id, so calls reach
the journal from the session file, imported at the end of every turn (AfterAgent) and session.

Answers: `hookSpecificOutput.additionalContext` on SessionStart and BeforeAgent. BeforeTool
cannot add context for the model, so the lessons of a call reach it with the call's result,
from AfterTool. A strict lesson stops the call from BeforeTool (`decision: "deny"`, the lesson
as the reason): Gemini's "ask" waits for ever in a non-interactive run (`gemini -p`, 0.61.0).
"""

from __future__ import annotations

from server.agent_facts.answers import DENIAL, context_only

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any

NAME = "gemini"
LABEL = "Gemini CLI"
# Its instruction files at a repository's root, and their notes' tag (see __init__.py).
INSTRUCTIONS_FILE = "GEMINI.md"
MORE_INSTRUCTIONS_FILES: tuple[str, ...] = ()
INSTRUCTIONS_TAG = "gemini-md"
# The clientInfo.name its MCP client sends in `initialize`: its MCP saves are this agent's.
MCP_CLIENTS = ("gemini-cli-mcp-client", "gemini-cli")
HOOKS = (
    ("SessionStart", "session-start", 5_000, "start"),
    ("BeforeAgent", "before-agent", 5_000, "prompt"),
    ("BeforeTool", "before-tool", 3_000, "lessons"),
    ("AfterTool", "after-tool", 3_000, "lessons"),
    ("AfterAgent", "after-agent", 3_000, "import"),
    ("SessionEnd", "session-end", 3_000, "import"),
)
# Its SHELL_, EDIT_ and WRITE_FILE_TOOL_NAME.
SHELL_TOOLS = ("run_shell_command",)
EDIT_TOOLS = ("replace", "write_file")


def answer(hook_name: str, context: str, reason: str) -> dict[str, Any] | None:
    """What to print for `hook_name`; `reason` is a strict lesson's, when one applies."""
    if hook_name == "BeforeTool":
        # The model gets the lessons with the call's result (AfterTool).
        return {"decision": "deny", "reason": DENIAL.format(reason=reason)} if reason else None
    return context_only(hook_name, context)


def gemini_dir(environ: Mapping[str, str], home: Path) -> Path:
    """`$GEMINI_CLI_HOME/.gemini`, else `~/.gemini` (gemini-cli's Storage.getGlobalGeminiDir):
    its settings, login and sessions."""
    from pathlib import Path  # here: the hook client imports this module, never pathlib (~6 ms)

    configured = environ.get("GEMINI_CLI_HOME")
    return (Path(configured).expanduser() if configured else home) / ".gemini"
