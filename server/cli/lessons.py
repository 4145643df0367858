"""`claude-memory lessons`: list, add, edit, disable and enable lessons, and propose them.

Registered by server/cli/main.py. Each action prints JSON on stdout (`{"lessons": [...]}` for list,
the lesson itself otherwise, a summary for propose) or, with `--plain`, one line per lesson. A
change the service refuses (a bad pattern, an unknown id) prints one line on stderr and exits 1.
`propose` reads the journal for corrections of the agent's calls and stores what it finds as
proposed, inactive lessons (server/learning/lesson_proposals_job.py); enabling one accepts it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from server.core.config import Settings
from server.core.errors import ServiceError, StartupError
from server.core.models.lessons import STRICTNESS, Lesson, LessonChange, LessonDraft
from server.core.models.output import to_json

if TYPE_CHECKING:
    from server.service.memory import MemoryService

LessonAction = Callable[["MemoryService"], Awaitable[Lesson | list[Lesson]]]


def add_lesson_commands(commands: Any) -> None:
    """Add `lessons` and its actions to `commands` (an argparse subparsers object)."""
    plain = argparse.ArgumentParser(add_help=False)
    plain.add_argument("--plain", action="store_true", help="print text instead of JSON")

    lessons = commands.add_parser(
        "lessons",
        help="reminders shown (or questions asked) before matching tool calls",
        description="A lesson matches a tool call when its pattern (a case-insensitive regular "
        "expression) is found in the call's input, for its tool and project (or any).",
    )
    actions = lessons.add_subparsers(dest="action", metavar="<action>", required=True)

    listing = actions.add_parser("list", parents=[plain], help="list lessons, newest first")
    listing.add_argument("--project", help="only this project's lessons and those for all")
    listing.add_argument("--active-only", action="store_true", help="leave out disabled ones")

    add = actions.add_parser("add", parents=[plain], help="add a lesson")
    add.add_argument("pattern", help="regular expression looked for in the call's input")
    add.add_argument("message", help="what the agent should know before the call")
    add.add_argument("--tool", default="", help="only calls of this tool, e.g. Bash (default any)")
    add.add_argument("--project", default="", help="only in this project (default all)")
    add.add_argument(
        "--ask", action="store_true", help="also make Claude Code ask before the call runs"
    )

    edit = actions.add_parser("edit", parents=[plain], help="change fields of a lesson")
    edit.add_argument("id", type=int, help="the lesson's id")
    edit.add_argument("--pattern", help="a new regular expression")
    edit.add_argument("--message", help="a new message")
    edit.add_argument("--tool", help="a tool name, or '' for any tool")
    edit.add_argument("--project", help="a project, or '' for all projects")
    edit.add_argument("--strictness", choices=STRICTNESS, help="warn, or ask before the call")

    propose = actions.add_parser(
        "propose",
        parents=[plain],
        help="propose lessons from corrections in the journal (stored inactive)",
        description="Reads the sessions whose journal changed since the last run and stores "
        "each lesson a correction of the agent's calls suggests, inactive, for you to accept "
        "(`lessons enable ID`) or dismiss (`lessons disable ID`).",
    )
    propose.add_argument("--project", help="only this project's sessions")
    propose.add_argument("--dry-run", action="store_true", help="print them, store nothing")
    propose.add_argument(
        "--rescan", action="store_true", help="read every session again, not only changed ones"
    )

    for name, summary in (
        ("disable", "stop applying a lesson (it is kept; for a proposal: dismiss it)"),
        ("enable", "apply a disabled lesson again (for a proposal: accept it)"),
    ):
        toggle = actions.add_parser(name, parents=[plain], help=summary)
        toggle.add_argument("id", type=int, help="the lesson's id")

    lessons.set_defaults(run=cmd_lessons)


def cmd_lessons(args: argparse.Namespace, settings: Settings) -> int:
    from server.service.runtime import open_service

    if args.action == "propose":
        return _cmd_propose(args, settings)

    async def run(action: LessonAction) -> Lesson | list[Lesson]:
        async with open_service(settings, needs_model=False) as service:
            return await action(service)

    try:
        result = asyncio.run(run(_action(args)))
    except ServiceError as exc:
        raise StartupError(exc.message) from None
    if isinstance(result, list):
        _print_lessons(result, args.plain)
    elif args.plain:
        print(plain_line(result))  # noqa: T201
    else:
        print(json.dumps(to_json(result)))  # noqa: T201
    return 0


def _action(args: argparse.Namespace) -> LessonAction:
    """The service call for `args.action`.

    A pattern or message the service would refuse is refused here first, so a typo in a regular
    expression fails at once rather than after the database and model are up.
    """
    from server.domain.lessons import checked_message, checked_pattern

    if getattr(args, "pattern", None) is not None:
        checked_pattern(args.pattern)
    if getattr(args, "message", None) is not None:
        checked_message(args.message)
    if args.action == "list":
        return lambda service: service.lessons(args.project, include_inactive=not args.active_only)
    if args.action == "add":
        draft = LessonDraft(
            pattern=args.pattern,
            message=args.message,
            tool=args.tool,
            project=args.project,
            strictness="ask" if args.ask else "warn",
            origin="user",
        )
        return lambda service: service.add_lesson(draft)
    if args.action == "edit":
        change = LessonChange(
            tool=args.tool,
            pattern=args.pattern,
            project=args.project,
            message=args.message,
            strictness=args.strictness,
        )
        if change == LessonChange():
            raise StartupError(
                "say what to change: --pattern, --message, --tool, --project or --strictness"
            )
    else:
        change = LessonChange(active=args.action == "enable")
    return lambda service: service.update_lesson(args.id, change)


def _cmd_propose(args: argparse.Namespace, settings: Settings) -> int:
    from server.learning.lesson_proposals_job import propose_lessons
    from server.service.runtime import open_service

    async def run() -> dict[str, Any]:
        async with open_service(settings, needs_model=False) as service:
            summary = await propose_lessons(
                service, project=args.project, dry_run=args.dry_run, rescan=args.rescan
            )
        return summary.as_json()

    try:
        summary = asyncio.run(run())
    except ServiceError as exc:
        raise StartupError(exc.message) from None
    if not args.plain:
        print(json.dumps(summary))  # noqa: T201
        return 0
    verb = "would propose" if summary["dry_run"] else "proposed"
    print(  # noqa: T201
        f"{summary['sessions']} sessions read; {verb} {summary['proposed']} lessons"
        f" ({summary['known']} already known)"
    )
    for lesson in summary["lessons"]:
        ident = f"#{lesson['id']}" if "id" in lesson else "-"
        print(  # noqa: T201
            f"{ident} {lesson['tool'] or 'any tool'} /{lesson['pattern']}/"
            f" [{lesson['project'] or 'all projects'}] {lesson['message']}"
        )
    return 0


def _print_lessons(lessons: list[Lesson], plain: bool) -> None:
    if not plain:
        print(json.dumps({"lessons": to_json(lessons)}))  # noqa: T201
    elif lessons:
        print("\n".join(plain_line(lesson) for lesson in lessons))  # noqa: T201
    else:
        print("no lessons")  # noqa: T201


def plain_line(lesson: Lesson) -> str:
    """`#3 [ask] Bash /staging/ [all projects] Run load tests locally`, for people."""
    line = (
        f"#{lesson.id} [{lesson.strictness}] {lesson.tool or 'any tool'} /{lesson.pattern}/ "
        f"[{lesson.project or 'all projects'}] {' '.join(lesson.message.split())}"
    )
    if lesson.proposed:
        return f"{line} (proposed, from {lesson.origin})"
    return line if lesson.active else f"{line} (disabled)"
