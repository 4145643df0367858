"""The batch-job subcommands: import, distill, signals, behavior, profile, export-training.

Registered by server/cli/main.py. Like the other commands, heavy modules are imported inside the
command that needs them; each prints a human summary (or JSON with `--json`) and exits 1 only
when the job could do nothing at all.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from server.agents.registry import SESSION_FORMATS
from server.core.access import Viewer, acting_as
from server.core.config import Settings
from server.core.errors import ServiceError, StartupError
from server.domain.training import (
    DEFAULT_MAX_MESSAGE_CHARS,
    DEFAULT_MAX_RECORD_CHARS,
    DEFAULT_VALIDATION_SHARE,
)
from server.ingest.agent_format import AgentFormat

if TYPE_CHECKING:
    from server.ingest.importer import ImportSummary
    from server.learning.agent_models import RunBudget
    from server.learning.llm import JsonModel
    from server.service.memory import MemoryService


FORMATS = list(SESSION_FORMATS.values())


def option_dest(agent: AgentFormat) -> str:
    """The argparse destination of the agent's `import --<source>` option."""
    return agent.source.replace("-", "_")


class JobSummary(Protocol):
    def as_json(self) -> dict[str, object]: ...


class LlmJob(Protocol):
    """Distiller or BehaviorReader, as the CLI drives them."""

    async def run(self, *, project: str | None, session: str | None) -> JobSummary: ...


