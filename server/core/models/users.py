"""Users of a team server: who they are, which projects they are in, whether revoked."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class UserRow:
    """A team member (`projects` None: every project), with how many memories they own."""

    id: int
    name: str
    projects: list[str] | None
    created_at: datetime
    revoked_at: datetime | None
    memories: int = 0
