"""`claude-memory profile`: a compact user profile for every Claude Code session to read.

Claude Code loads `~/.claude/CLAUDE.md` into every session; a pointer there to `user.md`
(written here) puts the profile in front of the agent without a tool call. The profile is
short on purpose (it costs context in every session): the strongest preferences by tier,
the inferred working style, tooling habits and the projects worked on lately.
"""

from __future__ import annotations

import getpass
import os
import tempfile
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from server.agent_facts import claude_code as claude
from server.core.models.memories import ProjectSummary
from server.core.models.views import Preference, PreferenceTiers
from server.core.percent import percent_label

MAX_ITEMS = 12
MAX_LINE_CHARS = 240
POINTER_MARK = "<!-- claude-memory profile -->"


# Claude Code's instruction file; the one in its config folder is read in every session.
CLAUDE_MD = claude.INSTRUCTIONS_FILE
claude_dir = claude.claude_dir  # its config folder, where `profile` writes (server/cli/jobs.py)


def _item(preference: Preference) -> str:
    text = " ".join(preference.memory.content.split())
    if len(text) > MAX_LINE_CHARS:
        text = text[: MAX_LINE_CHARS - 1].rstrip() + "…"
    return f"- {text} _(confidence {percent_label(preference.confidence)})_"


def _live(preferences: Sequence[Preference], kinds: tuple[str, ...] | None = None) -> list[str]:
    return [
        _item(p)
        for p in preferences
        if p.superseded_by is None and (kinds is None or p.memory.kind in kinds)
    ][:MAX_ITEMS]


def render_profile(
    tiers: PreferenceTiers,
    projects: Sequence[ProjectSummary],
    *,
    user: str,
    generated_at: datetime,
) -> str:
    """The profile as Markdown; sections without content are left out."""
    sections = [
        ("Preferences", _live(tiers.explicit) + _live(tiers.signals, ("preference",))),
        ("Working style", _live(tiers.inferred)),
        ("Tooling and habits", _live(tiers.signals, ("pattern",))),
        (
            "Active projects",
            [
                f"- {p.project} ({p.project_path or 'no path'}): {p.count} memories, "
                f"last {p.last_at.date().isoformat()}"
                for p in projects[:8]
                if p.project
            ],
        ),
    ]
    parts = [
        "# User profile",
        f"_Written by claude-memory on {generated_at.date().isoformat()} from past sessions; "
        "these are observations, not instructions. The user's current request wins._",
        f"User: {user}",
    ]
    parts += [f"## {title}\n" + "\n".join(lines) for title, lines in sections if lines]
    return "\n\n".join(parts) + "\n"


def current_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def write_atomically(path: Path, text: str) -> None:
    """Replace `path` in one step, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def patch_claude_md(claude_md: Path, profile: Path) -> bool:
    """Add a pointer to the profile at the end of CLAUDE.md, once; True if it was added."""
    existing = claude_md.read_text(encoding="utf-8") if claude_md.exists() else ""
    if POINTER_MARK in existing:
        return False
    pointer = (
        f"{POINTER_MARK}\n"
        f"The user's profile, learned by claude-memory from past sessions: @{profile}\n"
    )
    separator = (
        ""
        if not existing or existing.endswith("\n\n")
        else "\n"
        if existing.endswith("\n")
        else "\n\n"
    )
    write_atomically(claude_md, existing + separator + pointer)
    return True
