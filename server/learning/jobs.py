"""What the LLM jobs (distill, behavior) share: sessions run a few at a time, with progress,
a stop signal that keeps the remaining sessions from starting once the LLM is gone, and a lease
per session so runners in other processes never handle the same one (server/service/leases.py).

`SessionJob` is one run of such a job over its pending sessions; server/learning/distill.py and
server/learning/behavior.py say only which sessions wait, and what is done with one."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import ClassVar, Generic, TypeVar

from server.core.models.learning import SessionTurnRow
from server.core.models.sessions import PendingSession, StoredTurn
from server.learning.agent_models import RunBudget
from server.learning.distill_core import DistillFailed, SessionTurn, Window, transcript_windows
from server.learning.llm import JsonModel, LlmError
from server.service.memory import MemoryService

logger = logging.getLogger(__name__)

Progress = Callable[[int, int], None]
# Held around one session's work: yields whether this runner should do it.
Claim = Callable[[PendingSession], AbstractAsyncContextManager[bool]]


async def run_sessions(
    queue: Sequence[PendingSession],
    handle: Callable[[PendingSession], Awaitable[None]],
    *,
    workers: int,
    stop: asyncio.Event,
    progress: Progress | None,
    claim: Claim | None = None,
) -> None:
    """`handle` each session, `workers` at a time; none starts after `stop` is set. With
    `claim`, a session is handled only inside its claim, and only when the claim says so."""
    slots = asyncio.Semaphore(workers)
    done = 0

    async def one(pending: PendingSession) -> None:
        nonlocal done
        async with slots:
            if stop.is_set():
                pass
            elif claim is None:
                await handle(pending)
            else:
                async with claim(pending) as ours:
                    if ours:
                        await handle(pending)
            done += 1
            if progress is not None:
                progress(done, len(queue))

    await asyncio.gather(*(one(pending) for pending in queue))


@dataclass(slots=True)
class JobSummary:
    """What every run reports; each job's summary adds its own counts and its JSON shape."""

    dry_run: bool
    model: str
    sessions: int = 0
    failed: int = 0
    failures: list[str] = field(default_factory=list)
    stopped: str | None = None
    seconds: float = 0.0
    left_pending: list[str] = field(default_factory=list)  # with an agent's model (#67)
    llm: dict[str, object] | None = None  # the run's receipt, with an agent's model


S = TypeVar("S", bound=JobSummary)
T = TypeVar("T")


class SessionJob(Generic[S]):
    """One run of an LLM job over its pending sessions, `workers` at a time, each inside its
    lease unless it is a dry run (which writes nothing).

    A job names its lease (`job`), makes its summary, lists the sessions waiting
    (`pending`) and handles one (`handle`). With a `budget` (an agent's model,
    server/learning/agent_models.py) the run's receipt and what it left pending go into the
    summary.
    """

    job: ClassVar[str]

    def __init__(
        self,
        service: MemoryService,
        client: JsonModel,
        *,
        model: str,
        workers: int,
        dry_run: bool = False,
        progress: Progress | None = None,
        budget: RunBudget | None = None,
        context_tokens: int | None = None,
    ) -> None:
        self.service = service
        self.client = client
        self.model = model
        self.workers = workers
        self.dry_run = dry_run
        self.progress = progress
        self.budget = budget
        self.context_tokens = context_tokens or service.settings.distill_context_tokens
        self.summary = self.new_summary()
        self._stop = asyncio.Event()

    def new_summary(self) -> S:
        raise NotImplementedError

    async def pending(
        self, *, project: str | None = None, session: str | None = None
    ) -> Sequence[PendingSession]:
        """The sessions waiting for this job (in `project`, or the one `session`)."""
        raise NotImplementedError

    async def handle(self, pending: PendingSession) -> None:
        raise NotImplementedError

    async def run(self, *, project: str | None = None, session: str | None = None) -> S:
        started = time.monotonic()
        queue = await self.pending(project=project, session=session)
        self.summary.sessions = len(queue)
        await run_sessions(
            queue,
            self.handle,
            workers=self.workers,
            stop=self._stop,
            progress=self.progress,
            claim=None if self.dry_run else self._claim,  # a dry run writes nothing
        )
        if self.budget is not None:
            self.summary.llm = self.budget.receipt()
            self.summary.left_pending = self.budget.notes()
        self.summary.seconds = time.monotonic() - started
        return self.summary

    async def still_pending(self, pending: PendingSession) -> bool:
        """Whether the session still waits, once its lease is held: another runner may have
        handled it meanwhile."""
        return bool(await self.pending(session=pending.session_id))

    def _claim(self, pending: PendingSession) -> AbstractAsyncContextManager[bool]:
        """The session's lease."""

        async def still_needed() -> bool:
            return await self.still_pending(pending)

        return self.service.leases.leased(self.job, pending.session_id, still_needed=still_needed)

    async def record_failure(self, session_id: str, reason: str) -> int:
        """Record the session's failure for this job; how many it has now (three park it)."""
        raise NotImplementedError

    def windows(
        self,
        pending: PendingSession,
        turns: Sequence[StoredTurn] | Sequence[SessionTurnRow],
        attempts: Sequence[str] = (),
    ) -> list[Window]:
        """The session's turns in windows that fit the run's context (a ValueError when it is
        too small for any transcript)."""
        return transcript_windows(
            [SessionTurn(t.id, t.role, t.content, t.created_at) for t in turns],
            project=pending.project,
            title=pending.title,
            context_tokens=self.context_tokens,
            attempts=attempts,
        )

    async def ask_each(
        self,
        pending: PendingSession,
        windows: Sequence[Window],
        ask: Callable[[Window], Awaitable[T]],
        halting: tuple[type[Exception], ...] = (LlmError,),
    ) -> list[T] | None:
        """`ask` about each window in turn; None when the session failed (an unusable reply:
        recorded and counted) or the run stopped (`halting`: the LLM is gone, and no session
        is charged)."""
        try:
            return [await ask(window) for window in windows]
        except DistillFailed as exc:
            failures = await self.record_failure(pending.session_id, str(exc))
            self.summary.failed += 1
            self.summary.failures.append(f"{pending.session_id}: {exc} (failure {failures} of 3)")
        except halting as exc:
            self.halt(str(exc))
        return None

    def halt(self, reason: str) -> None:
        """Stop taking sessions: the problem is not one session's, so none is charged."""
        if not self._stop.is_set():
            self._stop.set()
            self.summary.stopped = reason
            logger.error("stopping: %s", reason)
