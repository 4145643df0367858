"""Every agent claude-memory knows, and connect / disconnect by the agent's name.

Adding an agent: its reader in server/ingest/ (with its AgentFormat), its module here (its
`Agent`: how connect reaches it), and one line in AGENTS.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from server.agents import claude_code, codex, gemini, opencode
from server.agents.unit import Agent
from server.jobs.connect import AgentChange, ConnectError, Connection, mcp_url

AGENTS: dict[str, Agent] = {
    agent.name: agent for agent in (claude_code.AGENT, codex.AGENT, gemini.AGENT, opencode.AGENT)
}
# Whose session a hook names when it does not say: Claude Code's hooks predate the field.
DEFAULT_AGENT = claude_code.NAME


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
) -> AgentChange:
    """Register the server at `base_url` with `agent`; `use_token` when the server needs one.

    Agents with hooks also get ours (unless `hooks` is False), run by `python` (this
    interpreter by default); one without them gets the instructions block instead.
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
