"""`claude-memory connect` / `disconnect`: register our MCP server in another agent's own config.

All three agents speak streamable HTTP, so each gets `<server>/mcp` (Codex has no legacy SSE
client at all; Gemini CLI's `httpUrl` is streamable HTTP, its `url` would be SSE):
- **codex**: a `[mcp_servers.claude-memory]` table in `$CODEX_HOME/config.toml` (default
  `~/.codex/config.toml`) with `url`, and `bearer_token_env_var = "CLAUDE_MEMORY_TOKEN"` when the
  server has a token, so Codex reads the token from its own environment.
- **gemini**: `mcpServers["claude-memory"]` in `$GEMINI_CLI_HOME/.gemini/settings.json` (default
  `~/.gemini/settings.json`) with `httpUrl`, `timeout` (ms) and, with a token, an
  `Authorization: Bearer ${CLAUDE_MEMORY_TOKEN}` header that Gemini CLI expands when it loads.
- **claude-code**: `claude mcp add --scope user --transport http` (same header form, which
  Claude Code expands too), or the command to run when `claude` is not on PATH.

Codex and Gemini CLI also get our hooks (server/hooks.py; agent_hooks.py says which versions
have them): Codex in `$CODEX_HOME/hooks.json`, Gemini CLI under `hooks` in the same
settings.json, marked as ours by their command. `hooks=False` (`--no-hooks`) leaves them out and
takes out any an earlier connect wrote. A version without hooks gets the instructions block in
AGENTS.md / GEMINI.md instead, as `--instructions` writes it.

The token itself is never written anywhere. Running connect twice changes nothing the second
time; disconnect removes our entry, our hooks and our marked block in AGENTS.md / GEMINI.md, and
nothing else. Every write backs the file up first.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from server.jobs import agent_hooks
from server.jobs.agent_files import (
    AgentFileError,
    back_up,
    read_json_object,
    remove_with_backup,
    render_json,
    toml_with_table,
    toml_without_table,
    unified_diff,
    with_block,
    with_json_entry,
    without_block,
    without_json_entry,
    write_with_backup,
)

AGENT_NAMES = ("claude-code", "codex", "gemini")
SERVER_NAME = "claude-memory"
TOKEN_VARIABLE = "CLAUDE_MEMORY_TOKEN"
BEARER_HEADER = f"Bearer ${{{TOKEN_VARIABLE}}}"
TRANSPORT = "streamable-http"
# Gemini CLI's per-request MCP timeout (ms); its default is ten minutes.
GEMINI_TIMEOUT_MS = 30_000
CODEX_MARKER = "# claude-memory: added by `claude-memory connect codex`; `disconnect` removes it"
BLOCK_START = "<!-- claude-memory:start"
BLOCK_END = "<!-- claude-memory:end -->"
INSTRUCTIONS = f"""{BLOCK_START} (added by `claude-memory connect`; `disconnect` removes it) -->
## Memory
- At the start of every session, call `startup_context` (with the project name) from the
  claude-memory MCP server and follow the preferences it lists.
- Before working on a topic, call `hybrid_search` for earlier decisions and root causes.
- When a decision is settled, a root cause found, or the user corrects you, call `save_memory`
  with a short, self-contained statement.
{BLOCK_END}
"""


Edit = tuple[Path, str, str]  # a file, its text now, its text to be


class ConnectError(Exception):
    """The agent cannot be connected or disconnected safely; the message says what to do."""


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file connect changed (or would change): the backup it made and the diff."""

    path: Path
    changed: bool
    backup: Path | None
    diff: str


@dataclass(frozen=True, slots=True)
class AgentChange:
    """What connect or disconnect did for one agent, or would do on a dry run."""

    agent: str
    action: Literal["connect", "disconnect"]
    changed: bool
    dry_run: bool
    url: str | None
    transport: str | None
    files: list[FileChange] = field(default_factory=list)
    commands: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    hooks: list[str] = field(default_factory=list)  # the agent's events our hooks answer
    version: str | None = None  # of the agent's CLI, when it was on the PATH


