"""`claude-memory promote`: propose what memory has proven as lines of the repository's
instruction files (CLAUDE.md, AGENTS.md, GEMINI.md, .github/copilot-instructions.md), and with
`--write` write them (#58; the rules: server/recall/promote.py).

Registered by server/cli/main.py. Prints each file's unified diff and the reason for every
change, with where the line's words come from (the user, an agent, an import, a teammate);
`--json` prints the proposal (the shape GET /api/promote answers) instead. Nothing is written,
and no memory saved, without `--write`, which keeps a backup beside each file it changes; nothing is
committed to git.
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
from server.core.models.promotion import FileProposal, PromotionResult, Proposal


def add_promote_command(commands: Any) -> None:
    """Add `promote` to `commands` (an argparse subparsers object)."""
    promote = commands.add_parser(
        "promote",
        help="propose memories that proved useful as lines of the repository's CLAUDE.md,"
        " AGENTS.md, GEMINI.md or copilot-instructions.md (--write to write them)",
    )
    promote.add_argument("--project", help="the project (default: the one at --cwd)")
    promote.add_argument("--cwd", help="a folder of the repository (default: the current folder)")
    promote.add_argument(
        "--write",
        action="store_true",
        help="write the proposed changes (a backup beside each file first)",
    )
    promote.add_argument("--json", action="store_true", help="print JSON instead of the diff")
    promote.set_defaults(run=cmd_promote)


def cmd_promote(args: argparse.Namespace, settings: Settings) -> int:
    from server.recall.promote import apply, propose
    from server.service.runtime import open_service

    # A named project from anywhere: its own folder; otherwise the folder we are in.
    cwd = os.path.abspath(args.cwd) if args.cwd else None
    if cwd is None and not args.project:
        cwd = os.getcwd()

    async def run() -> Proposal | PromotionResult:
        # Proposing reads stored memories only: the model is loaded only for a write, which
        # may save hand edits as memories.
        async with open_service(settings, needs_model=args.write) as service:
            if args.write:
                return await apply(service, args.project, cwd)
            return await propose(service, args.project, cwd)

    try:
        result = asyncio.run(run())
    except ServiceError as exc:
        raise StartupError(exc.message) from None
    if args.json:
        print(json.dumps(to_json(result)))  # noqa: T201
    else:
        print("\n".join(report_lines(result)))  # noqa: T201
    return 0


def report_lines(result: Proposal | PromotionResult) -> list[str]:
    """Each file's diff and reasons, then what did not fit; after a write, what was written."""
    lines: list[str] = []
    if isinstance(result, PromotionResult):
        for written in result.written:
            backup = f" (backup: {written.backup})" if written.backup else " (created)"
            lines.append(f"wrote {written.path}{backup}")
        if not result.written:
            lines.append("nothing to write: the instruction files are up to date")
        return lines
    for file in result.files:
        lines += _file_lines(file)
    if result.left_out:
        lines.append(
            f"{result.left_out} more memories qualify but do not fit the section's budget"
            " (CLAUDE_MEMORY_PROMOTE_MAX_LINES / _MAX_TOKENS): they stay in memory"
        )
    if any(file.diff for file in result.files):
        lines.append("run again with --write to write these changes")
    return lines


def _file_lines(file: FileProposal) -> list[str]:
    if file.creates and not file.diff:
        return [f"{file.name}: no instruction file here, and nothing to propose for one"]
    if not file.diff:
        return [f"{file.name}: up to date"]
    head = f"{file.name}: will be created (no instruction file here)" if file.creates else file.name
    lines = [head, file.diff.rstrip("\n")]
    for change in file.changes:
        if change.action != "keep":
            memory = f"#{change.memory_id}" if change.memory_id is not None else "a new memory"
            source = f" [from {change.source}]" if change.source else ""
            lines.append(f"  {change.action} {memory}: {change.reason}{source}")
    return [*lines, ""]
