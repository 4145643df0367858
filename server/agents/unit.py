"""What an agent is to the rest of the server: one `Agent` value per agent (registry.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from types import ModuleType

from server.ingest.agent_format import AgentFormat
from server.jobs.connect import (
    AgentChange,
    Connection,
    FileAgent,
    connect_by_files,
    disconnect_by_files,
)


@dataclass(frozen=True, slots=True)
class Agent:
    """One coding agent: what it is (its module in about/), how its sessions are read, and how
    connect reaches it."""

    about: ModuleType  # server/agents/about/<agent>.py: name, label, hooks, tool names
    # Where its sessions live and how they are read (server/ingest/); None when they cannot be.
    format: AgentFormat | None
    connect: Callable[[Connection], AgentChange]
    disconnect: Callable[[Connection], AgentChange]
    connect_example: str  # what `connect <agent>` does, for `connect --help`
    instructions_file: str | None = None  # where `--instructions` writes, if anywhere

    @property
    def name(self) -> str:
        """The name on the command line, in hooks and on every row it brings: its source."""
        return str(self.about.NAME)

    @property
    def label(self) -> str:
        """Its name for people: "Codex CLI"."""
        return str(self.about.LABEL)

    @property
    def hook_events(self) -> tuple[str, ...]:
        """The hook client's arguments for its events; empty without command hooks."""
        return tuple(argument for _, argument, _, _ in self.about.HOOKS)


def configured_by_files(
    about: ModuleType,
    format: AgentFormat | None,
    files: FileAgent,
    connect_example: str,
    *,
    instructions_file: str | None = None,
) -> Agent:
    """An agent that connect reaches through its own files (jobs/connect.connect_by_files)."""
    return Agent(
        about=about,
        format=format,
        connect=partial(connect_by_files, files),
        disconnect=partial(disconnect_by_files, files),
        connect_example=connect_example,
        instructions_file=instructions_file,
    )
