"""OpenCode (opencode-ai): its sessions (server/ingest/opencode.py) and `connect` through its
global configuration, as read from what opencode-ai 1.18.33 loads.

- The MCP server: `mcp["claude-memory"]` in OpenCode's global config, `$XDG_CONFIG_HOME/opencode`
  (default `~/.config/opencode`): the first of `opencode.jsonc`, `opencode.json` and
  `config.json` that exists (OpenCode loads them all and writes a bare `opencode.jsonc` on its
  first start), else a new `opencode.json`. The entry is `{"type": "remote", "url": <server>/mcp,
  "enabled": true, "oauth": false}`: streamable HTTP, with OAuth auto-detection off (a 401 would
  otherwise start a login flow). With a token, `headers.Authorization` is
  `Bearer {env:CLAUDE_MEMORY_TOKEN}`, which OpenCode fills in from its environment when it loads
  the file. A file with comments cannot be rewritten safely and is refused with the entry to add
  by hand.
- Hooks: OpenCode has no command hooks; its events reach JavaScript plugins, loaded from
  `plugins/*.js` in the same folder. connect writes ours there, `plugins/claude-memory.js`
  (opencode_plugin.js with the server's URL; marked as ours on its first line, which is how
  disconnect and a later connect know it): startup context and prompt recall added to the newest
  prompt before each model call (`experimental.chat.messages.transform`, in the request only),
  lessons before a tool call (`tool.execute.before`; a strict one stops the call) appended to its
  result (`tool.execute.after`), and the session imported when it goes idle (`session.idle`).
  Its tool calls reach the journal with that import. `--no-hooks` leaves the plugin out (and
  removes ours).
- Recall (#67): a subagent, `agents/claude-memory-recall.md` in the same folder (`mode:
  subagent`, edits, shell, web and further subagents denied, the caller's model; the
  instructions of server/agents/recall_agent.py), that searches memory in its own context and
  answers citing #ids; written with the MCP entry, removed with it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from server.agent_facts import opencode as about
from server.agents import recall_agent
from server.agents.detect import entry, entry_url, read_json, sends_token
from server.agents.unit import Found, Route, configured_by_files
from server.ingest.opencode import OPENCODE
from server.jobs.agent_files import (
    AgentFileError,
    json_entry_edit,
    render_json,
)
from server.jobs.connect import (
    SERVER_NAME,
    TOKEN_VARIABLE,
    Connection,
    Edit,
    FileAgent,
    HookSupport,
    read_text,
)

NAME = about.NAME
CONFIG_FILES = ("opencode.jsonc", "opencode.json", "config.json")  # OpenCode's own order
NEW_CONFIG = "opencode.json"
PLUGIN = Path(__file__).with_name("opencode_plugin.js")
PLUGIN_FILE = Path("plugins") / "claude-memory.js"
PLUGIN_MARKER = "// claude-memory: added by `claude-memory connect opencode`"
URL_SLOT = '"__CLAUDE_MEMORY_URL__"'  # the template's string, replaced by a JSON string
# The recall subagent (#67): searches in its own context and answers citing #ids. Ours when it
# holds RECALL_MARKER (its first line is the frontmatter's, so the marker follows it).
RECALL_FILE = Path("agents") / f"{recall_agent.NAME}.md"
RECALL_FIELDS: dict[str, object] = {
    "description": recall_agent.DESCRIPTION,
    "mode": "subagent",
    "permission": {"edit": "deny", "bash": "deny", "webfetch": "deny", "task": "deny"},
}
RECALL_MARKER = "<!-- claude-memory: added by `claude-memory connect opencode` -->"
# The plugin events ours answers (checked against 1.18.33; plugins came with 1.x's config).
PLUGIN_EVENTS = [
    "experimental.chat.messages.transform",
    "tool.execute.before",
    "tool.execute.after",
    "session.idle",
]
PLUGINS_SINCE = (1, 0, 0)


def config_dir(environ: Mapping[str, str], home: Path) -> Path:
    """`$XDG_CONFIG_HOME/opencode`, else `~/.config/opencode`."""
    configured = environ.get("XDG_CONFIG_HOME")
    return (Path(configured).expanduser() if configured else home / ".config") / "opencode"


def config_file(environ: Mapping[str, str], home: Path) -> Path:
    """The global config file OpenCode would update: the first that exists, else a new one."""
    folder = config_dir(environ, home)
    return next(
        (folder / name for name in CONFIG_FILES if (folder / name).is_file()), folder / NEW_CONFIG
    )


def _edits(request: Connection, hook_url: str | None) -> list[Edit]:
    """Our `mcp` entry in the global config, added, replaced or removed."""
    path = config_file(request.environ, request.home)
    entry: dict[str, Any] = {"type": "remote", "url": request.url, "enabled": True, "oauth": False}
    if request.use_token:
        entry["headers"] = {"Authorization": f"Bearer {{env:{TOKEN_VARIABLE}}}"}
    old, data, updated = json_entry_edit(path, "mcp", SERVER_NAME, entry if request.url else None)
    folder = config_dir(request.environ, request.home)
    return [
        (path, old, old if updated == data else render_json(updated, old)),
        _plugin_edit(folder / PLUGIN_FILE, hook_url),
        recall_agent.recall_edit(
            folder / RECALL_FILE,
            RECALL_MARKER,
            recall_agent.markdown_agent(RECALL_FIELDS, RECALL_MARKER) if request.url else None,
        ),
    ]


def _plugin_edit(path: Path, hook_url: str | None) -> Edit:
    """Our plugin file for `hook_url`, or none; a file there that is not ours is refused."""
    old = read_text(path)
    if old and not old.startswith(PLUGIN_MARKER):
        raise AgentFileError(
            f"{path} is not ours (its first line is not our marker); move it aside, nothing was "
            "changed"
        )
    if hook_url is None:
        return path, old, ""
    return path, old, PLUGIN.read_text(encoding="utf-8").replace(URL_SLOT, json.dumps(hook_url))


def detect(environ: Mapping[str, str], home: Path, cwd: Path) -> Found:
    """Our `mcp` entry in the global config and our plugin's URL (doctor)."""
    found = Found()
    path = config_file(environ, home)
    fix = f"claude-memory connect {NAME} --url {{url}}"
    ours = entry(read_json(path, found), "mcp", SERVER_NAME)
    if ours is not None:
        url = entry_url(ours.get("url"))
        found.routes.append(Route("MCP entry", "mcp", path, url, fix, sends_token(ours)))
    plugin = config_dir(environ, home) / PLUGIN_FILE
    text = plugin.read_text(encoding="utf-8") if plugin.is_file() else ""
    written = _SERVER_LINE.search(text) if text.startswith(PLUGIN_MARKER) else None
    if written is not None:
        url = entry_url(json.loads(written.group(1)))
        found.routes.append(Route("plugin (hooks)", "hooks", plugin, url, fix))
    return found


# The line of opencode_plugin.js that connect fills with the server's URL.
_SERVER_LINE = re.compile(r'^const SERVER = ("(?:[^"\\]|\\.)*");$', re.M)


FILES = FileAgent(
    name=NAME,
    label="OpenCode",
    program="opencode",
    edits=_edits,
    instructions_file=lambda request: (
        config_dir(request.environ, request.home) / about.INSTRUCTIONS_FILE
    ),
    hooks=HookSupport(PLUGIN_EVENTS, PLUGINS_SINCE),
)


AGENT = configured_by_files(
    about,
    OPENCODE,
    FILES,
    "add claude-memory to ~/.config/opencode/opencode.json, our plugin to "
    "~/.config/opencode/plugins/ and a recall subagent to ~/.config/opencode/agents/",
    instructions_file=about.INSTRUCTIONS_FILE,
    detect=detect,
)
