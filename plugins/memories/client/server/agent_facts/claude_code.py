"""Claude Code, as the hook client and lessons see it (standard library only; see __init__.py).

Hooks: `install-hooks` writes HOOKS into its settings.json (server/jobs/hook_install.py),
timeouts in seconds. The client gives up sooner (2 s, or 1 s for the capture events);
SessionEnd hooks share a 1.5 s budget that a larger timeout raises (FORMATS.md §3.4). Answers
are the documented nested `hookSpecificOutput` (a top-level `additionalContext` is not delivered
by every client, FORMATS.md §3.3); a strict lesson adds `permissionDecision: "ask"`, so Claude
Code asks the user, showing the reason, before the call.
"""

from __future__ import annotations

from server.agent_facts.answers import nested

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any

NAME = "claude-code"
LABEL = "Claude Code"
# Its instruction files at a repository's root, and their notes' tag (see __init__.py).
INSTRUCTIONS_FILE = "CLAUDE.md"
MORE_INSTRUCTIONS_FILES = ("CLAUDE.local.md", ".claude/CLAUDE.md")
INSTRUCTIONS_TAG = "claude-md"
# The clientInfo.name its MCP client sends in `initialize`: its MCP saves are this agent's.
MCP_CLIENTS = ("claude-code",)
# (its event name, the hook client's argument, timeout, what the client asks: answers.ANSWERED)
HOOKS = (
    ("SessionStart", "session-start", 5, "start"),
    ("UserPromptSubmit", "user-prompt-submit", 5, "prompt"),
    ("PreToolUse", "pre-tool-use", 3, "lessons"),
    ("PostToolUse", "post-tool-use", 3, "call"),
    ("PostToolUseFailure", "post-tool-use-failure", 3, "call"),
    ("Stop", "stop", 3, "import"),
    ("SessionEnd", "session-end", 2, "import"),
)
# Its tool names (lower case) for lessons' tool families (server/domain/lessons.py).
SHELL_TOOLS = ("bash",)
EDIT_TOOLS = ("edit", "multiedit", "write")


def answer(hook_name: str, context: str, reason: str) -> dict[str, Any] | None:
    """What to print for `hook_name`; `reason` is a strict lesson's, when one applies."""
    specific = {"additionalContext": context} if context else {}
    if hook_name == "PreToolUse" and reason:
        specific.update(permissionDecision="ask", permissionDecisionReason=reason)
    return nested(hook_name, **specific)


def claude_dir(environ: Mapping[str, str], home: Path) -> Path:
    """`$CLAUDE_CONFIG_DIR`, else `~/.claude`: Claude Code's config folder (settings.json,
    projects/, plugins/, the user's CLAUDE.md)."""
    from pathlib import Path  # here: the hook client imports this module, never pathlib (~6 ms)

    configured = environ.get("CLAUDE_CONFIG_DIR")
    return Path(configured).expanduser() if configured else home / ".claude"


def claude_config_file(environ: Mapping[str, str], home: Path) -> Path:
    """Its own config file, where `claude mcp add --scope user` writes and the account signed
    in is named: `$CLAUDE_CONFIG_DIR/.claude.json`, else `~/.claude.json`."""
    from pathlib import Path  # here: the hook client imports this module, never pathlib (~6 ms)

    configured = environ.get("CLAUDE_CONFIG_DIR")
    return (Path(configured).expanduser() if configured else home) / ".claude.json"
