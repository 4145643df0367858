"""What an agent is to the rest of the server: one `Agent` value per agent (registry.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

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
    """One coding agent: how its sessions are read, and how connect reaches it."""

    format: AgentFormat  # where its sessions live and how they are read (server/ingest/)
    connect: Callable[[Connection], AgentChange]
    disconnect: Callable[[Connection], AgentChange]
    connect_example: str  # what `connect <agent>` does, for `connect --help`
    # The events our stdlib hook client answers for it (server/hooks.py keeps the same table,
    # since it cannot import this one); empty for an agent without command hooks.
    hook_events: tuple[str, ...] = ()
    instructions_file: str | None = None  # where `--instructions` writes, if anywhere

    @property
    def name(self) -> str:
        """The name on the command line, in hooks and on every row it brings: its source."""
        return self.format.source


def configured_by_files(
    format: AgentFormat,
    files: FileAgent,
    connect_example: str,
    *,
    hook_events: tuple[str, ...] = (),
    instructions_file: str | None = None,
) -> Agent:
    """An agent that connect reaches through its own files (jobs/connect.connect_by_files)."""
    return Agent(
        format=format,
        connect=partial(connect_by_files, files),
        disconnect=partial(disconnect_by_files, files),
        connect_example=connect_example,
        hook_events=hook_events,
        instructions_file=instructions_file,
    )
