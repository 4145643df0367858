"""`claude-memory doctor`: for every agent we know, what is connected, by which path, to which
URL, whether that URL answers, and what is wrong, each problem with the command that fixes it.

Each agent says what its own files hold (`Agent.detect`, in server/agents/<agent>.py), and the
problems only it can see (Claude Code's plugin next to our user-scope entry, say); this module
asks every URL once (server/jobs/server_check.py) and adds the problems every agent can have: a
URL where no claude-memory server answers, a server that refuses what the agent sends (no
token, or a wrong one), and hooks calling another server than the MCP entry. A fix names only a
URL where our server answers.

/health is asked without a token. The token the agents will send (CLAUDE_MEMORY_TOKEN in this
environment, where a route sends it at all) goes only to a URL from the user's own settings in
their home folder, never to one a repository's files name (a project's .mcp.json). What a
server answers is printed without control characters. Read only: it never changes a file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from server.agents.registry import AGENTS
from server.agents.unit import Found, Problem, Route
from server.jobs.connect import TOKEN_VARIABLE
from server.jobs.server_check import (
    AccessCheck,
    ServerCheck,
    check_access,
    check_server,
    start_hint,
    without_controls,
)


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


def diagnose(environ: Mapping[str, str], home: Path, cwd: Path, default_url: str) -> Report:
    """Ask every agent what is connected, every URL found whether it answers, and each URL of
    the user's own settings whether it takes what the agent will send."""
    token = environ.get(TOKEN_VARIABLE, "").strip() or None
    server = check_server(default_url)
    checks: dict[str, ServerCheck] = {server.url: server}
    access: dict[tuple[str, bool], AccessCheck] = {}
    found_by_agent = {name: agent.detect(environ, home, cwd) for name, agent in AGENTS.items()}
    for found in found_by_agent.values():
        for route in found.routes:
            if route.url is not None and route.url not in checks:
                checks[route.url] = check_server(route.url)
    # A fix never names a URL that only a repository's files gave.
    own = [
        route.url
        for found in found_by_agent.values()
        for route in found.routes
        if route.url is not None and not route.from_repository
    ]
    agents = []
    for name, found in found_by_agent.items():
        live = _live_url(found, checks, server, own)
        problems = [*found.problems, *_unanswered(found, checks, live)]
        problems += _refused(found, checks, access, token)
        problems += _disagreeing(found, checks, live)
        if any(route.from_repository for route in found.routes):
            found.notes.append(
                "a URL from the working folder's .mcp.json is asked only whether it answers: "
                "a repository's files never get your token"
            )
        agents.append(AgentReport(name, AGENTS[name].label, found, problems))
    return Report(server, checks, agents)


def _live_url(
    found: Found, checks: dict[str, ServerCheck], server: ServerCheck, own: list[str]
) -> str | None:
    """The URL a fix should point at: the settings' address if our server answers there, else
    one of the agent's own URLs (then another agent's) where it does, never one from a
    repository's files; None when none answers."""
    if server.ours:
        return server.url
    mine = [r.url for r in found.routes if r.url is not None and not r.from_repository]
    answering = [url for url in [*mine, *own] if checks[url].ours]
    return answering[0] if answering else None


def _unanswered(found: Found, checks: dict[str, ServerCheck], live: str | None) -> list[Problem]:
    """One problem per URL of the agent's where no claude-memory server answers."""
    problems = []
    for url in dict.fromkeys(route.url for route in found.routes if route.url):
        check = checks[url]
        if check.ours:
            continue
        routes = [route for route in found.routes if route.url == url]
        fixes = dict.fromkeys(route.fix.format(url=live) for route in routes if route.fix)
        problems.append(
            Problem(
                f"no claude-memory server answers at {url} ({check.detail}), which "
                + ", ".join(f"{route.path} ({_role(route)})" for route in routes)
                + " call"
                + ("s" if len(routes) == 1 else ""),
                " && ".join(fixes) if live is not None and fixes else start_hint(url),
            )
        )
    return problems


def _refused(
    found: Found,
    checks: dict[str, ServerCheck],
    access: dict[tuple[str, bool], AccessCheck],
    token: str | None,
) -> list[Problem]:
    """One problem per URL of the user's own settings whose server answers but refuses what
    the agent sends there: no token, or one it does not take."""
    problems = []
    for url in dict.fromkeys(route.url for route in found.routes if route.url):
        routes = [r for r in found.routes if r.url == url and not r.from_repository]
        if not routes or not checks[url].ours:
            continue
        for sends in dict.fromkeys(token is not None and route.sends_token for route in routes):
            if (url, sends) not in access:
                access[(url, sends)] = check_access(url, token if sends else None)
            said = access[(url, sends)]
            if not said.refused:
                continue
            these = [
                route for route in routes if (token is not None and route.sends_token) == sends
            ]
            problems.append(_refusal(url, said, these, token))
    return problems


def _refusal(url: str, said: AccessCheck, routes: list[Route], token: str | None) -> Problem:
    what = ", ".join(f"{route.path} ({_role(route)})" for route in routes)
    if said.with_token:
        return Problem(
            f"the server at {url} {said.detail}, which {what} send",
            f"set {TOKEN_VARIABLE} to the server's token (on a server with users, your own "
            "from `claude-memory users add`) where you start the agent",
        )
    silent = [route for route in routes if not route.sends_token]
    if token is not None and silent:
        fixes = dict.fromkeys(route.fix.format(url=url) for route in silent if route.fix)
        return Problem(
            f"the server at {url} {said.detail}, and {what} send none: connect wrote it "
            f"without {TOKEN_VARIABLE} in the environment",
            " && ".join(fixes),
        )
    fix = f"export {TOKEN_VARIABLE}=<the server's token> where you start the agent"
    if silent:
        fixes = dict.fromkeys(route.fix.format(url=url) for route in silent if route.fix)
        fix = f"export {TOKEN_VARIABLE}=<the server's token>, then " + " && ".join(fixes)
    return Problem(
        f"the server at {url} {said.detail}, and {TOKEN_VARIABLE} is not set here: {what} "
        "get nothing from it",
        fix,
    )


def _disagreeing(found: Found, checks: dict[str, ServerCheck], live: str | None) -> list[Problem]:
    """Hooks calling a server that none of the agent's MCP entries points at. Not when the MCP
    entry's URL is dead and another answers: `_unanswered` says so, with a fix to that one."""
    servers = [
        route.url
        for route in found.routes
        if route.role == "mcp" and route.url and not route.from_repository
    ]
    if not servers or (not checks[servers[0]].ours and live is not None):
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
    # URLs and paths come from files a repository may have written: no escapes reach the terminal.
    return "\n".join(without_controls(line) for line in lines) + "\n"
