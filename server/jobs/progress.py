"""A one-line progress display for batch commands: count, total and rate, on a terminal only.

It writes to stderr (stdout carries the command's JSON) and stays silent when stderr is not a
terminal, so logs and cron output are not filled with carriage returns.
"""

from __future__ import annotations

import time
from types import TracebackType
from typing import TextIO


class ProgressLine:
    def __init__(self, label: str, stream: TextIO, min_interval: float = 0.2) -> None:
        self.label = label
        self.stream = stream
        self.enabled = stream.isatty()
        self.min_interval = min_interval
        self._started = time.monotonic()
        self._last_draw = 0.0
        self._drawn = False

    def update(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if done < total and now - self._last_draw < self.min_interval:
            return
        self._last_draw = now
        rate = done / max(now - self._started, 1e-9)
        percent = 100.0 * done / total if total else 100.0
        self.stream.write(f"\r{self.label}: {done:,}/{total:,} ({percent:5.1f}%, {rate:,.0f}/s)")
        self.stream.flush()
        self._drawn = True

    def __enter__(self) -> ProgressLine:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()
