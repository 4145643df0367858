"""OpenCode, as lessons see it (standard library only; see __init__.py).

OpenCode has no command hooks: our JavaScript plugin (server/agents/opencode_plugin.js) calls
the server's hook routes itself, so the hook client never runs for it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "opencode"
LABEL = "OpenCode"
# Its instruction files at a repository's root, and their notes' tag (see __init__.py).
INSTRUCTIONS_FILE = "AGENTS.md"
MORE_INSTRUCTIONS_FILES: tuple[str, ...] = ()
INSTRUCTIONS_TAG = "agents-md"
# The clientInfo.name its MCP client sends in `initialize`: its MCP saves are this agent's.
MCP_CLIENTS = ("opencode",)
HOOKS: tuple[tuple[str, str, int, str], ...] = ()
SHELL_TOOLS = ("bash",)
EDIT_TOOLS = ("edit", "write")


def answer(hook_name: str, context: str, reason: str) -> dict[str, Any] | None:
    """Nothing: the hook client does not run for OpenCode."""
    return None
