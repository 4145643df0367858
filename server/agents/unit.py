"""What an agent is to the rest of the server: one `Agent` value per agent (registry.py)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Literal

from server.ingest.agent_format import AgentFormat
from server.jobs.connect import (
    AgentChange,
    Connection,
    FileAgent,
    connect_by_files,
    disconnect_by_files,
)


@dataclass(frozen=True, slots=True)
class Route:
    """One way an agent reaches the server, as its config files say (for `doctor`)."""

    path: str  # for people: "plugin", "user-scope MCP entry", "install-hooks hooks"
    role: Literal["mcp", "hooks"]  # its MCP server, or hooks calling the server
    source: Path  # the file that says so
    url: str | None  # the server's base URL it calls (no /mcp); None when the file has none
    # The command that points this route at another server, `{url}` in it (hooks and MCP
    # entry disagreeing, a URL that does not answer).
    fix: str = ""
    # Whether it sends CLAUDE_MEMORY_TOKEN from the agent's environment: hooks always do, an
    # MCP entry only when connect wrote the header (or Codex's bearer_token_env_var) in it.
    sends_token: bool = True
    # Read from the working folder's files (a project's .mcp.json): a cloned repository's
    # word, so doctor sends no token to its URL.
    from_repository: bool = False


@dataclass(frozen=True, slots=True)
class Problem:
    """Something wrong with how an agent is connected, and the command that fixes it."""

    message: str
    fix: str


@dataclass(frozen=True, slots=True)
class Found:
    """What an agent's config files say is connected: its routes, what is wrong with them
    that only the agent knows (two routes to one server, say), and anything worth telling."""

    routes: list[Route] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


# What an agent's detection reads: the environment, the home folder and the working folder.
Detect = Callable[[Mapping[str, str], Path, Path], Found]


def nothing_found(environ: Mapping[str, str], home: Path, cwd: Path) -> Found:
    return Found()


@dataclass(frozen=True, slots=True)
class Agent:
    """One coding agent: what it is (its facts, server/agent_facts/), how its sessions are read,
    and how connect reaches it."""

    about: ModuleType  # server/agent_facts/<agent>.py: name, label, hooks, tool names
    # Where its sessions live and how they are read (server/ingest/); None when they cannot be.
    format: AgentFormat | None
    connect: Callable[[Connection], AgentChange]
    disconnect: Callable[[Connection], AgentChange]
    connect_example: str  # what `connect <agent>` does, for `connect --help`
    instructions_file: str | None = None  # where `--instructions` writes, if anywhere
    # What its config files say is connected (`doctor`); read only, never written.
    detect: Detect = nothing_found

    @property
    def name(self) -> str:
        """The name on the command line, in hooks and on every row it brings: its source."""
        return str(self.about.NAME)

    @property
    def label(self) -> str:
        """Its name for people: "Codex CLI"."""
        return str(self.about.LABEL)


def configured_by_files(
    about: ModuleType,
    format: AgentFormat | None,
    files: FileAgent,
    connect_example: str,
    *,
    instructions_file: str | None = None,
    detect: Detect = nothing_found,
) -> Agent:
    """An agent that connect reaches through its own files (jobs/connect.connect_by_files)."""
    return Agent(
        about=about,
        format=format,
        connect=partial(connect_by_files, files),
        disconnect=partial(disconnect_by_files, files),
        connect_example=connect_example,
        instructions_file=instructions_file,
        detect=detect,
    )
