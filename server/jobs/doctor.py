"""`claude-memory doctor`: for every agent we know, what is connected, by which path, to which
URL, whether that URL answers, and what is wrong, each problem with the command that fixes it.

Each agent says what its own files hold (`Agent.detect`, in server/agents/<agent>.py), and the
problems only it can see (Claude Code's plugin next to our user-scope entry, say); this module
asks every URL once (server/jobs/server_check.py) and adds the problems every agent can have: a
URL where no claude-memory server answers, and hooks calling another server than the MCP entry.
Read only: it never changes a file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from server.agents.registry import AGENTS
from server.agents.unit import Found, Problem, Route
from server.jobs.server_check import ServerCheck, check_server, start_hint


@dataclass(frozen=True, slots=True)
class AgentReport:
    name: str
    label: str
    found: Found
    problems: list[Problem]  # the agent's own, then ours


@dataclass(frozen=True, slots=True)
class Report:
    server: ServerCheck  # the settings' own address: where `serve` would listen
    checks: dict[str, ServerCheck]  # every URL an agent is configured with
    agents: list[AgentReport]

    @property
    def problems(self) -> int:
        return sum(len(agent.problems) for agent in self.agents)


def diagnose(
    environ: Mapping[str, str], home: Path, cwd: Path, default_url: str, token: str | None
) -> Report:
    """Ask every agent what is connected, and every URL found whether it answers."""
    server = check_server(default_url, token)
    checks: dict[str, ServerCheck] = {server.url: server}
    agents = []
    for agent in AGENTS.values():
        found = agent.detect(environ, home, cwd)
        for route in found.routes:
            if route.url is not None and route.url not in checks:
                checks[route.url] = check_server(route.url, token)
        problems = [*found.problems, *_unanswered(found, checks, server)]
        problems += _disagreeing(found)
        agents.append(AgentReport(agent.name, agent.label, found, problems))
    return Report(server, checks, agents)


def _unanswered(found: Found, checks: dict[str, ServerCheck], server: ServerCheck) -> list[Problem]:
    """One problem per URL of the agent's where no claude-memory server answers."""
    problems = []
    for url in dict.fromkeys(route.url for route in found.routes if route.url):
        check = checks[url]
        if check.ours:
            continue
        routes = [route for route in found.routes if route.url == url]
        fixes = dict.fromkeys(route.fix.format(url=server.url) for route in routes if route.fix)
        problems.append(
            Problem(
                f"no claude-memory server answers at {url} ({check.detail}), which "
                + ", ".join(f"{route.path} ({_role(route)})" for route in routes)
                + " call"
                + ("s" if len(routes) == 1 else ""),
                " && ".join(fixes) if server.ours and fixes else start_hint(url),
            )
        )
    return problems


def _disagreeing(found: Found) -> list[Problem]:
    """Hooks calling a server that none of the agent's MCP entries points at."""
    servers = [route.url for route in found.routes if route.role == "mcp" and route.url]
    if not servers:
        return []
    return [
        Problem(
            f"{route.path} call {route.url}, but the MCP server is at {servers[0]}",
            route.fix.format(url=servers[0]),
        )
        for route in found.routes
        if route.role == "hooks" and route.url and route.url not in servers
    ]


def _role(route: Route) -> str:
    return "MCP server" if route.role == "mcp" else "hooks"


def as_json(report: Report) -> dict[str, Any]:
    """`doctor --json`: the same facts as the text, for machines."""
    return {
        "ok": report.problems == 0,
        "problems": report.problems,
        "server": _check_json(report.server),
        "agents": [
            {
                "agent": agent.name,
                "label": agent.label,
                "connected": bool(agent.found.routes),
                "routes": [
                    {
                        "path": route.path,
                        "role": route.role,
                        "source": str(route.source),
                        "url": route.url,
                        "answers": _check_json(report.checks[route.url]) if route.url else None,
                    }
                    for route in agent.found.routes
                ],
                "problems": [{"message": p.message, "fix": p.fix} for p in agent.problems],
                "notes": agent.found.notes,
            }
            for agent in report.agents
        ],
    }


def _check_json(check: ServerCheck) -> dict[str, Any]:
    return {"url": check.url, "ours": check.ours, "version": check.version, "said": check.detail}


def as_text(report: Report) -> str:
    """`doctor`'s plain text: a paragraph per agent, problems with their fix, a verdict."""
    server = report.server
    answer = "" if server.ours else "no claude-memory server: "
    lines = [f"the settings' address {server.url}: {answer}{server.detail}", ""]
    for agent in report.agents:
        if not agent.found.routes:
            lines.append(f"{agent.label} ({agent.name}): not connected")
        else:
            lines.append(f"{agent.label} ({agent.name}):")
        for route in agent.found.routes:
            check = report.checks.get(route.url) if route.url else None
            state = "no URL" if check is None else ("ok" if check.ours else "NOT ANSWERING")
            said = f", {check.detail}" if check is not None else ""
            lines.append(f"  {route.path}: {_role(route)} -> {route.url} ({state}{said})")
            lines.append(f"      in {route.source}")
        for problem in agent.problems:
            lines.append(f"  PROBLEM: {problem.message}")
            lines.append(f"      fix: {problem.fix}")
        lines += [f"  note: {note}" for note in agent.found.notes]
    lines.append("")
    count = report.problems
    lines.append(
        "no problems found"
        if count == 0
        else f"{count} problem{'s' if count != 1 else ''} found (exit code 1)"
    )
    return "\n".join(lines) + "\n"
