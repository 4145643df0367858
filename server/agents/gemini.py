"""Gemini CLI: its sessions (server/ingest/gemini.py), `connect` through its settings.json, and
our hooks in the same file.

- The MCP server: `mcpServers["claude-memory"]` in `$GEMINI_CLI_HOME/.gemini/settings.json`
  (default `~/.gemini/settings.json`) with `httpUrl` (streamable HTTP; its `url` would be SSE),
  `timeout` (ms) and, with a token, an `Authorization: Bearer ${CLAUDE_MEMORY_TOKEN}` header that
  Gemini CLI expands when it loads.
- Hooks under `hooks` in the same file (docs/hooks/reference.md), on by default since 0.26.0
  (google-gemini/gemini-cli#17247; before, behind `tools.enableHooks`): its own event names,
  timeouts in milliseconds, every hook synchronous (SessionEnd excepted: Gemini does not wait
  for it), and a `name` on each handler (`/hooks disable <name>` turns one off).
- A version without hooks gets the instructions block in `GEMINI.md` instead.
- Recall (#67): a local subagent, `agents/claude-memory-recall.md` in the same folder (Gemini
  CLI loads `~/.gemini/agents/*.md`, frontmatter checked strictly, the body its system prompt;
  agents are on unless `experimental.enableAgents` is false): our read-only MCP tools only,
  on the `flash` model, in its own context; the main model calls it as a tool and receives
  its answer. Written with the MCP entry, removed with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from server.agent_facts import gemini as about
from server.agent_facts.gemini import gemini_dir
from server.agents import recall_agent
from server.agents.detect import entry, entry_url, hook_routes, read_json, sends_token
from server.agents.unit import Found, Route, configured_by_files
from server.ingest.gemini import GEMINI
from server.jobs.agent_files import (
    json_entry_edit,
    render_json,
)
from server.jobs.agent_hooks import Version, with_hooks
from server.jobs.connect import (
    BEARER_HEADER,
    SERVER_NAME,
    Connection,
    Edit,
    FileAgent,
    HookSupport,
)
from server.jobs.hook_install import Handlers, HookEvent, hook_command

NAME = about.NAME
TIMEOUT_MS = 30_000  # Gemini CLI's per-request MCP timeout; its default is ten minutes
HOOK_EVENTS: tuple[HookEvent, ...] = tuple(
    (event, argument, timeout) for event, argument, timeout, _ in about.HOOKS
)
HOOKS_SINCE: Version = (0, 26, 0)
# The recall subagent (#67): ours when it holds RECALL_MARKER (after the frontmatter, which
# must come first). Gemini CLI names an MCP tool `mcp_<server>_<tool>`.
RECALL_FILE = Path("agents") / f"{recall_agent.NAME}.md"
RECALL_MARKER = "<!-- claude-memory: added by `claude-memory connect gemini` -->"
RECALL_FIELDS: dict[str, object] = {
    "name": recall_agent.NAME,
    "description": recall_agent.DESCRIPTION,
    "kind": "local",
    "tools": [f"mcp_{SERVER_NAME}_{tool}" for tool in recall_agent.TOOLS],
    "model": "flash",
    "max_turns": 12,
}


def handlers(url: str, python: str | None) -> Handlers:
    """Our handlers for Gemini CLI's events, each named so `/hooks disable` can find it."""
    return [
        (
            name,
            {
                "type": "command",
                "name": f"claude-memory-{event}",
                "command": hook_command(event, url, python, NAME),
                "timeout": timeout,
            },
        )
        for name, event, timeout in HOOK_EVENTS
    ]


def _edits(request: Connection, hook_url: str | None) -> list[Edit]:
    """settings.json: our `mcpServers` entry added, replaced or removed, and our hooks."""
    path = gemini_dir(request.environ, request.home) / "settings.json"
    entry: dict[str, Any] = {"httpUrl": request.url, "timeout": TIMEOUT_MS}
    if request.use_token:
        entry["headers"] = {"Authorization": BEARER_HEADER}
    old, data, updated = json_entry_edit(
        path, "mcpServers", SERVER_NAME, entry if request.url else None
    )
    updated = with_hooks(path, updated, handlers(hook_url, request.python) if hook_url else None)
    recall = gemini_dir(request.environ, request.home) / RECALL_FILE
    return [
        (path, old, old if updated == data else render_json(updated, old)),
        recall_agent.recall_edit(
            recall,
            RECALL_MARKER,
            recall_agent.markdown_agent(RECALL_FIELDS, RECALL_MARKER) if request.url else None,
        ),
    ]


def detect(environ: Mapping[str, str], home: Path, cwd: Path) -> Found:
    """Our `mcpServers` entry and our hooks in settings.json (doctor)."""
    found = Found()
    path = gemini_dir(environ, home) / "settings.json"
    fix = f"claude-memory connect {NAME} --url {{url}}"
    settings = read_json(path, found)
    ours = entry(settings, "mcpServers", SERVER_NAME)
    if ours is not None:
        url = entry_url(ours.get("httpUrl") or ours.get("url"))
        found.routes.append(Route("MCP entry", "mcp", path, url, fix, sends_token(ours)))
    found.routes.extend(hook_routes("hooks", path, settings, fix))
    if found.routes:
        found.notes.append(
            "doctor cannot see whether Gemini CLI trusts the folder you start it in: in an "
            "untrusted folder it starts no MCP server (trust it with /permissions)"
        )
    return found


FILES = FileAgent(
    name=NAME,
    label="Gemini CLI",
    program="gemini",
    edits=_edits,
    instructions_file=lambda request: (
        gemini_dir(request.environ, request.home) / about.INSTRUCTIONS_FILE
    ),
    hooks=HookSupport([name for name, _, _ in HOOK_EVENTS], HOOKS_SINCE),
    connect_notes=(
        "Gemini CLI loads MCP servers and hooks only in a folder you trusted: answer its trust "
        "question when it starts there, or run /permissions",
    ),
)


AGENT = configured_by_files(
    about,
    GEMINI,
    FILES,
    "add claude-memory and our hooks to ~/.gemini/settings.json and a recall subagent to "
    "~/.gemini/agents/",
    instructions_file=about.INSTRUCTIONS_FILE,
    detect=detect,
)
