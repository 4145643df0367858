"""Claude Code: its sessions (server/ingest/claude_code.py), `connect` through its own
`claude mcp` commands, and its hooks (`install-hooks`, server/jobs/hook_install.py).

`connect claude-code` runs `claude mcp add --scope user --transport http` with, when the server
needs a token, an `Authorization: Bearer ${CLAUDE_MEMORY_TOKEN}` header that Claude Code
expands when it loads; without `claude` on the PATH it prints the commands to run instead.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from server.agents.about import claude_code as about
from server.agents.unit import Agent
from server.ingest.claude_code import CLAUDE_CODE
from server.jobs.agent_files import AgentFileError, back_up, read_json_object, unified_diff
from server.jobs.connect import (
    BEARER_HEADER,
    SERVER_NAME,
    AgentChange,
    ConnectError,
    Connection,
    FileChange,
    result,
    token_note,
)

NAME = about.NAME


def claude_config_file(environ: Mapping[str, str], home: Path) -> Path:
    """Where `claude mcp add --scope user` writes: `$CLAUDE_CONFIG_DIR/.claude.json` or `~/`."""
    configured = environ.get("CLAUDE_CONFIG_DIR")
    return (Path(configured).expanduser() if configured else home) / ".claude.json"


def connect(request: Connection) -> AgentChange:
    notes = [token_note("claude")] if request.use_token else []
    if request.instructions:
        notes.append("--instructions is for agents without hooks; Claude Code has hooks")
    return _through_claude(request, "connect", notes)


def disconnect(request: Connection) -> AgentChange:
    return _through_claude(request, "disconnect", [])


def _through_claude(
    request: Connection, action: Literal["connect", "disconnect"], notes: list[str]
) -> AgentChange:
    """Claude Code's user scope, through its own `claude mcp` commands."""
    config = claude_config_file(request.environ, request.home)
    try:
        _, data = read_json_object(config, "Claude Code could not read it either.")
    except AgentFileError as exc:
        raise ConnectError(str(exc)) from None
    servers = data.get("mcpServers")
    current = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    url = request.url if action == "connect" else None
    wanted: dict[str, Any] | None = None
    if url is not None:
        wanted = {"type": "http", "url": url}
        if request.use_token:
            wanted["headers"] = {"Authorization": BEARER_HEADER}
    if current == wanted:
        return result(NAME, action, request, [], [], notes)
    commands = []
    if current is not None:
        commands.append(["claude", "mcp", "remove", SERVER_NAME, "--scope", "user"])
    if url is not None:
        add = ["claude", "mcp", "add", "--scope", "user", "--transport", "http", SERVER_NAME, url]
        # After the URL: --header takes several values and would swallow the name and URL.
        commands.append(
            add + (["--header", f"Authorization: {BEARER_HEADER}"] if request.use_token else [])
        )
    entry_diff = unified_diff(
        Path(f"{config} mcpServers.{SERVER_NAME}"), _entry_text(current), _entry_text(wanted)
    )
    claude = shutil.which("claude", path=request.environ.get("PATH"))
    if request.dry_run:
        if claude is None:
            notes.append("the `claude` command is not on PATH: run these commands yourself")
        file = FileChange(config, True, None, entry_diff)
        return result(NAME, action, request, [file], commands, notes)
    if claude is None:
        raise ConnectError(
            "the `claude` command is not on PATH; run: "
            + " && ".join(shlex.join(command) for command in commands)
        )
    backup = back_up(config, request.now)
    for command in commands:
        completed = subprocess.run(
            [claude, *command[1:]],
            env=dict(request.environ),
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
    return result(NAME, action, request, [file], commands, notes)


def _entry_text(entry: dict[str, Any] | None) -> str:
    return "" if entry is None else json.dumps(entry, indent=2) + "\n"


AGENT = Agent(
    about=about,
    format=CLAUDE_CODE,
    connect=connect,
    disconnect=disconnect,
    connect_example="run `claude mcp add --scope user --transport http`",
)