def mcp_url(base_url: str) -> str:
    """The streamable HTTP endpoint of the server at `base_url` (a base or an /mcp, /sse URL)."""
    base = base_url.rstrip("/")
    for suffix in ("/mcp", "/sse"):
        base = base.removesuffix(suffix)
    return f"{base}/mcp"


def codex_home(environ: Mapping[str, str], home: Path) -> Path:
    """`$CODEX_HOME`, else `~/.codex`."""
    configured = environ.get("CODEX_HOME")
    return Path(configured).expanduser() if configured else home / ".codex"


def gemini_dir(environ: Mapping[str, str], home: Path) -> Path:
    """`$GEMINI_CLI_HOME/.gemini`, else `~/.gemini` (gemini-cli's Storage.getGlobalGeminiDir)."""
    configured = environ.get("GEMINI_CLI_HOME")
    return (Path(configured).expanduser() if configured else home) / ".gemini"


def claude_config_file(environ: Mapping[str, str], home: Path) -> Path:
    """Where `claude mcp add --scope user` writes: `$CLAUDE_CONFIG_DIR/.claude.json` or `~/`."""
    configured = environ.get("CLAUDE_CONFIG_DIR")
    return (Path(configured).expanduser() if configured else home) / ".claude.json"


def connect(
    agent: str,
    base_url: str,
    *,
    use_token: bool,
    environ: Mapping[str, str],
    home: Path,
    now: datetime,
    dry_run: bool = False,
    instructions: bool = False,
    hooks: bool = True,
    python: str | None = None,
) -> AgentChange:
    """Register the server at `base_url` with `agent`; `use_token` when the server needs one.

    Codex and Gemini CLI also get our hooks (unless `hooks` is False), run by `python` (this
    interpreter by default); a version without hooks gets the instructions block instead.
    """
    url = mcp_url(base_url)
    notes = [_token_note(agent)] if use_token else []
    try:
        if agent == "claude-code":
            if instructions:
                notes.append("--instructions is for codex and gemini; Claude Code has hooks")
            return _claude_code(environ, home, now, dry_run, url, use_token, notes)
        if agent not in ("codex", "gemini"):
            raise ConnectError(f"unknown agent {agent!r}; choose one of {', '.join(AGENT_NAMES)}")
        version = agent_hooks.installed_version(agent, environ)
        supported = agent_hooks.has_hooks(agent, version)
        hook_url = url.removesuffix("/mcp") if hooks and supported else None
        if hook_url is not None and not hook_url.startswith("http://"):
            notes.append("the hooks speak plain http:// only, so none were installed")
            hook_url = None
        if agent == "codex":
            edits = [
                _edit_codex(environ, home, url, use_token),
                _edit_codex_hooks(environ, home, hook_url, python),
            ]
            block = codex_home(environ, home) / "AGENTS.md"
        else:
            edits = [_edit_gemini(environ, home, url, use_token, hook_url, python)]
            block = gemini_dir(environ, home) / "GEMINI.md"
        if instructions or (hooks and not supported):
            edits.append(_edit_block(block))
        if hooks:
            notes += agent_hooks.notes(agent, version, installed=hook_url is not None)
        files = _apply_all(edits, now, dry_run)
    except AgentFileError as exc:
        raise ConnectError(str(exc)) from None
    return replace(
        _result(agent, "connect", dry_run, url, files, [], notes),
        hooks=agent_hooks.events(agent) if hook_url else [],
        version=agent_hooks.shown(version) if version else None,
    )


