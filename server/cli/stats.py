"""`claude-memory stats`: the store's counts, or with `--context` what the hooks injected.

Registered by server/cli/main.py. Prints JSON on stdout; `--context --plain` prints the report
as lines: per day and project the injections, memories, estimated tokens and share used, then
the memories injected most often, never used, used most, and used then corrected (with their
ids, to retire, edit or review them: `PATCH` / `DELETE /api/memories/ID`, the web UI's Context
page, or MCP). The figures come from the receipts the hooks keep
(CLAUDE_MEMORY_RECEIPTS_RETENTION_DAYS), each user's own on a team's server (run with their token's
user through the API instead; the CLI acts for nobody, so it reports every user's).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from server.core.config import Settings
from server.core.errors import ServiceError, StartupError
from server.core.models.output import to_json
from server.core.models.receipts import ContextReport


def add_stats_command(commands: Any) -> None:
    """Add `stats` to `commands` (an argparse subparsers object)."""
    stats = commands.add_parser(
        "stats",
        help="counts of what is stored; with --context, what the hooks injected",
    )
    stats.add_argument(
        "--context",
        action="store_true",
        help="what the hooks injected (from their receipts), per day and project",
    )
    stats.add_argument("--project", help="only this project (--context)")
    stats.add_argument("--days", type=int, default=30, help="how far back (--context, default 30)")
    stats.add_argument("--plain", action="store_true", help="print text instead of JSON")
    stats.set_defaults(run=cmd_stats)


def cmd_stats(args: argparse.Namespace, settings: Settings) -> int:
    from server.service.runtime import open_service

    async def run() -> Any:
        async with open_service(settings, needs_model=False) as service:
            if args.context:
                return await service.context_report(args.project, days=args.days)
            return await service.stats()

    try:
        result = asyncio.run(run())
    except ServiceError as exc:
        raise StartupError(exc.message) from None
    if args.plain and isinstance(result, ContextReport):
        print("\n".join(report_lines(result)))  # noqa: T201
    else:
        print(json.dumps(to_json(result)))  # noqa: T201
    return 0


def report_lines(report: ContextReport) -> list[str]:
    """The report as text: totals, one line per day and project, the most injected, and the
    memories never used, used most and contradicted."""
    scope = f" in {report.project}" if report.project else ""
    totals = report.totals
    lines = [
        f"Injected since {report.since:%Y-%m-%d}{scope}: {totals.injections} injections, "
        f"{totals.memories} memories, ~{totals.tokens} tokens (4 characters a token)",
        f"Judged after import: {totals.judged} of those memories; used "
        f"{_share(totals.used, totals.judged)}, used then corrected {totals.contradicted}",
    ]
    if report.days:
        lines += ["", "day         project               injections  memories   tokens  used"]
        lines += [
            f"{d.day:%Y-%m-%d}  {d.project or '(none)':<20}  {d.injections:>10}  "
            f"{d.memories:>8}  {d.tokens:>7}  {_share(d.used, d.judged)}"
            for d in report.days
        ]
    if report.most_injected:
        lines += ["", "injected most often:"]
        lines += [f"  #{m.id} x{m.injections}: {m.preview}" for m in report.most_injected]
    for title, listed in (
        ("never used (retire or edit them):", report.never_used),
        ("used most:", report.most_used),
        ("used, then the user corrected the agent (review them):", report.contradicted),
    ):
        if listed:
            lines += ["", title]
            lines += [f"  #{m.id} {m.count} of {m.judged}: {m.preview}" for m in listed]
    return lines


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.0%}" if whole else "-"
