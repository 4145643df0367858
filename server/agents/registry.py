"""Every agent claude-memory knows, and connect / disconnect by the agent's name.

The list of agents is server/agent_facts/every.py (standard library only, so the hook client
can read it too); for each agent there, `server.agents.<its module's name>` is loaded here and
gives its `Agent`. Adding an agent: its module in server/agent_facts/ (name, label, hooks,
tool names), its module here (its `Agent`: how connect reaches it), its reader in
server/ingest/ (with its AgentFormat) if its sessions can be read, and one line in
server/agent_facts/every.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import datetime
from importlib import import_module
from pathlib import Path

from server.agent_facts import DEFAULT
from server.agent_facts.every import ABOUT
from server.agents.unit import Agent
from server.ingest.agent_format import AgentFormat
from server.jobs.connect import AgentChange, ConnectError, Connection, mcp_url


def _agent(module: str) -> Agent:
    """The `AGENT` of server/agents/<module>.py, checked."""
    agent = import_module(f"server.agents.{module}").AGENT
    if not isinstance(agent, Agent):
        raise TypeError(f"server/agents/{module}.py: AGENT is not an Agent")
    return agent


AGENTS: dict[str, Agent] = {
    name: _agent(about.__name__.rsplit(".", 1)[1]) for name, about in ABOUT.items()
}
# The agents whose sessions can be read (import's options, the session-end hook's `agent`).
SESSION_FORMATS: dict[str, AgentFormat] = {
    name: agent.format for name, agent in AGENTS.items() if agent.format is not None
}
# Whose session a hook names when it does not say: Claude Code's hooks predate the field.
DEFAULT_AGENT = DEFAULT
# Each agent's MCP client by the name it gives in `initialize` (clientInfo.name).
MCP_CLIENT_AGENTS: dict[str, str] = {
    client: name for name, about in ABOUT.items() for client in about.MCP_CLIENTS
}
_CLIENT_NAME_UNSAFE = re.compile(r"[^a-z0-9._-]+")


def source_of_mcp_client(client: str | None) -> str:
    """The source of what an MCP client saves: the agent whose client it is; `mcp:<name>`
    for any other client (the MCP Inspector's saves are mcp:mcp-inspector), its name cut to
    40 safe characters; "mcp" for a client that gave no name."""
    folded = (client or "").strip().lower()
    if folded in MCP_CLIENT_AGENTS:
        return MCP_CLIENT_AGENTS[folded]
    safe = _CLIENT_NAME_UNSAFE.sub("-", folded).strip("-")[:40]
    return f"mcp:{safe}" if safe else "mcp"


def agent_named(name: str) -> Agent:
    """The agent called `name`; ConnectError naming the known ones otherwise."""
    agent = AGENTS.get(name)
    if agent is None:
        raise ConnectError(f"unknown agent {name!r}; choose one of {', '.join(AGENTS)}")
    return agent


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
    check: Callable[[str], None] | None = None,
) -> AgentChange:
    """Register the server at `base_url` with `agent`; `use_token` when the server needs one.

    Agents with hooks also get ours (unless `hooks` is False), run by `python` (this
    interpreter by default); one without them gets the instructions block instead. `check`
    is asked before a URL is written, and raises ConnectError to refuse it.
    """
    request = Connection(
        url=mcp_url(base_url),
        use_token=use_token,
        environ=environ,
        home=home,
        now=now,
        dry_run=dry_run,
        instructions=instructions,
        hooks=hooks,
        python=python,
        check=check,
    )
    return agent_named(agent).connect(request)


def disconnect(
    agent: str, *, environ: Mapping[str, str], home: Path, now: datetime, dry_run: bool = False
) -> AgentChange:
    """Remove our entry, our hooks and our instructions block from `agent`'s config, only those."""
    request = Connection(
        url=None, use_token=False, environ=environ, home=home, now=now, dry_run=dry_run
    )
    return agent_named(agent).disconnect(request)