def add_job_commands(commands: Any) -> None:
    """Add the job subcommands to `commands` (an argparse subparsers object)."""
    importer = commands.add_parser(
        "import",
        help="import sessions, exports, notes or memory files",
        description="Import into memory. Give one or more sources; re-running imports only "
        "what is new.",
    )
    for agent in FORMATS:
        importer.add_argument(
            f"--{agent.source}",
            dest=option_dest(agent),
            nargs="?",
            const="",
            metavar="DIR",
            help=f"{agent.folder} under DIR (default: {agent.default_folder})",
        )
    importer.add_argument(
        "--agents",
        action="store_true",
        help="the sessions of every agent whose default folder exists ("
        + ", ".join(agent.label for agent in FORMATS)
        + "): what the hourly job runs",
    )
    importer.add_argument("--claude-ai", metavar="FILE", help="claude.ai export: .zip or .json")
    importer.add_argument(
        "--text", nargs="+", metavar="PATH", help="Markdown/text files or folders"
    )
    importer.add_argument("--memories", metavar="FILE", help="a file written by export (.jsonl)")
    importer.add_argument(
        "--from",
        dest="from_tool",
        action="append",
        nargs="+",
        metavar=("NAME", "PATH"),
        help="memories kept by another tool: claude-mem, claude-md (or instructions), mem0, "
        "markdown or trajectories, read from PATH (or the tool's default place); may be repeated",
    )
    importer.add_argument("--project", help="only this project (display name or path)")
    importer.add_argument("--since", help="only turns from this time on (ISO 8601 or 7d / 12h)")
    importer.add_argument(
        "--min-length",
        type=int,
        default=50,
        help="skip turns shorter than this (default 50); short corrections are kept",
    )
    importer.add_argument("--dry-run", action="store_true", help="report, write nothing")
    importer.add_argument("--json", action="store_true", help="print the summary as JSON")
    importer.add_argument(
        "--user",
        metavar="NAME",
        help="on a team's server: import as this user (their sessions and memories)",
    )
    importer.set_defaults(run=cmd_import)

    distill = commands.add_parser(
        "distill",
        help="distill imported sessions into durable memories with the LLM"
        " (CLAUDE_MEMORY_LLM_PROVIDER: a local one, or your agent's own after `llm use`)",
    )
    distill.add_argument("--project", help="only sessions of this project")
    distill.add_argument("--session", metavar="ID", help="only this session (id or unique prefix)")
    distill.add_argument("--model", help="the LLM model (default: CLAUDE_MEMORY_DISTILL_MODEL)")
    distill.add_argument(
        "--workers", type=int, help="sessions at a time (default: CLAUDE_MEMORY_DISTILL_WORKERS)"
    )
    distill.add_argument(
        "--reset-failures",
        nargs="?",
        const="",
        metavar="ID",
        help="make failed sessions (all, or this one) pending again, then exit",
    )
    distill.add_argument(
        "--dry-run",
        action="store_true",
        help="list what would be sent, where, and its size; send nothing",
    )
    distill.add_argument("--json", action="store_true", help="print the summary as JSON")
    distill.set_defaults(run=cmd_distill)

    behavior = commands.add_parser(
        "behavior", help="learn how the user works from distilled sessions, with the LLM"
    )
    behavior.add_argument("--project", help="only sessions of this project")
    behavior.add_argument("--session", metavar="ID", help="only this session (id or prefix)")
    behavior.add_argument("--model", help="the LLM model (default: CLAUDE_MEMORY_DISTILL_MODEL)")
    behavior.add_argument(
        "--workers", type=int, help="sessions at a time (default: CLAUDE_MEMORY_DISTILL_WORKERS)"
    )
    behavior.add_argument(
        "--force", action="store_true", help="read sessions again, replacing what they gave"
    )
    behavior.add_argument("--dry-run", action="store_true", help="list sessions, send nothing")
    behavior.add_argument("--json", action="store_true", help="print the summary as JSON")
    behavior.set_defaults(run=cmd_behavior)

    signals = commands.add_parser(
        "signals", help="learn corrections and habits from sessions (no LLM)"
    )
    signals.add_argument("--project", help="only sessions of this project")
    signals.add_argument("--dry-run", action="store_true", help="report, write nothing")
    signals.add_argument("--json", action="store_true", help="print the summary as JSON")
    signals.set_defaults(run=cmd_signals)

    backup = commands.add_parser("backup", help="dump the database to a file (pg_dump)")
    backup.add_argument("--out", metavar="DIR", help="folder (default: <data dir>/backups)")
    backup.add_argument("--keep", type=int, default=7, help="newest backups to keep (default 7)")
    backup.add_argument("--json", action="store_true", help="print the summary as JSON")
    backup.set_defaults(run=cmd_backup)

    restore = commands.add_parser(
        "restore", help="replace the database with a backup (checked before the swap)"
    )
    restore.add_argument("file", help="a file written by `claude-memory backup`")
    restore.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    restore.add_argument(
        "--with-users",
        action="store_true",
        help="also restore users (tokens) this store does not hold; without it such a backup"
        " is refused",
    )
    restore.add_argument("--json", action="store_true", help="print the summary as JSON")
    restore.set_defaults(run=cmd_restore)

    profile = commands.add_parser(
        "profile", help="write a compact user profile to ~/.claude/user.md"
    )
    profile.add_argument(
        "--output", metavar="FILE", help="where to write (default ~/.claude/user.md)"
    )
    profile.add_argument(
        "--patch-claude-md",
        action="store_true",
        help="also add a pointer to it in ~/.claude/CLAUDE.md (once)",
    )
    profile.add_argument("--json", action="store_true", help="print the summary as JSON")
    profile.set_defaults(run=cmd_profile)

    training = commands.add_parser(
        "export-training",
        help="write Claude Code sessions as a chat dataset for fine-tuning (no database)",
        description="One record per prompt, in the OpenAI tool-calling chat format: redacted, "
        "deduplicated, validated, split into train.jsonl and validation.jsonl by session.",
    )
    training.add_argument(
        "--out", metavar="DIR", help="folder to write to (default: <data dir>/training)"
    )
    training.add_argument(
        "--claude-code",
        metavar="DIR",
        help="Claude Code sessions under DIR (default: $CLAUDE_CONFIG_DIR/projects, "
        "else ~/.claude/projects)",
    )
    training.add_argument("--project", help="only this project (display name or path)")
    training.add_argument(
        "--validation-share",
        type=float,
        default=DEFAULT_VALIDATION_SHARE,
        metavar="FRACTION",
        help=f"share of sessions for validation, 0 to under 1 (default {DEFAULT_VALIDATION_SHARE})",
    )
    training.add_argument(
        "--max-chars",
        type=int,
        default=DEFAULT_MAX_RECORD_CHARS,
        metavar="N",
        help=f"longest record, in characters of its JSON line (default {DEFAULT_MAX_RECORD_CHARS})",
    )
    training.add_argument(
        "--max-message-chars",
        type=int,
        default=DEFAULT_MAX_MESSAGE_CHARS,
        metavar="N",
        help="longest message; longer tool results are cut to it "
        f"(default {DEFAULT_MAX_MESSAGE_CHARS})",
    )
    training.add_argument("--dry-run", action="store_true", help="report, write nothing")
    training.add_argument("--json", action="store_true", help="print the summary as JSON")
    training.set_defaults(run=cmd_export_training)


