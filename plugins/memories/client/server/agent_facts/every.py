"""Every agent claude-memory knows: the one list (see __init__.py). Adding an agent is its
module in this folder, its `server/agents/<name>.py` (and its reader in server/ingest/, if its
sessions can be read), and one line here.
"""

from __future__ import annotations

from server.agent_facts import DEFAULT, claude_code, codex, copilot, gemini, opencode

ABOUT = {agent.NAME: agent for agent in (claude_code, codex, gemini, opencode, copilot)}
assert DEFAULT in ABOUT
