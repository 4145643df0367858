"""GitHub Copilot CLI (@github/copilot): `connect` through its own files, as read from what
1.0.102 loads and writes.

- The MCP server: `mcpServers["claude-memory"]` in `$COPILOT_HOME/mcp-config.json` (default
  `~/.copilot/mcp-config.json`), the file `copilot mcp add` writes: `{"type": "http", "url":
  <server>/mcp, "tools": ["*"]}`, and with a token `headers.Authorization` set to
  `Bearer ${CLAUDE_MEMORY_TOKEN}`, which Copilot expands from its own environment when it
  connects (tests/integration/test_copilot.py sees the token arrive).
- Instructions: Copilot has command hooks (`$COPILOT_HOME/hooks/*.json`, or `hooks` in its
  settings) but connect installs none of ours yet, so it gets the instructions block in
  `$COPILOT_HOME/copilot-instructions.md`, its personal instructions file
  (`copilot instruction list` shows it as "Home copilot-instructions.md").
- Sessions: `$COPILOT_HOME/session-state/<session id>/events.jsonl`, one event a line
  (`session.start`, `user.message`, `assistant.turn_start`, ...); no reader yet, so `import`
  has no `--copilot`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from server.agents.about import copilot as about
from server.agents.unit import Found, Route, configured_by_files
from server.jobs.agent_files import (
    json_entry_edit,
    render_json,
)
from server.jobs.connect import BEARER_HEADER, SERVER_NAME, Connection, Edit, FileAgent
from server.jobs.detect import entry, entry_url, read_json

NAME = about.NAME


def copilot_home(environ: Mapping[str, str], home: Path) -> Path:
    """`$COPILOT_HOME`, else `~/.copilot`."""
    configured = environ.get("COPILOT_HOME")
    return Path(configured).expanduser() if configured else home / ".copilot"


def _edits(request: Connection, hook_url: str | None) -> list[Edit]:
    """Our `mcpServers` entry in mcp-config.json, added, replaced or removed."""
    path = copilot_home(request.environ, request.home) / "mcp-config.json"
    entry: dict[str, Any] = {"type": "http", "url": request.url, "tools": ["*"]}
    if request.use_token:
        entry["headers"] = {"Authorization": BEARER_HEADER}
    old, data, updated = json_entry_edit(
        path, "mcpServers", SERVER_NAME, entry if request.url else None
    )
    return [(path, old, old if updated == data else render_json(updated, old))]


def detect(environ: Mapping[str, str], home: Path, cwd: Path) -> Found:
    """Our `mcpServers` entry in mcp-config.json (doctor)."""
    found = Found()
    path = copilot_home(environ, home) / "mcp-config.json"
    ours = entry(read_json(path, found), "mcpServers", SERVER_NAME)
    if ours is not None:
        fix = f"claude-memory connect {NAME} --url {{url}}"
        found.routes.append(Route("MCP entry", "mcp", path, entry_url(ours.get("url")), fix))
    return found


FILES = FileAgent(
    name=NAME,
    label="Copilot CLI",
    program="copilot",
    edits=_edits,
    instructions_file=lambda request: (
        copilot_home(request.environ, request.home) / "copilot-instructions.md"
    ),
)


AGENT = configured_by_files(
    about,
    None,
    FILES,
    "add claude-memory to ~/.copilot/mcp-config.json and the memory instructions to "
    "~/.copilot/copilot-instructions.md",
    instructions_file="copilot-instructions.md",
    detect=detect,
)
