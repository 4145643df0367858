"""Learning without an LLM: corrections the user made, and habits counted from tool calls.

The logic lives in two modules, re-exported here so callers need one import:
`corrections` finds user turns that reject or redirect the assistant (rules, no model) and
`aggregates` counts each project's workflow mix, command habits and file hotspots. Both are
pure: the caller reads turns and tool calls from the database and stores the memories.
"""

from __future__ import annotations

from server.learning.aggregates import (
    CategoryShare,
    CommandHabit,
    FileHotspot,
    ProjectPatterns,
    SignalEvent,
    command_verbs,
    pattern_memories,
    project_patterns,
    tool_category,
)
from server.learning.corrections import (
    Correction,
    SignalTurn,
    correction_cue,
    correction_memory,
    find_corrections,
)

__all__ = [
    "CategoryShare",
    "CommandHabit",
    "Correction",
    "FileHotspot",
    "ProjectPatterns",
    "SignalEvent",
    "SignalTurn",
    "command_verbs",
    "correction_cue",
    "correction_memory",
    "find_corrections",
    "pattern_memories",
    "project_patterns",
    "tool_category",
]
