"""Codex CLI: its sessions (server/ingest/codex.py), `connect` through its own files, and our
hooks in them.

- The MCP server: a `[mcp_servers.claude-memory]` table in `$CODEX_HOME/config.toml` (default
  `~/.codex/config.toml`) with `url` (Codex has no legacy SSE client), and
  `bearer_token_env_var = "CLAUDE_MEMORY_TOKEN"` when the server has a token, so Codex reads
  the token from its own environment.
- Hooks in `$CODEX_HOME/hooks.json` (codex-rs/hooks/src/engine/discovery.rs): they came in
  0.114.0 behind `[features] codex_hooks = true`, the key became `hooks` in 0.130.0, and they
  are on by default since openai/codex#19012 (April 2026). A hook from the user's own files
  runs only once the user has trusted it in Codex's `/hooks`; Codex keeps the trusted hash in
  config.toml, and a changed command (another URL) needs trusting again. Codex calls tools by
  Claude Code's hook names and event names; timeouts in seconds, SessionEnd clamped to 3 s. Its
  PostToolUse stays synchronous: `codex exec` may end before a background hook has journaled
  the call.
- A version without hooks gets the instructions block in `$CODEX_HOME/AGENTS.md` instead.
- Recall (#67): an agent role, `$CODEX_HOME/agents/claude-memory-recall.toml` (Codex 0.169
  reads `agents/*.toml` roles: `name`, `description`, `developer_instructions`, and config keys
  such as `model_reasoning_effort` and `sandbox_mode`), spawned as a subagent in its own
  thread; Codex spawns one only when the user asks for it ("ask claude-memory-recall ...").
  No model is pinned (Codex's model names depend on the login); low reasoning effort and a
  read-only sandbox. Written with the MCP table, removed with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from server.agent_facts import codex as about
from server.agent_facts.codex import codex_home
from server.agents import recall_agent
from server.agents.detect import (
    entry,
    entry_url,
    hook_routes,
    read_json,
    read_toml,
    sends_token,
)
from server.agents.unit import Found, Route, configured_by_files
from server.ingest.codex import CODEX
from server.jobs.agent_files import (
    read_json_object,
    render_json,
    toml_with_table,
    toml_without_table,
)
from server.jobs.agent_hooks import Version, shown, with_hooks
from server.jobs.connect import (
    SERVER_NAME,
    TOKEN_VARIABLE,
    Connection,
    Edit,
    FileAgent,
    HookSupport,
    read_text,
)
from server.jobs.hook_install import Handlers, HookEvent, hook_command

NAME = about.NAME
MARKER = "# claude-memory: added by `claude-memory connect codex`; `disconnect` removes it"
HOOK_EVENTS: tuple[HookEvent, ...] = tuple(
    (event, argument, timeout) for event, argument, timeout, _ in about.HOOKS
)
HOOKS_SINCE: Version = (0, 114, 0)
HOOKS_KEY_SINCE: Version = (0, 130, 0)  # `[features] hooks`; `codex_hooks` before
RECALL_FILE = Path("agents") / f"{recall_agent.NAME}.toml"
RECALL_FIELDS = {
    "name": recall_agent.NAME,
    "description": recall_agent.DESCRIPTION,
    "model_reasoning_effort": "low",
    "sandbox_mode": "read-only",
}


def handlers(url: str, python: str | None) -> Handlers:
    """Our handlers for Codex's events, in the shape its hooks.json reads."""
    return [
        (name, {"type": "command", "command": hook_command(event, url, python, NAME), "timeout": t})
        for name, event, t in HOOK_EVENTS
    ]


def hooks_json(path: Path, url: str | None, python: str | None) -> tuple[str, str]:
    """(old text, new text) of Codex's hooks.json with our hooks for `url`, or without them.

    Codex refuses any top-level key but `hooks` and `description`, so only `hooks` changes; a
    file left with no hooks at all is removed (its backup keeps it).
    """
    hint = "Fix the file (or move it aside), then run connect again."
    old, data = read_json_object(path, hint if url else "Remove our hooks by hand.")
    updated = with_hooks(path, data, handlers(url, python) if url else None)
    if updated == data:
        return old, old
    if not updated or updated == {"hooks": {}}:
        return old, ""
    return old, render_json(updated, old)


def _edits(request: Connection, hook_url: str | None) -> list[Edit]:
    """Our table in config.toml (removed without a URL) and our hooks in hooks.json."""
    folder = codex_home(request.environ, request.home)
    config = folder / "config.toml"
    old = read_text(config)
    if request.url is None:
        new = toml_without_table(old, config, "mcp_servers", SERVER_NAME, MARKER)
    else:
        values = {"url": request.url}
        if request.use_token:
            values["bearer_token_env_var"] = TOKEN_VARIABLE
        new = toml_with_table(old, config, "mcp_servers", SERVER_NAME, values, MARKER)
    hooks = folder / "hooks.json"
    recall = recall_agent.recall_edit(
        folder / RECALL_FILE,
        MARKER,
        recall_agent.toml_agent(RECALL_FIELDS, MARKER) if request.url else None,
    )
    return [(config, old, new), (hooks, *hooks_json(hooks, hook_url, request.python)), recall]


def _notes(version: Version | None) -> list[str]:
    said = [
        "Codex runs new hooks only once you trust them: open /hooks in Codex and trust the "
        "claude-memory hooks (again after connecting to another URL)"
    ]
    if version is not None and version < HOOKS_KEY_SINCE:
        said.append(
            f"Codex {shown(version)} may have hooks turned off: add `codex_hooks = true` "
            "under [features] in config.toml"
        )
    return said


def detect(environ: Mapping[str, str], home: Path, cwd: Path) -> Found:
    """Our table in config.toml and our hooks in hooks.json (doctor)."""
    found = Found()
    folder = codex_home(environ, home)
    fix = f"claude-memory connect {NAME} --url {{url}}"
    table = entry(read_toml(folder / "config.toml", found), "mcp_servers", SERVER_NAME)
    if table is not None:
        url = entry_url(table.get("url"))
        found.routes.append(
            Route("MCP entry", "mcp", folder / "config.toml", url, fix, sends_token(table))
        )
    hooks = folder / "hooks.json"
    found.routes.extend(hook_routes("hooks", hooks, read_json(hooks, found), fix))
    if found.routes:
        found.notes.append(
            "doctor cannot see whether Codex trusts our hooks: a new or changed hook runs only "
            "once trusted in Codex's /hooks"
        )
    return found


FILES = FileAgent(
    name=NAME,
    label="Codex",
    program="codex",
    edits=_edits,
    instructions_file=lambda request: (
        codex_home(request.environ, request.home) / about.INSTRUCTIONS_FILE
    ),
    hooks=HookSupport([name for name, _, _ in HOOK_EVENTS], HOOKS_SINCE, _notes),
)


AGENT = configured_by_files(
    about,
    CODEX,
    FILES,
    "add claude-memory to ~/.codex/config.toml and our hooks to "
    "~/.codex/hooks.json (trust them in /hooks) and a recall agent to ~/.codex/agents/",
    instructions_file=about.INSTRUCTIONS_FILE,
    detect=detect,
)
