"""Import a session as soon as its agent's hooks report the end of a turn or session.

The hook sends the session file the agent is writing. In single-user mode the file must lie
under that agent's own session folder on this machine (its `default_root`, after symlinks and
`..` are resolved) and have the shape of one of its session files (the `hook_path` of its
AgentFormat, beside its reader); it is then imported in the background, incrementally, with
the agent's reader, exactly as `claude-memory import --<agent>` would (the same read
positions), so memory is fresh without waiting for the hourly import and before an agent
deletes old sessions. Any refusal has one message, so a caller learns nothing of which files
exist. One queue for every agent: imports run one at a time, and a request for a file that is
being imported makes it run once more afterwards.

On a team's server (a user is asking) a path a hook sends is never opened: it is only a name
the caller chose, and the server's account can read every user's files on a shared machine,
so it would import one user's session as another's (#54). The user's own import
(`claude-memory import --user NAME`) brings those sessions instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from pathlib import Path
from typing import Literal

import anyio

from server.core.access import current_viewer
from server.core.errors import InvalidInput
from server.ingest.agent_format import AgentFormat
from server.ingest.claude_code import CLAUDE_CODE
from server.ingest.hook_sessions import NotWrittenYet
from server.ingest.importer import ImportFilters, ImportSummary, SessionImporter
from server.service.memory import MemoryService

logger = logging.getLogger(__name__)

SHUTDOWN_GRACE_SECONDS = 10.0  # running session imports may finish before the app stops

# The one answer to every path that is refused, whether it is missing, outside the agent's
# folder, of the wrong shape or unreadable: a caller cannot probe for files with it.
REFUSED = (
    "transcript_path is not a session file this server reads for hooks: it must be one of the"
    " agent's own session files, under its session folder on the server's machine"
)
TEAM_NOT_READ = (
    "a team's server does not open session files a hook names; the user's own"
    " `claude-memory import --user NAME` imports them"
)

# A session file the agent has not written yet (Copilot may run its Stop hook before it first
# writes the session's events): nothing to import now, and nothing is kept waiting for it.
NOT_YET = (
    "nothing to import yet: the agent has not written that session file; the next session-end"
    " hook or the next import run reads it"
)

Requested = Literal["importing", "queued", "not_read", "not_yet"]


def sessions_folder(agent: AgentFormat) -> Path:
    """Where `agent` keeps its sessions on this machine, symlinks resolved."""
    return Path(os.path.realpath(agent.default_root(os.environ, Path.home())))


def hook_session_path(agent: AgentFormat, raw: str) -> Path | None:
    """The session file a hook names, when it is one of `agent`'s own under its session folder
    (checked on the path with symlinks and `..` resolved, before anything else is looked at);
    None when it has that shape there but the agent has not written it yet (an agent whose
    `hook_path` says so: Copilot); InvalidInput with one message, REFUSED, otherwise."""
    if not raw or "\0" in raw or not os.path.isabs(raw):
        raise InvalidInput(REFUSED)
    path = Path(os.path.normpath(raw))
    # (An OpenCode session is `<database>/<session id>`: what resolves is its database.)
    if not Path(os.path.realpath(path)).is_relative_to(sessions_folder(agent)):
        raise InvalidInput(REFUSED)
    try:
        return agent.hook_path(str(path))
    except NotWrittenYet:
        return None
    except (InvalidInput, OSError, ValueError):
        raise InvalidInput(REFUSED) from None


async def import_session(
    service: MemoryService,
    transcript: Path,
    agent: AgentFormat = CLAUDE_CODE,
    session_id: str = "",
    lock: asyncio.Lock | None = None,
) -> ImportSummary:
    """Import one session's files from where earlier imports stopped, with `agent`'s reader.

    The session's files are listed before `lock` is taken: listing reads a file someone else
    may have written (an OpenCode database), and other imports need not wait for that.
    """
    files = await anyio.to_thread.run_sync(agent.hook_files, transcript, session_id)
    async with lock or contextlib.nullcontext():
        return await SessionImporter(service, ImportFilters(), agent=agent).run_files(files)


class SessionImports:
    """Background imports of single sessions: one at a time, repeated if asked again meanwhile."""

    def __init__(self, service: MemoryService) -> None:
        self.service = service
        self._lock = asyncio.Lock()
        self._again: dict[Path, bool] = {}  # files queued or importing -> asked again since
        # file -> (agent, session id), while the file is queued or being imported
        self._sessions: dict[Path, tuple[AgentFormat, str]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False

    async def close(self, grace_seconds: float = SHUTDOWN_GRACE_SECONDS) -> None:
        """Refuse new imports, let running ones finish for `grace_seconds`, then cancel them.

        Called when the app stops, so no import outlives the app and holds on to the pool.
        A cancelled import loses nothing: each file's turns and read position are written in
        one transaction, and the next import resumes from the last committed position.
        """
        self._closed = True
        if not self._tasks:
            return
        _, pending = await asyncio.wait(set(self._tasks), timeout=grace_seconds)
        for task in pending:
            task.cancel()
        if pending:
            logger.warning("stopping: %d session import(s) cancelled", len(pending))
            await asyncio.gather(*pending, return_exceptions=True)

    def request(self, agent: AgentFormat, transcript_path: str, session_id: str = "") -> Requested:
        """Start importing `agent`'s session file: "importing", or "queued" if it was already
        being imported (it is then imported once more afterwards); "not_read" on a team's
        server, which opens no path a hook sends; "not_yet" for one of the agent's session files
        that it has not written yet (nothing waits for it: the next request or import reads
        it). InvalidInput (REFUSED) for a path that is not one of the agent's session files
        under its folder, or while the server stops."""
        if current_viewer() is not None:
            return "not_read"
        if self._closed:
            raise InvalidInput("the server is shutting down; the next import run will catch up")
        path = hook_session_path(agent, transcript_path)
        if path is None:
            logger.info("hook import of %s session: its file is not written yet", agent.source)
            return "not_yet"
        if path in self._again:
            self._again[path] = True
            return "queued"
        self._again[path] = False
        self._sessions[path] = (agent, session_id)
        task = asyncio.create_task(self._run(path))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return "importing"

    async def _run(self, path: Path) -> None:
        try:
            while True:
                await self._import_once(path)
                if not self._again.get(path):
                    return
                self._again[path] = False
        finally:
            # Nothing awaits between these two, so a request for the file cannot slip in
            # between: the next request queues it and records its session again.
            self._again.pop(path, None)
            self._sessions.pop(path, None)

    async def _import_once(self, path: Path) -> None:
        agent, session_id = self._sessions[path]
        started = time.monotonic()
        try:
            summary = await import_session(self.service, path, agent, session_id, self._lock)
        except Exception:
            logger.exception("hook import of %s session %s failed", agent.source, path)
            return
        for error in summary.errors[:5]:
            logger.error("hook import of %s: %s", path, error)
        logger.info(
            "hook import of %s session %s: %d turns imported, %d files unchanged, %.2f s",
            agent.source,
            path.name,
            summary.turns_imported,
            summary.files_unchanged,
            time.monotonic() - started,  # listing and waiting included, not only the reading
        )
