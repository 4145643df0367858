"""`claude-memory folder DIR --project NAME | --none`: the user's word on which project a folder
is, correcting what session start took it to be (a project named before its folder was known,
matched by the folder's name or git remote: server/service/projects.py `claim_folder`).

Registered by server/cli/main.py. Prints the recorded folder as JSON (`--plain`: its line).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from typing import Any

from server.core.config import Settings
from server.core.errors import ServiceError, StartupError
from server.core.models.output import to_json


def add_folder_command(commands: Any) -> None:
    """Add `folder` to `commands` (an argparse subparsers object)."""
    folder = commands.add_parser(
        "folder",
        help="say which project a folder is (or that it is none of them)",
        description="Correct what session start took a folder to be: its memories, prompt "
        "recall and promote follow.",
    )
    folder.add_argument("path", help="the folder (e.g. the repository's root)")
    which = folder.add_mutually_exclusive_group(required=True)
    which.add_argument("--project", help="the project it is (a known project's name)")
    which.add_argument("--none", action="store_true", help="it is no known project")
    folder.add_argument("--plain", action="store_true", help="print text instead of JSON")
    folder.set_defaults(run=cmd_folder)


def cmd_folder(args: argparse.Namespace, settings: Settings) -> int:
    from server.service.runtime import open_service

    path = os.path.abspath(os.path.expanduser(args.path))

    async def run() -> Any:
        async with open_service(settings, needs_model=False) as service:
            return await service.name_folder(path, None if args.none else args.project)

    try:
        named = asyncio.run(run())
    except ServiceError as exc:
        raise StartupError(exc.message) from None
    print(named.note if args.plain else json.dumps(to_json(named)))  # noqa: T201
    return 0
