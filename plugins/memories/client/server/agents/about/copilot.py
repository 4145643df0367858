"""GitHub Copilot CLI, as lessons see it (standard library only; see __init__.py).

Copilot CLI (@github/copilot, read from 1.0.102) has command hooks (`~/.copilot/hooks/*.json`,
or `hooks` in its settings), but `connect copilot` does not install ours yet: what it prints
back to them is not established from the installed package (docs/ notes in server/agents/
copilot.py). Its built-in tools, as its bundle names them: `bash` runs a command; `edit`,
`create` and `apply_patch` change files.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "copilot"
LABEL = "GitHub Copilot CLI"
HOOKS: tuple[tuple[str, str, int, str], ...] = ()
SHELL_TOOLS = ("bash",)
EDIT_TOOLS = ("edit", "create", "apply_patch")


def answer(hook_name: str, context: str, reason: str) -> dict[str, Any] | None:
    """Nothing: `connect copilot` installs no hooks yet."""
    return None