def cmd_import(args: argparse.Namespace, settings: Settings) -> int:
    from server.cli.adapt import adapt_offer
    from server.core.timeparse import parse_optional_time
    from server.ingest.documents import import_claude_ai, import_memories, import_text
    from server.ingest.from_tools import import_from_tool
    from server.ingest.importer import ImportFilters, SessionImporter
    from server.jobs.progress import ProgressLine
    from server.service.runtime import open_service

    sessions = _session_folders(args)
    tools = _tool_paths(args)
    others = (args.claude_ai, args.text, args.memories, args.from_tool)
    if not sessions and not args.agents and all(x is None for x in others):
        raise StartupError(
            "say what to import: "
            + "".join(f"--{name}, " for name in SESSION_FORMATS)
            + "--agents, --claude-ai, --text, --memories or --from NAME"
        )
    if args.min_length < 0:
        raise StartupError("--min-length must be 0 or more")
    try:
        since = parse_optional_time(args.since, "--since")
    except ServiceError as exc:
        raise StartupError(exc.message) from None
    filters = ImportFilters(project=args.project, since=since, min_length=args.min_length)

    async def run() -> list[ImportSummary]:
        # A dry run only reads and counts: it needs no embedding model (seconds to load).
        async with open_service(settings, needs_model=not args.dry_run) as service:
            with acting_as(await _user_viewer(service, args.user)):
                return await import_all(service)

    async def import_all(service: MemoryService) -> list[ImportSummary]:
        summaries = []
        for agent, root in sessions:
            with ProgressLine(f"{agent.source} sessions", sys.stderr) as progress:
                importer = SessionImporter(
                    service,
                    filters,
                    agent=agent,
                    dry_run=args.dry_run,
                    progress=progress.update,
                )
                summaries.append(await importer.run(root))
        if args.claude_ai is not None:
            summaries.append(
                await import_claude_ai(
                    service,
                    Path(args.claude_ai).expanduser(),
                    min_length=args.min_length,
                    dry_run=args.dry_run,
                )
            )
        if args.text is not None:
            paths = [Path(p).expanduser() for p in args.text]
            summaries.append(await import_text(service, paths, dry_run=args.dry_run))
        if args.memories is not None:
            summaries.append(
                await import_memories(
                    service, Path(args.memories).expanduser(), dry_run=args.dry_run
                )
            )
        for name, paths in tools:
            summaries.append(
                await import_from_tool(service, name, paths, filters=filters, dry_run=args.dry_run)
            )
        return summaries

    summaries = asyncio.run(run())
    if args.json:
        print(json.dumps([s.as_json() for s in summaries]))  # noqa: T201
    else:
        for summary in summaries:
            _print_import_summary(summary)
    if not args.dry_run:
        offer = adapt_offer(sum(s.turns_imported for s in summaries), settings)
        if offer:
            print(offer, file=sys.stderr)  # noqa: T201
    return 1 if any(s.nothing_imported_and_failed for s in summaries) else 0


async def _user_viewer(service: MemoryService, name: str | None) -> Viewer | None:
    """The viewer for `--user NAME` (None without it)."""
    if name is None:
        return None
    try:
        return await service.users.viewer_by_name(name)
    except ServiceError as exc:
        raise StartupError(exc.message) from None


def _session_folders(args: argparse.Namespace) -> list[tuple[AgentFormat, Path]]:
    """Each agent to import and its folder: the one given, else the agent's default.

    `--agents` takes every agent whose default folder exists, so the hourly job imports what
    is on the machine and says nothing about agents never installed.
    """
    folders = []
    for agent in FORMATS:
        default = agent.default_root(os.environ, Path.home())
        given = getattr(args, option_dest(agent), None)
        if given:
            folders.append((agent, Path(given).expanduser()))
        elif given is not None or (args.agents and default.is_dir()):
            folders.append((agent, default))
    return folders


