"""`claude-memory connect <agent>` / `disconnect <agent>`: registered by server/cli/main.py.

Prints one JSON line (what changed, the backup, the commands run) or, with `--plain`, a few
lines of text; a dry run with `--plain` prints the diff itself. A config that cannot be
changed safely prints one line on stderr and exits 1 with the file untouched.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import textwrap
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from server.agents.registry import AGENTS, connect, disconnect
from server.core.config import Settings
from server.core.errors import StartupError
from server.jobs.connect import AgentChange, ConnectError


def examples() -> str:
    """`connect --help`'s examples: what connect does for each agent, then the options."""
    lines = ["examples:"]
    for agent in AGENTS.values():
        lines.append(f"  claude-memory connect {agent.name}")
        lines += [f"      {line}" for line in textwrap.wrap(agent.connect_example, 80)]
    lines += [
        "  claude-memory connect <agent> --dry-run   show the change, write nothing",
        "  claude-memory connect <agent> --no-hooks  the MCP server only, no hooks",
        "  claude-memory connect <agent> --no-check  write the URL without asking the server",
        "  claude-memory disconnect <agent>          remove our entry and hooks, and only ours",
    ]
    return "\n".join(lines) + "\n"


def add_connect_commands(commands: Any) -> None:
    """Add `connect` and `disconnect` to `commands` (an argparse subparsers object)."""
    attach = commands.add_parser(
        "connect",
        help="register the MCP server with "
        + ", ".join(agent.label for agent in AGENTS.values())
        + " (backs up, keeps other entries)",
        description="Register this server in the agent's own configuration, over streamable "
        "HTTP (/mcp). The token, if the server has one, is read from CLAUDE_MEMORY_TOKEN in the "
        "agent's environment and never written to its files.",
        epilog=examples(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    attach.add_argument("agent", choices=list(AGENTS), help="which agent")
    attach.add_argument("--url", help="the server (default: the settings' host and port)")
    attach.add_argument(
        "--instructions",
        action="store_true",
        help="also add a short marked block on using the memory tools to the agent's "
        "instructions file ("
        + ", ".join(
            f"{agent.name}: {agent.instructions_file}"
            for agent in AGENTS.values()
            if agent.instructions_file
        )
        + "); an agent or version without hooks gets it anyway",
    )
    attach.add_argument(
        "--no-hooks",
        dest="hooks",
        action="store_false",
        help="register the MCP server only, without our hooks or, for an agent without hooks, "
        "the instructions block (and remove ours if an earlier connect added them)",
    )
    attach.add_argument(
        "--no-check",
        dest="check",
        action="store_false",
        help="write the URL without first checking that a claude-memory server answers there "
        "(connect refuses otherwise; a dry run never checks)",
    )
    detach = commands.add_parser(
        "disconnect",
        help="remove our MCP entry, hooks and instructions block, and only ours, from the agent",
    )
    detach.add_argument("agent", choices=list(AGENTS), help="which agent")
    for parser in (attach, detach):
        parser.add_argument("--dry-run", action="store_true", help="print the diff, write nothing")
        parser.add_argument("--plain", action="store_true", help="print text instead of JSON")
    attach.set_defaults(run=cmd_connect)
    detach.set_defaults(run=cmd_disconnect)


def default_url(settings: Settings) -> str:
    """The server's own address; a wildcard bind is reached on loopback."""
    host = "127.0.0.1" if settings.host in ("0.0.0.0", "::", "") else settings.host
    return f"http://[{host}]:{settings.port}" if ":" in host else f"http://{host}:{settings.port}"


def cmd_connect(args: argparse.Namespace, settings: Settings) -> int:
    url = (args.url or default_url(settings)).rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise StartupError(f"--url must be an http:// or https:// URL of the server, got {url!r}")
    try:
        change = connect(
            args.agent,
            url,
            use_token=settings.claude_memory_token is not None,
            environ=os.environ,
            home=Path.home(),
            now=datetime.now(tz=UTC),
            dry_run=args.dry_run,
            instructions=args.instructions,
            hooks=args.hooks,
            check=partial(require_server, settings=settings) if args.check else None,
        )
    except ConnectError as exc:
        raise StartupError(str(exc)) from None
    _report(change, args.plain)
    return 0


def require_server(url: str, settings: Settings) -> None:
    """Refuse (ConnectError) unless a claude-memory server answers at `url` and answers an
    authenticated read with the token the agent will send (CLAUDE_MEMORY_TOKEN, or none)."""
    from server.jobs.server_check import check_access, check_server, refusal, token_refusal

    check = check_server(url)
    if not check.ours:
        raise ConnectError(refusal(check))
    token = settings.claude_memory_token
    access = check_access(url, token.reveal() if token is not None else None)
    if access.refused:
        raise ConnectError(token_refusal(access))


def cmd_disconnect(args: argparse.Namespace, settings: Settings) -> int:
    try:
        change = disconnect(
            args.agent,
            environ=os.environ,
            home=Path.home(),
            now=datetime.now(tz=UTC),
            dry_run=args.dry_run,
        )
    except ConnectError as exc:
        raise StartupError(str(exc)) from None
    _report(change, args.plain)
    return 0


def summary(change: AgentChange) -> dict[str, Any]:
    """The JSON line: what changed, where, the backups and commands; diffs on a dry run."""
    files = []
    for file in change.files:
        entry: dict[str, Any] = {
            "path": str(file.path),
            "changed": file.changed,
            "backup": str(file.backup) if file.backup else None,
        }
        if change.dry_run:
            entry["diff"] = file.diff
        files.append(entry)
    return {
        "agent": change.agent,
        "action": change.action,
        "changed": change.changed,
        "dry_run": change.dry_run,
        "url": change.url,
        "transport": change.transport,
        "files": files,
        "commands": [shlex.join(command) for command in change.commands],
        "hooks": change.hooks,
        "agent_version": change.version,
        "notes": change.notes,
    }


def _report(change: AgentChange, plain: bool) -> None:
    if not plain:
        print(json.dumps(summary(change)))  # noqa: T201
        return
    verb = "would change" if change.dry_run else "changed"
    lines = []
    if change.dry_run:
        lines += [file.diff.rstrip("\n") for file in change.files if file.diff]
    for file in change.files:
        if file.changed:
            backup = f" (backup: {file.backup})" if file.backup else ""
            lines.append(f"{verb} {file.path}{backup}")
    lines += [
        f"{'would run' if change.dry_run else 'ran'}: {shlex.join(c)}" for c in change.commands
    ]
    if not change.changed:
        lines.append(f"{change.agent}: no change")
    elif change.url and not change.dry_run:
        lines.append(f"{change.agent}: connected to {change.url} (streamable HTTP)")
    if change.hooks:
        lines.append(f"{change.agent} hooks: {', '.join(change.hooks)}")
    elif change.action == "disconnect" and not change.dry_run:
        lines.append(f"{change.agent}: disconnected")
    lines += [f"note: {note}" for note in change.notes]
    print("\n".join(lines))  # noqa: T201
