"""`claude-memory users`: add, list and revoke the users of a team's server (#24).

Registered by server/cli/main.py. The first `users add` turns the server into a team server: from
then on every request needs a user's token (server/adapters/auth.py). `add` prints the new
token once; only its digest is stored, so a lost token is replaced by revoking the user and
adding them again under another name. Output is JSON on stdout, or one line per item with
`--plain`; a refused change prints one line on stderr and exits 1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from server.core.config import Settings
from server.core.errors import ServiceError, StartupError
from server.core.models.output import to_json
from server.core.models.users import UserRow


def add_user_commands(commands: Any) -> None:
    """Add `users` and its actions to `commands` (an argparse subparsers object)."""
    plain = argparse.ArgumentParser(add_help=False)
    plain.add_argument("--plain", action="store_true", help="print text instead of JSON")

    users = commands.add_parser(
        "users",
        help="the users of a team's server: each has a token and their own memories",
        description="With no users the server is single-user (CLAUDE_MEMORY_TOKEN, if set, "
        "opens everything). Once a user exists, every request needs a user's token and sees "
        "that user's private memories plus the shared memories of their team projects.",
    )
    actions = users.add_subparsers(dest="action", metavar="<action>", required=True)

    add = actions.add_parser("add", parents=[plain], help="add a user; prints their token once")
    add.add_argument("name", help="lowercase letters, digits, '.', '_' or '-'")
    add.add_argument(
        "--project",
        action="append",
        default=[],
        metavar="NAME",
        help="a team project whose shared memories they see (repeat; default: every project)",
    )
    add.add_argument(
        "--claim-unowned",
        action="store_true",
        help="make every memory and session stored before users existed this user's (private)",
    )
    actions.add_parser("list", parents=[plain], help="list users, oldest first")
    revoke = actions.add_parser(
        "revoke", parents=[plain], help="refuse a user's token from now on (memories are kept)"
    )
    revoke.add_argument("name")
    users.set_defaults(run=cmd_users)


def cmd_users(args: argparse.Namespace, settings: Settings) -> int:
    try:
        result = asyncio.run(_run(args, settings))
    except ServiceError as exc:
        print(f"claude-memory: {exc.message}", file=sys.stderr)  # noqa: T201
        return 1
    if args.plain:
        for line in _plain_lines(args.action, result):
            print(line)  # noqa: T201
    else:
        print(json.dumps(result))  # noqa: T201
    return 0


async def _run(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from server.service.runtime import open_service
    from server.service.users import UserDirectory

    async with open_service(settings, needs_model=False) as memory_service:
        users = UserDirectory(memory_service.pool, settings.default_visibility)
        if args.action == "add":
            new, (memories, sessions) = await users.add(
                args.name, args.project, claim_unowned=args.claim_unowned
            )
            return {
                "user": _user_json(new.user),
                "token": new.token,
                "claimed": {"memories": memories, "sessions": sessions},
            }
        if args.action == "list":
            return {"users": [_user_json(user) for user in await users.list()]}
        if args.action == "revoke":
            await users.revoke(args.name)
            return {"revoked": args.name.strip().lower()}
    raise StartupError(f"unknown users action {args.action!r}")


def _user_json(user: UserRow) -> dict[str, Any]:
    return {
        "name": user.name,
        "projects": user.projects,
        "created_at": to_json(user.created_at),
        "revoked_at": to_json(user.revoked_at),
        "memories": user.memories,
    }


def _plain_lines(action: str, result: dict[str, Any]) -> list[str]:
    if action == "add":
        return [
            f"added {result['user']['name']}; their token (shown once, keep it secret):",
            result["token"],
        ]
    if action == "list":
        return [
            f"{u['name']}\t{'revoked' if u['revoked_at'] else 'active'}\t"
            f"{','.join(u['projects'] or ['(all projects)'])}\t{u['memories']} memories"
            for u in result["users"]
        ]
    return [f"revoked {result['revoked']}"]