def _tool_paths(args: argparse.Namespace) -> list[tuple[str, list[Path]]]:
    """Each `--from NAME [PATH ...]`: the paths given, else the tool's default places."""
    from server.ingest.from_tools import known_tool

    tools = []
    for name, *given in args.from_tool or []:
        try:
            tool = known_tool(name)
        except ServiceError as exc:
            raise StartupError(exc.message) from None
        paths = [Path(p).expanduser() for p in given]
        paths = paths or tool.default_paths(os.environ, Path.home(), Path.cwd())
        if not paths:
            raise StartupError(f"--from {name} needs a PATH: the export file or folder to read")
        tools.append((name, paths))
    return tools


def _print_import_summary(summary: ImportSummary) -> None:
    """The human form of an ImportSummary, on stdout."""
    from server.ingest.from_tools import ToolImportSummary

    verb = "would import" if summary.dry_run else "imported"
    skipped = ", ".join(f"{n} {reason}" for reason, n in sorted(summary.turns_skipped.items()) if n)
    sessions = f" from {summary.sessions} sessions" if summary.sessions else ""
    lines = [
        f"{summary.source}: {verb} {summary.turns_imported} memories{sessions} "
        f"in {summary.seconds:.1f}s",
        f"  files: {summary.files_found} found, {summary.files_read} read, "
        f"{summary.files_unchanged} unchanged, {summary.files_failed} failed",
        f"  duplicates: {summary.turns_duplicate}; redactions: {summary.redactions}; "
        f"tool events: {summary.events}; malformed lines: {summary.malformed_lines}",
        f"  skipped: {skipped or 'none'}",
    ]
    if isinstance(summary, ToolImportSummary) and summary.preview is not None:
        lines += summary.preview.lines()
    lines += [f"  error: {error}" for error in summary.errors[:20]]
    if len(summary.errors) > 20:
        lines.append(f"  ... and {len(summary.errors) - 20} more errors")
    print("\n".join(lines))  # noqa: T201


def _print_summary(title: str, summary: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(summary))  # noqa: T201
        return
    lines = [title]
    for key, value in summary.items():
        if isinstance(value, list):
            lines += [f"  {key}:"] + [f"    - {item}" for item in value[:30]]
            if len(value) > 30:
                lines.append(f"    ... and {len(value) - 30} more")
        elif value is not None:
            lines.append(f"  {key}: {value}")
    print("\n".join(lines))  # noqa: T201


@dataclass(frozen=True, slots=True)
class LlmRun:
    """What an LLM job is given: the model (an endpoint's or an agent CLI's), its name, and
    with an agent's model the run's budget and the window size that makes a session one
    request."""

    client: JsonModel
    model: str
    workers: int
    progress: Callable[[int, int], None]
    budget: RunBudget | None = None
    context_tokens: int | None = None


