"""`claude-memory doctor`: registered by server/cli/main.py; the work is server/agents/doctor.py.

Plain text by default, `--json` for machines. Exit code 0 when nothing is wrong, 1 when a
problem was found (each printed with the command that fixes it): scripts can run it as a check.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from server.cli.connect import default_url
from server.core.config import Settings

DESCRIPTION = """\
For every agent claude-memory knows: what is connected, by which path (an MCP entry, hooks, a
plugin), to which URL, whether a claude-memory server answers there, whether it takes the token
the agent sends (CLAUDE_MEMORY_TOKEN in this environment; never sent to a URL from a
repository's .mcp.json), and whether hooks and MCP entry agree. Each problem comes with the
command that fixes it. Reads files, changes nothing.

exit codes: 0 nothing wrong, 1 a problem was found (or the command could not run)."""


def add_doctor_command(commands: Any) -> None:
    """Add `doctor` to `commands` (an argparse subparsers object)."""
    doctor = commands.add_parser(
        "doctor",
        help="what each agent is connected to, whether it answers, and what to fix",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    doctor.add_argument("--json", action="store_true", help="print the report as JSON")
    doctor.set_defaults(run=cmd_doctor)


def cmd_doctor(args: argparse.Namespace, settings: Settings) -> int:
    from server.agents.doctor import as_json, as_text, diagnose

    # The token checked is the one the agents will send: CLAUDE_MEMORY_TOKEN in this
    # environment, which is where they are started from (not the data dir's config file).
    report = diagnose(os.environ, Path.home(), Path.cwd(), default_url(settings))
    # What `llm use` could turn on (#67): offered, never done here.
    from server.learning.agent_models import offers

    offered = offers(settings.llm_provider, os.environ, Path.home())
    if args.json:
        print(json.dumps(as_json(report) | {"llm_offers": offered}))  # noqa: T201
    else:
        print(as_text(report), end="")  # noqa: T201
        for line in offered:
            print(f"offer: {line}")  # noqa: T201
    return 1 if report.problems else 0
