"""Who is asking: the user behind a request, carried to every transaction it opens.

With no users configured nobody is ever set here and every reader sees every memory, as a
single-user server always has. With users, the HTTP guard (server/adapters/auth.py) sets the
viewer for each request, the MCP adapter for each tool call, and batch jobs for each session
they work on as its owner; `server/store/tx.transaction` hands it to PostgreSQL, where the
column defaults stamp new rows with it and `memory_visible()` filters every read.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Protocol

from server.core.errors import Forbidden

VISIBILITIES = ("private", "shared")
PROJECT_SEPARATOR = "\x1f"


@dataclass(frozen=True)
class Viewer:
    """A user as the database sees them for one request."""

    user_id: int
    name: str
    projects: tuple[str, ...] | None  # the shared projects they belong to; None: all of them
    default_visibility: str = "private"

    def settings(self) -> tuple[tuple[str, str], ...]:
        """The transaction-local settings that make the database act for this user."""
        return (
            ("claude_memory.viewer", str(self.user_id)),
            ("claude_memory.viewer_projects", PROJECT_SEPARATOR.join(self.projects or ())),
            ("claude_memory.default_visibility", self.default_visibility),
        )


_viewer: ContextVar[Viewer | None] = ContextVar("claude_memory_viewer", default=None)


def current_viewer() -> Viewer | None:
    """The user this code runs for, or None (single-user mode, batch jobs, the CLI)."""
    return _viewer.get()


@contextmanager
def acting_as(viewer: Viewer | None) -> Iterator[None]:
    """Run the enclosed code for `viewer` (None: for nobody in particular, seeing all)."""
    token = _viewer.set(viewer)
    try:
        yield
    finally:
        _viewer.reset(token)


def viewer_key() -> int:
    """A cache-key part that keeps one user's cached reads from being served to another."""
    viewer = _viewer.get()
    return viewer.user_id if viewer else 0


class Owned(Protocol):
    @property
    def id(self) -> int: ...
    @property
    def owner(self) -> str | None: ...


def check_owner(memory: Owned) -> None:
    """Refuse to change a memory that is not the asking user's own (reading it is fine)."""
    viewer = _viewer.get()
    if viewer is not None and memory.owner != viewer.name:
        if memory.owner:
            raise Forbidden(
                f"memory {memory.id} belongs to {memory.owner}; only they can change it"
                " (save your own memory to record something newer)"
            )
        raise Forbidden(
            f"memory {memory.id} was stored before this server had users; change it with the"
            " command line (claude-memory), which acts for no particular user"
        )