def _run_llm_job(
    args: argparse.Namespace,
    settings: Settings,
    name: str,
    build: Callable[[MemoryService, LlmRun], LlmJob],
) -> int:
    """Open the service and the model, run one job, print its summary; 1 if it stopped.

    The model is CLAUDE_MEMORY_LLM_PROVIDER's: the OpenAI-compatible endpoint, or an agent's
    CLI (one session at a time unless --workers says otherwise), whose receipt is also
    appended to <data dir>/logs/llm-receipts.jsonl.
    """
    from server.jobs.progress import ProgressLine
    from server.learning.agent_models import RunBudget, model_name, open_model, provider_of
    from server.learning.llm import ChatClient, LlmError
    from server.service.runtime import open_service

    agent = None if settings.llm_provider == "openai" else settings.llm_provider
    if agent is not None:
        try:
            provider = provider_of(agent)
        except LlmError as exc:
            raise StartupError(str(exc)) from None
    workers = args.workers or (1 if agent else settings.distill_workers)
    if workers < 1:
        raise StartupError("--workers must be 1 or more")

    # Distill's dry run and --reset-failures never embed: no model to load (seconds) for them.
    resetting = name == "distill" and args.reset_failures is not None
    needs_model = not (name == "distill" and (args.dry_run or resetting))

    async def run() -> dict[str, object]:
        async with open_service(settings, needs_model=needs_model) as service:
            if resetting:
                return {"reset": await service.reset_distill_failures(args.reset_failures or None)}
            with ProgressLine(name, sys.stderr) as progress:
                if agent is not None:
                    cli = open_model(
                        agent, settings.claude_memory_home, timeout=settings.llm_timeout_seconds
                    )
                    budget = RunBudget(
                        provider,
                        settings.llm_max_sessions_per_run,
                        settings.llm_max_input_tokens_per_run,
                        usage=cli.usage,
                    )
                    llm_run = LlmRun(
                        cli,
                        args.model or model_name(agent, settings.llm_model),
                        workers,
                        progress.update,
                        budget,
                        max(provider.context_tokens, settings.distill_context_tokens),
                    )
                    summary = await build(service, llm_run).run(
                        project=args.project, session=args.session
                    )
                    return summary.as_json()
                api_key = settings.llm_api_key.reveal() if settings.llm_api_key else None
                async with ChatClient(
                    settings.ollama_url, api_key=api_key, timeout=settings.llm_timeout_seconds
                ) as client:
                    llm_run = LlmRun(
                        client, args.model or settings.distill_model, workers, progress.update
                    )
                    summary = await build(service, llm_run).run(
                        project=args.project, session=args.session
                    )
        return summary.as_json()

    try:
        result = asyncio.run(run())
    except ServiceError as exc:
        raise StartupError(exc.message) from None
    _print_summary(f"{name}:", result, args.json)
    if agent is not None and not args.dry_run and isinstance(result.get("llm"), dict):
        _record_receipt(settings, name, result)
    if result.get("stopped"):
        print(f"claude-memory: {name} stopped: {result['stopped']}", file=sys.stderr)  # noqa: T201
        return 1
    return 0