def disconnect(
    agent: str,
    *,
    environ: Mapping[str, str],
    home: Path,
    now: datetime,
    dry_run: bool = False,
) -> AgentChange:
    """Remove our entry, our hooks and our instructions block from `agent`'s config, only those."""
    try:
        if agent == "codex":
            edits = [
                _edit_codex(environ, home, None, False),
                _edit_codex_hooks(environ, home, None, None),
                _edit_block(codex_home(environ, home) / "AGENTS.md", remove=True),
            ]
            files = _apply_all(edits, now, dry_run)
            return _result(agent, "disconnect", dry_run, None, files, [], [])
        if agent == "gemini":
            edits = [
                _edit_gemini(environ, home, None, False, None, None),
                _edit_block(gemini_dir(environ, home) / "GEMINI.md", remove=True),
            ]
            files = _apply_all(edits, now, dry_run)
            return _result(agent, "disconnect", dry_run, None, files, [], [])
        if agent == "claude-code":
            return _claude_code(environ, home, now, dry_run, None, False, [])
    except AgentFileError as exc:
        raise ConnectError(str(exc)) from None
    raise ConnectError(f"unknown agent {agent!r}; choose one of {', '.join(AGENT_NAMES)}")


def _token_note(agent: str) -> str:
    program = {"claude-code": "claude"}.get(agent, agent)
    return (
        f"the server needs its token: {program} reads it from {TOKEN_VARIABLE} in its own "
        f"environment, so export {TOKEN_VARIABLE} where you start {program} (it is not written "
        "to any file)"
    )


def _result(
    agent: str,
    action: Literal["connect", "disconnect"],
    dry_run: bool,
    url: str | None,
    files: list[FileChange],
    commands: list[list[str]],
    notes: list[str],
) -> AgentChange:
    return AgentChange(
        agent=agent,
        action=action,
        changed=any(f.changed for f in files) or bool(commands),
        dry_run=dry_run,
        url=url,
        transport=TRANSPORT if url else None,
        files=[f for f in files if f.changed or f.path.exists()],
        commands=commands,
        notes=notes,
    )


def _apply_all(edits: list[Edit], now: datetime, dry_run: bool) -> list[FileChange]:
    """Write the planned edits: all are planned first, so a refusal leaves every file as it was."""
    return [_apply(path, old, new, now, dry_run) for path, old, new in edits]


def _apply(path: Path, old: str, new: str, now: datetime, dry_run: bool) -> FileChange:
    if new == old:
        return FileChange(path, False, None, "")
    diff = unified_diff(path, old, new)
    if dry_run:
        return FileChange(path, True, None, diff)
    if not new:
        # Only our entry was in it: leave no empty file behind (the backup keeps the old one).
        return FileChange(path, True, remove_with_backup(path, now), diff)
    return FileChange(path, True, write_with_backup(path, new, now), diff)


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except OSError as exc:
        raise AgentFileError(f"cannot read {path}: {exc.strerror}") from None


def _edit_codex(environ: Mapping[str, str], home: Path, url: str | None, use_token: bool) -> Edit:
    """Our table in Codex's config.toml, added or replaced (`url`), or removed (None)."""
    path = codex_home(environ, home) / "config.toml"
    old = _read_text(path)
    if url is None:
        new = toml_without_table(old, path, "mcp_servers", SERVER_NAME, CODEX_MARKER)
    else:
        values = {"url": url}
        if use_token:
            values["bearer_token_env_var"] = TOKEN_VARIABLE
        new = toml_with_table(old, path, "mcp_servers", SERVER_NAME, values, CODEX_MARKER)
    return path, old, new


def _edit_codex_hooks(
    environ: Mapping[str, str], home: Path, hook_url: str | None, python: str | None
) -> Edit:
    """Our hooks in Codex's hooks.json, added or replaced (`hook_url`), or removed (None)."""
    path = codex_home(environ, home) / "hooks.json"
    old, new = agent_hooks.codex_hooks_json(path, hook_url, python)
    return path, old, new


