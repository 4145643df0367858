"""Trajectories: how a task got done after failed attempts, written so the next try is faster.

A trajectory is a memory of kind `trajectory` whose content reads as three labelled parts,
one per line, so it is searched, shown and recalled like any memory and still says what it is:

    Task: get the orders cursor to stop skipping rows
    What worked: compare created_at as text in the cursor, not as a JS Date
    What to avoid: rounding timestamps to milliseconds; retrying the flaky test

Its metadata keeps the parts apart (`metadata["trajectory"]`) for the UI and exports. Pure
rules, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from server.core.errors import InvalidInput
from server.core.validation import clean_text

TRAJECTORY_KIND = "trajectory"
MAX_TASK_CHARS = 500
MAX_PART_CHARS = 4_000  # of what worked, and of what to avoid

_LABELS = (("task", "Task"), ("worked", "What worked"), ("avoid", "What to avoid"))


@dataclass(frozen=True, slots=True)
class Trajectory:
    """What `learn` stores: the task, what worked, what to avoid, and where it applies."""

    task: str
    worked: str
    avoid: str = ""
    tags: list[str] = field(default_factory=list)
    project: str = ""


def checked(trajectory: Trajectory) -> Trajectory:
    """The trajectory with its parts trimmed; InvalidInput naming the part that is wrong."""
    task = _part(trajectory.task, "task", MAX_TASK_CHARS, "say what was being done")
    worked = _part(trajectory.worked, "worked", MAX_PART_CHARS, "say what solved it")
    avoid = _part(trajectory.avoid, "avoid", MAX_PART_CHARS, "")
    return Trajectory(task, worked, avoid, list(trajectory.tags), trajectory.project)


def _part(text: str, name: str, limit: int, hint: str) -> str:
    cleaned = " ".join(clean_text(text).split())
    if not cleaned and hint:
        raise InvalidInput(f"{name} is empty; {hint}")
    if len(cleaned) > limit:
        raise InvalidInput(f"{name} has {len(cleaned):,} characters; the limit is {limit:,}")
    return cleaned


def trajectory_content(trajectory: Trajectory) -> str:
    """The memory text: one labelled line per part given, task first."""
    parts = {"task": trajectory.task, "worked": trajectory.worked, "avoid": trajectory.avoid}
    return "\n".join(f"{label}: {parts[key]}" for key, label in _LABELS if parts[key])


def trajectory_metadata(trajectory: Trajectory) -> dict[str, Any]:
    return {
        "trajectory": {
            "task": trajectory.task,
            "worked": trajectory.worked,
            "avoid": trajectory.avoid,
        }
    }