def _record_receipt(settings: Settings, name: str, result: dict[str, object]) -> None:
    """One JSON line per run that used an agent's model: when, which job, what it cost."""
    from datetime import UTC, datetime

    folder = settings.claude_memory_home / "logs"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    line = {
        "at": datetime.now(tz=UTC).isoformat(timespec="seconds"),
        "job": name,
        **cast("dict[str, object]", result["llm"]),
        "stopped": result.get("stopped"),
        "left_pending": result.get("left_pending"),
    }
    with (folder / "llm-receipts.jsonl").open("a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


def cmd_distill(args: argparse.Namespace, settings: Settings) -> int:
    from server.learning.distill import Distiller

    return _run_llm_job(
        args,
        settings,
        "distill",
        lambda service, run: Distiller(
            service,
            run.client,
            model=run.model,
            workers=run.workers,
            dry_run=args.dry_run,
            progress=run.progress,
            budget=run.budget,
            context_tokens=run.context_tokens,
        ),
    )


def cmd_behavior(args: argparse.Namespace, settings: Settings) -> int:
    from server.learning.behavior import BehaviorReader

    return _run_llm_job(
        args,
        settings,
        "behavior",
        lambda service, run: BehaviorReader(
            service,
            run.client,
            model=run.model,
            workers=run.workers,
            force=args.force,
            dry_run=args.dry_run,
            progress=run.progress,
            budget=run.budget,
            context_tokens=run.context_tokens,
        ),
    )


def cmd_signals(args: argparse.Namespace, settings: Settings) -> int:
    from server.learning.signals_job import mine_signals
    from server.service.runtime import open_service

    async def run() -> dict[str, Any]:
        async with open_service(settings) as service:
            summary = await mine_signals(service, project=args.project, dry_run=args.dry_run)
        return summary.as_json()

    _print_summary("signals:", asyncio.run(run()), args.json)
    return 0


def cmd_profile(args: argparse.Namespace, settings: Settings) -> int:
    from datetime import UTC, datetime

    from server.learning.profile import (
        CLAUDE_MD,
        claude_dir,
        current_user,
        patch_claude_md,
        render_profile,
        write_atomically,
    )
    from server.service.runtime import open_service

    folder = claude_dir(dict(os.environ), Path.home())
    output = Path(args.output).expanduser() if args.output else folder / "user.md"

    async def run() -> dict[str, Any]:
        async with open_service(settings) as service:
            tiers = await service.preferences()
            projects = await service.projects()
        text = render_profile(
            tiers, projects, user=current_user(), generated_at=datetime.now(tz=UTC)
        )
        write_atomically(output, text)
        patched = patch_claude_md(folder / CLAUDE_MD, output) if args.patch_claude_md else False
        return {"profile": str(output), "characters": len(text), "claude_md_patched": patched}

    _print_summary("profile:", asyncio.run(run()), args.json)
    return 0


def cmd_export_training(args: argparse.Namespace, settings: Settings) -> int:
    from server.ingest.discovery import default_projects_root
    from server.jobs.training_export import ExportOptions, export_training

    if not 0 <= args.validation_share < 1:
        raise StartupError("--validation-share must be from 0 to under 1")
    if min(args.max_chars, args.max_message_chars) < 100:
        raise StartupError("--max-chars and --max-message-chars must be 100 or more")
    root = (
        Path(args.claude_code).expanduser()
        if args.claude_code
        else default_projects_root(dict(os.environ), Path.home())
    )
    if not root.is_dir():
        raise StartupError(f"{root} is not a folder of Claude Code projects")
    out = Path(args.out).expanduser() if args.out else settings.claude_memory_home / "training"
    options = ExportOptions(
        out=out,
        project=args.project,
        validation_share=args.validation_share,
        max_message_chars=args.max_message_chars,
        max_record_chars=args.max_chars,
        dry_run=args.dry_run,
    )
    summary = export_training(root, options)
    _print_summary("export-training:", summary.as_json(), args.json)
    if summary.written == 0:
        raise StartupError(
            f"no valid training records in {root} ({summary.prompts} prompts, "
            f"{summary.rejected} rejected, {summary.interrupted} interrupted); nothing written"
        )
    return 0


def cmd_backup(args: argparse.Namespace, settings: Settings) -> int:
    from dataclasses import asdict

    from server.jobs.backup import backup
    from server.service.runtime import open_database

    if args.keep < 1:
        raise StartupError("--keep must be 1 or more")
    out_dir = Path(args.out).expanduser() if args.out else settings.claude_memory_home / "backups"

    async def run() -> dict[str, Any]:
        async with open_database(settings) as url:
            result = await asyncio.to_thread(backup, url, out_dir, args.keep)
        return asdict(result)

    _print_summary("backup:", asyncio.run(run()), args.json)
    return 0


def cmd_restore(args: argparse.Namespace, settings: Settings) -> int:
    from dataclasses import asdict
    from functools import partial

    from server.db.restore_check import named
    from server.jobs.backup import UsersInBackup, preview_restore, restore
    from server.service.runtime import open_database

    file = Path(args.file).expanduser()
    if not args.yes and not sys.stdin.isatty():
        raise StartupError("restore replaces every memory: add --yes to confirm")

    async def run() -> dict[str, Any] | None:
        async with open_database(settings) as url:
            # Who the backup lets in is said before anything is asked or loaded (#65).
            preview = await asyncio.to_thread(preview_restore, url, file)
            if preview.new_users and not args.with_users:
                raise UsersInBackup(preview.new_users)
            if not args.yes:
                holds = f" It holds users: {named(preview.users)}." if preview.users else ""
                question = f"Replace all memories with the backup {file}?{holds} [y/N] "
                answer = await asyncio.to_thread(input, question)
                if answer.strip().lower() not in ("y", "yes"):
                    return None
            result = await asyncio.to_thread(
                partial(restore, url, file, with_users=args.with_users)
            )
        return asdict(result)

    result = asyncio.run(run())
    if result is None:
        print("restore: nothing changed")  # noqa: T201
        return 1
    _print_summary("restore:", result, args.json)
    return 0


def add_hook_commands(commands: Any) -> None:
    """Add `hook`, `install-hooks` and `uninstall-hooks` to `commands` (argparse subparsers)."""
    from server.agent_facts import DEFAULT
    from server.agent_facts.every import ABOUT

    events = [argument for _, argument, _, _ in ABOUT[DEFAULT].HOOKS]
    hook = commands.add_parser(
        "hook",
        help="run a Claude Code hook: event JSON on stdin, context on stdout; always exits 0",
    )
    hook.add_argument("event", choices=sorted(events), help="which hook")
    hook.add_argument(
        "--url", help="the server (default: from CLAUDE_MEMORY_HOST and CLAUDE_MEMORY_PORT)"
    )
    hook.set_defaults(run=cmd_hook)

    install = commands.add_parser(
        "install-hooks",
        help="register the hooks in Claude Code's settings.json (keeps other hooks, backs up)",
    )
    uninstall = commands.add_parser(
        "uninstall-hooks", help="remove our hooks, and only ours, from Claude Code's settings.json"
    )
    for parser in (install, uninstall):
        parser.add_argument(
            "--settings",
            metavar="FILE",
            help="settings file (default: $CLAUDE_CONFIG_DIR/settings.json, else "
            "~/.claude/settings.json)",
        )
        parser.add_argument("--dry-run", action="store_true", help="print the diff, write nothing")
        parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    install.add_argument(
        "--url", help="the server the hooks call (default: the settings' host and port)"
    )
    install.add_argument(
        "--no-check",
        dest="check",
        action="store_false",
        help="write the URL without first checking that a claude-memory server answers there "
        "(install-hooks refuses otherwise; a dry run never checks)",
    )
    install.set_defaults(run=cmd_install_hooks)
    uninstall.set_defaults(run=cmd_uninstall_hooks)


def _hook_url(settings: Settings) -> str:
    host = "127.0.0.1" if settings.host in ("0.0.0.0", "::", "") else settings.host
    return f"http://[{host}]:{settings.port}" if ":" in host else f"http://{host}:{settings.port}"


def _hook_settings_file(args: argparse.Namespace) -> Path:
    from server.jobs.hook_install import settings_path

    if args.settings:
        return Path(args.settings).expanduser()
    return settings_path(dict(os.environ), Path.home())


def cmd_hook(args: argparse.Namespace, settings: Settings) -> int:
    """The same client Claude Code runs (server/hooks.py); registered hooks call it directly."""
    from server.hooks import main as run_hook

    return run_hook([args.event, "--url", args.url or _hook_url(settings)])


def cmd_install_hooks(args: argparse.Namespace, settings: Settings) -> int:
    from datetime import UTC, datetime

    from server.jobs.agent_files import backups_folder
    from server.jobs.hook_install import HookSettingsError, hook_command, install

    url = (args.url or _hook_url(settings)).rstrip("/")
    if not url.startswith("http://"):
        raise StartupError(f"--url must be an http:// URL of the local server, got {url!r}")
    if args.check and not args.dry_run:
        from server.cli.connect import require_server
        from server.jobs.connect import ConnectError

        try:
            require_server(url, settings)
        except ConnectError as exc:
            raise StartupError(str(exc)) from None
    try:
        change = install(
            _hook_settings_file(args),
            url,
            now=datetime.now(tz=UTC),
            backups=backups_folder(settings.claude_memory_home),
            dry_run=args.dry_run,
        )
    except HookSettingsError as exc:
        raise StartupError(str(exc)) from None
    _report_hook_change("install-hooks:", change, args, hook_command("user-prompt-submit", url))
    return 0


def cmd_uninstall_hooks(args: argparse.Namespace, settings: Settings) -> int:
    from datetime import UTC, datetime

    from server.jobs.agent_files import backups_folder
    from server.jobs.hook_install import HookSettingsError, uninstall

    try:
        change = uninstall(
            _hook_settings_file(args),
            now=datetime.now(tz=UTC),
            backups=backups_folder(settings.claude_memory_home),
            dry_run=args.dry_run,
        )
    except HookSettingsError as exc:
        raise StartupError(str(exc)) from None
    _report_hook_change("uninstall-hooks:", change, args, None)
    return 0


def _report_hook_change(
    title: str, change: Any, args: argparse.Namespace, command: str | None
) -> None:
    """A dry run prints the diff (nothing when there is no change); a real run a summary."""
    if args.dry_run and not args.json:
        print(change.diff or f"{change.settings}: no change", end="" if change.diff else "\n")  # noqa: T201
        return
    summary: dict[str, Any] = {
        "settings": str(change.settings),
        "changed": change.changed,
        "dry_run": args.dry_run,
        "backup": str(change.backup) if change.backup else None,
        "events": change.events,
    }
    if command is not None:
        summary["command"] = command
    if args.dry_run:
        summary["diff"] = change.diff
    _print_summary(title, summary, args.json)
