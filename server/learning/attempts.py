"""Did a session end with a fix after failed attempts? Read from its tool-call journal.

Distillation proposes a trajectory (server/domain/trajectories.py) only for such a session:
the model sees the failed calls listed in the transcript's header and is asked for one
trajectory when the transcript shows what got past them. The journal decides whether there
were failed attempts, not the model, so a session that went smoothly gets no trajectory
however the model reads it. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from server.core.models.journal import JournalCall, JournalEntry

MAX_ATTEMPTS_SHOWN = 5
MAX_TARGET_CHARS = 120
MAX_ERROR_CHARS = 120


def failed_attempts(entries: Sequence[JournalEntry]) -> list[str]:
    """One line per failed call (at most MAX_ATTEMPTS_SHOWN, the latest) when the session
    ended with a fix after them: some call failed, and the last call whose outcome is known
    succeeded. Otherwise, no lines."""
    calls = sorted(
        (call for entry in entries for call in entry.calls),
        key=lambda call: call.at or datetime.min.replace(tzinfo=UTC),
    )
    known = [call for call in calls if call.success is not None]
    failed = [call for call in known if call.success is False]
    if not failed or known[-1].success is not True:
        return []
    return [_line(call) for call in failed[-MAX_ATTEMPTS_SHOWN:]]


def _line(call: JournalCall) -> str:
    target = " ".join((call.target or "").split())[:MAX_TARGET_CHARS]
    error = " ".join((call.error or call.output_preview or "").split())[:MAX_ERROR_CHARS]
    described = f"{call.tool} {target}".strip()
    return f"{described}: {error}" if error else described
