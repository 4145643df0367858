"""Codex CLI, as the hook client and lessons see it (standard library only; see __init__.py).

Hooks in `$CODEX_HOME/hooks.json`, written by `connect codex` (server/agents/codex.py): Claude
Code's event names, timeouts in seconds, SessionEnd clamped to 3 s. Its PostToolUse stays
synchronous: `codex exec` may end before a background hook has journaled the call. Codex calls
tools by Claude Code's hook names (Bash, apply_patch, mcp__server__tool); a call is journaled
with its call id, which its rollout uses too, so the import adds nothing twice.

Answers: the nested shape, and nothing its output schemas do not allow (they set
`additionalProperties: false`; tests/fixtures/codex/hook_schemas/). A strict lesson stops the
call (`permissionDecision: "deny"`, the lesson as the reason): Codex's PreToolUse has no "ask"
(0.169.0 rejects it).
"""

from __future__ import annotations

from server.agent_facts.answers import DENIAL, nested

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any

NAME = "codex"
LABEL = "Codex CLI"
# Its instruction files at a repository's root, and their notes' tag (see __init__.py).
INSTRUCTIONS_FILE = "AGENTS.md"
MORE_INSTRUCTIONS_FILES: tuple[str, ...] = ()
INSTRUCTIONS_TAG = "agents-md"
# The clientInfo.name its MCP client sends in `initialize`: its MCP saves are this agent's.
MCP_CLIENTS = ("codex-mcp-client", "codex")
HOOKS = (
    ("SessionStart", "session-start", 5, "start"),
    ("UserPromptSubmit", "user-prompt-submit", 5, "prompt"),
    ("PreToolUse", "pre-tool-use", 3, "lessons"),
    ("PostToolUse", "post-tool-use", 3, "call"),
    ("Stop", "stop", 3, "import"),
    ("SessionEnd", "session-end", 3, "import"),
)
# Hooks say Bash and apply_patch (codex-rs/core/src/tools/hook_names.rs); its rollouts, and so
# the journal's imported calls, say exec_command, shell, shell_command, local_shell.
SHELL_TOOLS = ("bash", "exec_command", "shell", "shell_command", "local_shell")
EDIT_TOOLS = ("apply_patch",)


def answer(hook_name: str, context: str, reason: str) -> dict[str, Any] | None:
    """What to print for `hook_name`; `reason` is a strict lesson's, when one applies."""
    specific = {"additionalContext": context} if context else {}
    if hook_name == "PreToolUse" and reason:
        specific.update(
            permissionDecision="deny", permissionDecisionReason=DENIAL.format(reason=reason)
        )
    return nested(hook_name, **specific)


def codex_home(environ: Mapping[str, str], home: Path) -> Path:
    """`$CODEX_HOME`, else `~/.codex`: where Codex keeps its config, login and sessions."""
    from pathlib import Path  # here: the hook client imports this module, never pathlib (~6 ms)

    configured = environ.get("CODEX_HOME")
    return Path(configured).expanduser() if configured else home / ".codex"
