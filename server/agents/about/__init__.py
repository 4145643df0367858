"""Every agent claude-memory knows, as the hook client and the pure rules see it: the one list.

Standard library only, like server/hooks.py, which imports this package under `python -I -S`
(tests/unit/test_architecture.py holds both to it). Each module here is one agent's facts:
its name and label, its hook events and the shape of its answers, its tool names for lessons.
The rest of an agent (connect, the reader of its sessions) is `server.agents.<same name>`, which
server/agents/registry.py loads from this list. Adding an agent: its module here, its
`server/agents/<name>.py` (and its reader in server/ingest/), and one line in ABOUT.
"""

from __future__ import annotations

from server.agents.about import claude_code, codex, copilot, gemini, opencode

ABOUT = {agent.NAME: agent for agent in (claude_code, codex, gemini, opencode, copilot)}
# Whose session a hook names when it does not say: Claude Code's hooks predate the field.
DEFAULT = claude_code.NAME
