"""`claude-memory connect` / `disconnect`: the machinery every agent's writer shares.

Each agent's own writer (server/agents/<agent>.py) says which files of the agent change and
how; this module holds what they have in common: the request (`Connection`), the result
(`AgentChange`), the instructions block, applying planned edits with backups, and the flow of
an agent configured through files (`connect_by_files`): ask the agent's CLI for its version,
install our hooks where that version has them, else write the instructions block.

The rules every writer keeps: the server is registered over streamable HTTP (`<server>/mcp`);
the token itself is never written anywhere (the agent reads `CLAUDE_MEMORY_TOKEN` from its own
environment); running connect twice changes nothing the second time; disconnect removes our
entry, our hooks and our marked block, and nothing else; every write first copies the old
file into the data dir (`<data dir>/backups/agent-files/`, never beside it),
and all edits are planned before any is written, so a refusal leaves every file as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Literal

from server.core.config import data_home
from server.jobs import agent_hooks
from server.jobs.agent_files import (
    AgentFileError,
    backups_folder,
    remove_with_backup,
    unified_diff,
    with_block,
    without_block,
    write_with_backup,
)

SERVER_NAME = "claude-memory"
TOKEN_VARIABLE = "CLAUDE_MEMORY_TOKEN"
BEARER_HEADER = f"Bearer ${{{TOKEN_VARIABLE}}}"
TRANSPORT = "streamable-http"
BLOCK_START = "<!-- claude-memory:start"
BLOCK_END = "<!-- claude-memory:end -->"
INSTRUCTIONS = f"""{BLOCK_START} (added by `claude-memory connect`; `disconnect` removes it) -->
## Memory
- At the start of every session, call `startup_context` (with `cwd` set to the working
  folder) from the claude-memory MCP server and follow the preferences it lists; a memory it
  marks drifted no longer matches the code, so trust the code.
- Before working on a topic, call `hybrid_search` for earlier decisions and root causes.
- When a decision is settled, a root cause found, or the user corrects you, call `save_memory`
  with a short, self-contained statement.
{BLOCK_END}
"""


Edit = tuple[Path, str, str]  # a file, its text now, its text to be


class ConnectError(Exception):
    """The agent cannot be connected or disconnected safely; the message says what to do."""


@dataclass(frozen=True, slots=True)
class Connection:
    """What connect or disconnect was asked to do, and where the agent's files are."""

    url: str | None  # our streamable HTTP endpoint (see mcp_url); None to disconnect
    use_token: bool  # the server needs its token
    environ: Mapping[str, str]
    home: Path
    now: datetime
    dry_run: bool = False
    instructions: bool = False  # also write the instructions block
    hooks: bool = True  # install our hooks where the agent has them
    python: str | None = None  # the interpreter our hooks run with (this one by default)
    # Asked before a URL is written (not on a dry run): raises ConnectError when no
    # claude-memory server answers there (the CLI's check; see server/jobs/server_check.py).
    check: Callable[[str], None] | None = None

    @property
    def backups(self) -> Path:
        """Where the old files go: the data dir `environ` names, as Settings reads it."""
        return backups_folder(data_home(self.environ))


def check_before_writing(request: Connection) -> None:
    """Run the request's check on its URL, unless it is a dry run or writes no URL."""
    if request.check is not None and request.url is not None and not request.dry_run:
        request.check(request.url)


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


@dataclass(frozen=True, slots=True)
class HookSupport:
    """An agent's hooks as connect installs them: from which version, and what to tell."""

    events: list[str]  # the agent's events our hooks answer
    since: agent_hooks.Version  # the first version that runs them
    # What the user must know once they are installed, given the version (None: unknown).
    notes: Callable[[agent_hooks.Version | None], list[str]] = lambda version: []


@dataclass(frozen=True, slots=True)
class FileAgent:
    """An agent configured through its own files: what connect needs to know of it."""

    name: str
    label: str  # for people: "Codex"
    program: str  # its CLI, asked for its version
    # Our edits for a request: the MCP entry (removed when `url` is None) and our hooks for
    # `hook_url` (removed when None).
    edits: Callable[[Connection, str | None], list[Edit]]
    instructions_file: Callable[[Connection], Path]  # AGENTS.md and the like
    hooks: HookSupport | None = None
    # What the user must know on every connect (say, where the agent shows MCP servers at all).
    connect_notes: tuple[str, ...] = ()


def mcp_url(base_url: str) -> str:
    """The streamable HTTP endpoint of the server at `base_url` (a base or an /mcp, /sse URL)."""
    base = base_url.rstrip("/")
    for suffix in ("/mcp", "/sse"):
        base = base.removesuffix(suffix)
    return f"{base}/mcp"