def _edit_gemini(
    environ: Mapping[str, str],
    home: Path,
    url: str | None,
    use_token: bool,
    hook_url: str | None,
    python: str | None,
) -> Edit:
    """Gemini CLI's settings.json: our `mcpServers` entry added or replaced, or removed (`url`
    None), and our hooks for `hook_url`, or none."""
    path = gemini_dir(environ, home) / "settings.json"
    entry: dict[str, Any] = {"httpUrl": url, "timeout": GEMINI_TIMEOUT_MS}
    if use_token:
        entry["headers"] = {"Authorization": BEARER_HEADER}
    hint = f"Add this under mcpServers by hand: {json.dumps({SERVER_NAME: entry})}"
    old, data = read_json_object(path, hint if url else "Remove mcpServers.claude-memory by hand.")
    if url is None:
        updated = without_json_entry(data, path, "mcpServers", SERVER_NAME)
    else:
        updated = with_json_entry(data, path, "mcpServers", SERVER_NAME, entry)
    updated = agent_hooks.with_hooks_for("gemini", path, updated, hook_url, python)
    new = old if updated == data else render_json(updated, old)
    return path, old, new


def _edit_block(path: Path, remove: bool = False) -> Edit:
    """Our marked block in an instructions file (AGENTS.md, GEMINI.md), added or removed."""
    old = _read_text(path)
    if remove:
        new = without_block(old, path, BLOCK_START, BLOCK_END)
    else:
        new = with_block(old, path, INSTRUCTIONS, BLOCK_START, BLOCK_END)
    return path, old, new


def _claude_code(
    environ: Mapping[str, str],
    home: Path,
    now: datetime,
    dry_run: bool,
    url: str | None,
    use_token: bool,
    notes: list[str],
) -> AgentChange:
    """Claude Code's user scope, through its own `claude mcp` commands."""
    config = claude_config_file(environ, home)
    _, data = read_json_object(config, "Claude Code could not read it either.")
    servers = data.get("mcpServers")
    current = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    wanted: dict[str, Any] | None = None
    if url is not None:
        wanted = {"type": "http", "url": url}
        if use_token:
            wanted["headers"] = {"Authorization": BEARER_HEADER}
    action: Literal["connect", "disconnect"] = "disconnect" if url is None else "connect"
    if current == wanted:
        return _result("claude-code", action, dry_run, url, [], [], notes)
    commands = []
    if current is not None:
        commands.append(["claude", "mcp", "remove", SERVER_NAME, "--scope", "user"])
    if url is not None:
        add = ["claude", "mcp", "add", "--scope", "user", "--transport", "http", SERVER_NAME, url]
        # After the URL: --header takes several values and would swallow the name and URL.
        commands.append(
            add + (["--header", f"Authorization: {BEARER_HEADER}"] if use_token else [])
        )
    entry_diff = unified_diff(
        Path(f"{config} mcpServers.{SERVER_NAME}"),
        _entry_text(current),
        _entry_text(wanted),
    )
    claude = shutil.which("claude", path=environ.get("PATH"))
    if dry_run:
        if claude is None:
            notes.append("the `claude` command is not on PATH: run these commands yourself")
        file = FileChange(config, True, None, entry_diff)
        return _result("claude-code", action, dry_run, url, [file], commands, notes)
    if claude is None:
        raise ConnectError(
            "the `claude` command is not on PATH; run: "
            + " && ".join(shlex.join(command) for command in commands)
        )
    backup = back_up(config, now)
    for command in commands:
        completed = subprocess.run(
            [claude, *command[1:]],
            env=dict(environ),
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        if completed.returncode != 0:
            output = (completed.stderr or completed.stdout).strip().splitlines()
            raise ConnectError(
                f"`{shlex.join(command)}` failed: {output[-1] if output else 'no output'}"
                + (f" (backup of {config}: {backup})" if backup else "")
            )
    file = FileChange(config, True, backup, entry_diff)
    return _result("claude-code", action, dry_run, url, [file], commands, notes)


def _entry_text(entry: dict[str, Any] | None) -> str:
    return "" if entry is None else json.dumps(entry, indent=2) + "\n"
