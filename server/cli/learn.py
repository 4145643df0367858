"""`claude-memory learn`: record a trajectory (task, what worked, what to avoid) from a shell.

Registered by server/cli/main.py. Prints the save outcome as JSON (status, id, the memory), or one
line with `--plain`; a trajectory the service refuses (an empty task) prints one line on
stderr and exits 1, before the database and model start.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from server.core.config import Settings
from server.core.errors import ServiceError, StartupError
from server.core.models.memories import SaveOutcome
from server.core.models.output import to_json
from server.domain.trajectories import Trajectory, checked


def add_learn_command(commands: Any) -> None:
    """Add `learn` to `commands` (an argparse subparsers object)."""
    learn = commands.add_parser(
        "learn",
        help="record how a task got done (a trajectory), so the next time is faster",
        description="A trajectory is searched with the other memories, labelled as such, and "
        "ranked first when a related task comes up.",
    )
    learn.add_argument("task", help="what was being done, as someone would ask for it again")
    learn.add_argument("--worked", required=True, help="what solved it")
    learn.add_argument("--avoid", default="", help="what failed or wasted time")
    learn.add_argument("--tag", action="append", default=[], help="a label (repeatable)")
    learn.add_argument("--project", default="", help="the project it belongs to")
    learn.add_argument("--plain", action="store_true", help="print text instead of JSON")
    learn.set_defaults(run=cmd_learn)


def cmd_learn(args: argparse.Namespace, settings: Settings) -> int:
    from server.service.runtime import open_service

    async def run(trajectory: Trajectory) -> SaveOutcome:
        async with open_service(settings) as service:
            return await service.learn(trajectory, source="cli")

    try:
        trajectory = checked(Trajectory(args.task, args.worked, args.avoid, args.tag, args.project))
        outcome = asyncio.run(run(trajectory))
    except ServiceError as exc:
        raise StartupError(exc.message) from None
    if args.plain:
        print(f"{outcome.status}: trajectory #{outcome.id}")  # noqa: T201
    else:
        print(json.dumps(to_json(outcome)))  # noqa: T201
    return 0
