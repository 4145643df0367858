"""The recall agent (#67): one set of instructions, wrapped in each agent's own agent file.

A recall agent searches memory with several phrasings, reads what it needs, checks it against
the working tree through our tools and answers in a few lines citing `#ids`, so the calling
conversation receives only that answer. Its instructions live once, in recall.md beside this
module; each agent's installer (and the Claude Code plugin's build) puts them in its own format
and folder, with a marker that makes the file recognisably ours:

- Claude Code: the plugin's `agents/recall.md` (server/agents/claude_plugin.py builds it).
- OpenCode: `agents/claude-memory-recall.md`, a subagent (server/agents/opencode.py).
- Gemini CLI: `agents/claude-memory-recall.md`, a local subagent (server/agents/gemini.py).
- Copilot CLI: `agents/claude-memory-recall.agent.md`, a custom agent (server/agents/copilot.py).
- Codex: `agents/claude-memory-recall.toml`, an agent role (server/agents/codex.py).

A file at our path without our marker is the user's: connect refuses to touch it.
"""

from __future__ import annotations

import json
from pathlib import Path

from server.jobs.agent_files import AgentFileError
from server.jobs.connect import Edit, read_text

NAME = "claude-memory-recall"
INSTRUCTIONS = Path(__file__).with_name("recall.md")
DESCRIPTION = (
    "Searches claude-memory, the user's memory across sessions, and answers a question in a few "
    "lines citing memory ids (#123). Use it when the question may have been settled in an "
    "earlier session (a decision, a root cause, a convention, a command that worked, what "
    "changed), when recalled memories list related ones not shown in full, or instead of "
    "reading many memories yourself; it searches with several phrasings, reads and checks them "
    "in its own context and returns only the answer."
)
# The read-only tools it may call, by their names on our MCP server.
TOOLS = ("hybrid_search", "search_memories", "get_memory", "startup_context")


def instructions() -> str:
    """The recall agent's instructions, the same for every agent."""
    return INSTRUCTIONS.read_text(encoding="utf-8")


def markdown_agent(fields: dict[str, object], marker: str) -> str:
    """A Markdown agent file: YAML frontmatter (each value written as JSON, which YAML reads
    unchanged), `marker` (empty for none) and the instructions as its body."""
    head = "".join(f"{key}: {json.dumps(value)}\n" for key, value in fields.items())
    mark = f"{marker}\n\n" if marker else ""
    return f"---\n{head}---\n\n{mark}{instructions()}"


def toml_agent(fields: dict[str, str], marker: str) -> str:
    """A TOML agent file (Codex's agent roles): `marker` as its first line, `fields` as
    strings (a JSON string is a TOML basic string) and the instructions as
    `developer_instructions`, a literal multi-line string."""
    text = instructions()
    if "'''" in text:
        raise ValueError("the recall instructions must not hold three single quotes")
    values = "".join(f"{key} = {json.dumps(value)}\n" for key, value in fields.items())
    return f"{marker}\n{values}developer_instructions = '''\n{text}'''\n"


def recall_edit(path: Path, marker: str, text: str | None) -> Edit:
    """Our recall agent's file with `text`, or none (None); a file there without `marker` is
    the user's and refused."""
    old = read_text(path)
    if old and marker not in old:
        raise AgentFileError(
            f"{path} is not ours (it lacks our marker); move it aside, nothing was changed"
        )
    return path, old, text or ""
