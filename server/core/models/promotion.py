"""What `claude-memory promote` proposes for a repository's instruction files (#58), and what
it remembers of them: REST, the CLI and the web UI read these shapes."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

ChangeAction = Literal["add", "change", "remove", "keep"]
LineState = Literal["written", "declined"]
# Who a line's words come from, as the proposal shows it (#65 M2): the user (a line they wrote
# in the section, a preference they stated, a save from the UI or REST), an agent (its save or
# what a model distilled from a session), an import (an export, notes, another tool's store), a
# teammate (named), or the file itself (a line promote did not write there: left as it is).
USER = "the user"
AGENT = "an agent"
IMPORT = "an import"
THE_FILE = "the file"


@dataclass(frozen=True, slots=True)
class PromotedLine:
    """A row of `promoted_lines`: the line we wrote for a memory in a file, or its decline."""

    file_path: str
    memory_id: int
    state: LineState
    text: str
    at: datetime


@dataclass(frozen=True, slots=True)
class UseRecord:
    """How a memory fared after injection: uses since its last correction, and when that was."""

    memory_id: int
    uses: int
    corrected_at: datetime | None


@dataclass(frozen=True, slots=True)
class LineChange:
    """One line of our section: added, changed, removed or kept, and why.

    `memory_id` is the memory the line will carry (a change to a successor carries the
    successor's id; `old_memory_id` is the one it carried); `text` is None for a removal.
    """

    action: ChangeAction
    memory_id: int | None
    text: str | None
    old_text: str | None
    reason: str
    old_memory_id: int | None = None
    uses: int = 0
    source: str = ""  # who the line's words come from: USER, AGENT, IMPORT, a teammate, THE_FILE


@dataclass(frozen=True, slots=True)
class FileProposal:
    """One instruction file: whether it exists (or would be created), and the diff proposed."""

    path: str
    name: str
    exists: bool
    creates: bool
    diff: str
    changes: list[LineChange] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Proposal:
    """What promote proposes for a project's repository; `left_out` memories did not fit the
    section's budget (they stay in memory and are recalled as before)."""

    project: str
    root: str
    files: list[FileProposal]
    left_out: int


@dataclass(frozen=True, slots=True)
class WrittenFile:
    """A file promote wrote, and the copy of it kept beside it first (None: it was new)."""

    path: str
    backup: str | None


@dataclass(frozen=True, slots=True)
class PromotionResult:
    """What a write did, and the proposal read again after it."""

    written: list[WrittenFile]
    files: list[FileProposal]
    left_out: int = 0
