"""GitHub Copilot CLI (@github/copilot): `connect` through its own files, as read from what
1.0.102 loads and writes.

- The MCP server: `mcpServers["claude-memory"]` in `$COPILOT_HOME/mcp-config.json` (default
  `~/.copilot/mcp-config.json`), the file `copilot mcp add` writes: `{"type": "http", "url":
  <server>/mcp, "tools": ["*"]}`, and with a token `headers.Authorization` set to
  `Bearer ${CLAUDE_MEMORY_TOKEN}`, which Copilot expands from its own environment when it
  connects (tests/integration/test_copilot.py sees the token arrive).
- Hooks: our own file, `$COPILOT_HOME/hooks/claude-memory.json` (Copilot loads every
  `hooks/*.json` there), the events and answers of server/agent_facts/copilot.py; a file of
  that name without our hook client in it is refused. `--no-hooks` leaves it out (and removes
  ours), and a Copilot older than the version checked gets the instructions block in
  `$COPILOT_HOME/copilot-instructions.md`, its personal instructions file (`copilot instruction
  list` shows it as "Home copilot-instructions.md"), instead.
- Recall (#67): a custom agent, `$COPILOT_HOME/agents/claude-memory-recall.agent.md` (Copilot
  loads `~/.copilot/agents/*.agent.md`; Markdown with YAML frontmatter): our read-only MCP
  tools only (`<server>/<tool>`), on the first available of the small models Copilot's own
  explore agent lists; Copilot runs a custom agent as a subagent in its own context, when its
  model judges it fits or when asked (`/agent`, `--agent`). Written with the MCP entry,
  removed with it.
- Sessions: `$COPILOT_HOME/session-state/<session id>/events.jsonl`, one event a line, read by
  server/ingest/copilot.py (`import --copilot`, and `--agents` when the folder exists).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from server.agent_facts import copilot as about
from server.agent_facts.copilot import copilot_home
from server.agents import recall_agent
from server.agents.detect import entry, entry_url, read_json, sends_token, url_argument
from server.agents.unit import Found, Route, configured_by_files
from server.ingest.copilot import COPILOT
from server.jobs.agent_files import (
    AgentFileError,
    json_entry_edit,
    render_json,
)
from server.jobs.agent_hooks import Version
from server.jobs.connect import (
    BEARER_HEADER,
    SERVER_NAME,
    Connection,
    Edit,
    FileAgent,
    HookSupport,
    read_text,
)
from server.jobs.hook_install import MARKERS, hook_command

NAME = about.NAME
HOOKS_FILE = Path("hooks") / "claude-memory.json"
HOOKS_SINCE: Version = (1, 0, 102)  # the version whose hook contract was checked
RECALL_FILE = Path("agents") / f"{recall_agent.NAME}.agent.md"
RECALL_MARKER = "<!-- claude-memory: added by `claude-memory connect copilot` -->"
RECALL_FIELDS: dict[str, object] = {
    "name": recall_agent.NAME,
    "description": recall_agent.DESCRIPTION,
    "tools": [f"{SERVER_NAME}/{tool}" for tool in recall_agent.TOOLS],
    # Tried in order, the first available wins (1.0.102's definitions/explore.agent.yaml).
    "model": ["gpt-5.6-luna", "gpt-5.4-mini"],
}


def _edits(request: Connection, hook_url: str | None) -> list[Edit]:
    """Our `mcpServers` entry in mcp-config.json, added, replaced or removed, and our hooks."""
    folder = copilot_home(request.environ, request.home)
    path = folder / "mcp-config.json"
    entry: dict[str, Any] = {"type": "http", "url": request.url, "tools": ["*"]}
    if request.use_token:
        entry["headers"] = {"Authorization": BEARER_HEADER}
    old, data, updated = json_entry_edit(
        path, "mcpServers", SERVER_NAME, entry if request.url else None
    )
    return [
        (path, old, old if updated == data else render_json(updated, old)),
        _hooks_edit(folder / HOOKS_FILE, hook_url, request.python),
        recall_agent.recall_edit(
            folder / RECALL_FILE,
            RECALL_MARKER,
            recall_agent.markdown_agent(RECALL_FIELDS, RECALL_MARKER) if request.url else None,
        ),
    ]


def _hooks_edit(path: Path, hook_url: str | None, python: str | None) -> Edit:
    """Our hooks file for `hook_url`, or none; a file of that name not running our client is
    refused."""
    old = read_text(path)
    if old and not any(marker in old for marker in MARKERS):
        raise AgentFileError(
            f"{path} is not ours (it does not run claude-memory's hook client); move it aside, "
            "nothing was changed"
        )
    if hook_url is None:
        return path, old, ""
    hooks = {
        name: [
            {
                "type": "command",
                "bash": hook_command(argument, hook_url, python, NAME),
                "timeoutSec": timeout,
            }
        ]
        for name, argument, timeout, _ in about.HOOKS
    }
    return path, old, json.dumps({"version": 1, "hooks": hooks}, indent=2) + "\n"


def detect(environ: Mapping[str, str], home: Path, cwd: Path) -> Found:
    """Our `mcpServers` entry in mcp-config.json and our hooks file (doctor)."""
    found = Found()
    path = copilot_home(environ, home) / "mcp-config.json"
    ours = entry(read_json(path, found), "mcpServers", SERVER_NAME)
    fix = f"claude-memory connect {NAME} --url {{url}}"
    if ours is not None:
        url = entry_url(ours.get("url"))
        found.routes.append(Route("MCP entry", "mcp", path, url, fix, sends_token(ours)))
    hooks_file = copilot_home(environ, home) / HOOKS_FILE
    for url in _hook_urls(read_json(hooks_file, found)):
        found.routes.append(Route("hooks", "hooks", hooks_file, url, fix))
    return found


def _hook_urls(hooks_file: dict[str, Any]) -> list[str]:
    """The `--url` our hooks file's commands call, distinct (one, unless it was edited)."""
    urls: list[str] = []
    events = hooks_file.get("hooks")
    for handlers in events.values() if isinstance(events, dict) else ():
        for handler in handlers if isinstance(handlers, list) else ():
            command = handler.get("bash") if isinstance(handler, dict) else None
            url = url_argument(command) if isinstance(command, str) else None
            if url is not None and url not in urls:
                urls.append(url)
    return urls


# Its personal instructions file, in $COPILOT_HOME: the repository's file's name.
HOME_FILE = Path(about.INSTRUCTIONS_FILE).name

FILES = FileAgent(
    name=NAME,
    label="Copilot CLI",
    program="copilot",
    edits=_edits,
    instructions_file=lambda request: copilot_home(request.environ, request.home) / HOME_FILE,
    hooks=HookSupport([name for name, _, _, _ in about.HOOKS], HOOKS_SINCE),
)


AGENT = configured_by_files(
    about,
    COPILOT,
    FILES,
    "add claude-memory to ~/.copilot/mcp-config.json and our hooks to "
    "~/.copilot/hooks/claude-memory.json and a recall agent to ~/.copilot/agents/",
    instructions_file=HOME_FILE,
    detect=detect,
)