def connect_by_files(agent: FileAgent, request: Connection) -> AgentChange:
    """Register the server with an agent configured through files, hooks and all."""
    check_before_writing(request)
    notes = [token_note(agent.program)] if request.use_token else []
    notes += agent.connect_notes
    version = agent_hooks.installed_version(agent.program, request.environ)
    hooks = agent.hooks
    supported = hooks is not None and (version is None or version >= hooks.since)
    hook_url = (request.url or "").removesuffix("/mcp") if request.hooks and supported else None
    if hook_url is not None and not hook_url.startswith("http://"):
        notes.append("the hooks speak plain http:// only, so none were installed")
        hook_url = None
    try:
        edits = agent.edits(request, hook_url)
        if request.instructions or (request.hooks and not supported):
            edits.append(edit_block(agent.instructions_file(request)))
        if request.hooks:
            block = agent.instructions_file(request).name
            notes += _hook_notes(agent, hooks, version, hook_url is not None, block)
        files = apply_all(edits, request)
    except AgentFileError as exc:
        raise ConnectError(str(exc)) from None
    return replace(
        result(agent.name, "connect", request, files, [], notes),
        hooks=list(hooks.events) if hooks is not None and hook_url else [],
        version=agent_hooks.shown(version) if version else None,
    )


def disconnect_by_files(agent: FileAgent, request: Connection) -> AgentChange:
    """Remove our entry, our hooks and our instructions block, and only those."""
    try:
        edits = agent.edits(request, None)
        edits.append(edit_block(agent.instructions_file(request), remove=True))
        files = apply_all(edits, request)
    except AgentFileError as exc:
        raise ConnectError(str(exc)) from None
    return result(agent.name, "disconnect", request, files, [], [])


def _hook_notes(
    agent: FileAgent,
    hooks: HookSupport | None,
    version: agent_hooks.Version | None,
    installed: bool,
    instructions: str,
) -> list[str]:
    if hooks is None:
        return [
            f"claude-memory has no hooks for {agent.label} yet: the memory instructions went "
            f"to {instructions} instead"
        ]
    if version is not None and version < hooks.since:
        return [
            f"{agent.label} {agent_hooks.shown(version)} has no hooks "
            f"({agent_hooks.shown(hooks.since)} and later do): the memory instructions went "
            f"to {instructions} instead"
        ]
    return hooks.notes(version) if installed else []


def token_note(program: str) -> str:
    """What to do about the token: `program` reads it from its own environment."""
    return (
        f"the server needs its token: {program} reads it from {TOKEN_VARIABLE} in its own "
        f"environment, so export {TOKEN_VARIABLE} where you start {program} (it is not written "
        "to any file)"
    )


def result(
    agent: str,
    action: Literal["connect", "disconnect"],
    request: Connection,
    files: list[FileChange],
    commands: list[list[str]],
    notes: list[str],
) -> AgentChange:
    """The change for `agent`: changed when a file or a command did (or would) change."""
    url = request.url if action == "connect" else None
    return AgentChange(
        agent=agent,
        action=action,
        changed=any(f.changed for f in files) or bool(commands),
        dry_run=request.dry_run,
        url=url,
        transport=TRANSPORT if url else None,
        files=[f for f in files if f.changed or f.path.exists()],
        commands=commands,
        notes=notes,
    )


def apply_all(edits: list[Edit], request: Connection) -> list[FileChange]:
    """Write the planned edits: all are planned first, so a refusal leaves every file as it was."""
    return [_apply(path, old, new, request) for path, old, new in edits]


def _apply(path: Path, old: str, new: str, request: Connection) -> FileChange:
    if new == old:
        return FileChange(path, False, None, "")
    diff = unified_diff(path, old, new)
    if request.dry_run:
        return FileChange(path, True, None, diff)
    if not new:
        # Only our entry was in it: leave no empty file behind (the backup keeps the old one).
        return FileChange(path, True, remove_with_backup(path, request.now, request.backups), diff)
    return FileChange(path, True, write_with_backup(path, new, request.now, request.backups), diff)


def read_text(path: Path) -> str:
    """A file's text; an absent file is empty."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except OSError as exc:
        raise AgentFileError(f"cannot read {path}: {exc.strerror}") from None


def edit_block(path: Path, remove: bool = False) -> Edit:
    """Our marked block in an instructions file (AGENTS.md, GEMINI.md), added or removed."""
    old = read_text(path)
    if remove:
        new = without_block(old, path, BLOCK_START, BLOCK_END)
    else:
        new = with_block(old, path, INSTRUCTIONS, BLOCK_START, BLOCK_END)
    return path, old, new
