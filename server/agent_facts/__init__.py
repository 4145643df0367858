"""What the stdlib hook client and the pure rules need to know of each agent: one module each.

Standard library only, like server/hooks.py, which imports the one agent a hook runs for under
`python -I -S` (tests/unit/test_architecture.py holds them to it). Each module here is one
agent's facts, named after it (`claude_code.py` for claude-code): its name and label, its hook
events and the shape of its answers, its tool names for lessons, and its instruction files:
INSTRUCTIONS_FILE, the one it reads at a repository's root (`promote` writes its section
there), MORE_INSTRUCTIONS_FILES, others it reads there too, and INSTRUCTIONS_TAG, the tag of the
notes `import --from instructions` makes of them. No other module names an instruction file
(tests/unit/test_architecture.py). every.py lists them: the one list of agents. The rest of an
agent (connect, the reader of its sessions) is `server.agents.<same name>`, which
server/agents/registry.py loads from that list.

This package sits at the bottom of the layers, beside server/core: it imports nothing of ours
but itself, and everything above may read it.
"""

from __future__ import annotations

# Whose session a hook names when it does not say: Claude Code's hooks predate the field.
DEFAULT = "claude-code"
