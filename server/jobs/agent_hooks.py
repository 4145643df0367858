"""Our hooks in Codex and Gemini CLI, for `claude-memory connect`: which versions have hooks,
our entries in their files, and what the user has to know.

- Codex reads `$CODEX_HOME/hooks.json` (codex-rs/hooks/src/engine/discovery.rs): hooks came
  in 0.114.0 behind `[features] codex_hooks = true`, the key became `hooks` in 0.130.0, and
  they are on by default since openai/codex#19012 (April 2026). A hook from the user's own
  files runs only once the user has trusted it in Codex's `/hooks`; Codex keeps the trusted
  hash in config.toml, and a changed command (another URL) needs trusting again.
- Gemini CLI reads the `hooks` of `~/.gemini/settings.json` (docs/hooks/reference.md), on by
  default since 0.26.0 (google-gemini/gemini-cli#17247; before, behind `tools.enableHooks`).

The version is what `codex --version` / `gemini --version` print, when the CLI is on the PATH
connect was given; without it the current behaviour is assumed. An older version gets the
instructions block in AGENTS.md / GEMINI.md instead (see connect.py).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from server.jobs.agent_files import AgentFileError, read_json_object, render_json
from server.jobs.hook_install import (
    AGENT_EVENTS,
    HookSettingsError,
    with_our_hooks,
    without_our_hooks,
)

Version = tuple[int, int, int]
PROGRAMS = {"codex": "codex", "gemini": "gemini"}
HOOKS_SINCE: dict[str, Version] = {"codex": (0, 114, 0), "gemini": (0, 26, 0)}
CODEX_HOOKS_KEY_SINCE: Version = (0, 130, 0)  # `[features] hooks`; `codex_hooks` before
VERSION_SECONDS = 30  # gemini --version starts a Node process
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")


def parse_version(text: str) -> Version | None:
    """The first `X.Y.Z` in `text` ("codex-cli 0.169.0", "0.61.0")."""
    match = _VERSION.search(text)
    if match is None:
        return None
    major, minor, patch = (int(part) for part in match.groups())
    return major, minor, patch


def installed_version(agent: str, environ: Mapping[str, str]) -> Version | None:
    """The version of `agent`'s CLI on `environ`'s PATH; None if absent or unreadable."""
    search = environ.get("PATH")
    program = shutil.which(PROGRAMS[agent], path=search) if search else None
    if program is None:
        return None
    try:
        done = subprocess.run(
            [program, "--version"],
            env=dict(environ),
            capture_output=True,
            text=True,
            timeout=VERSION_SECONDS,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return parse_version(done.stdout) if done.returncode == 0 else None


def has_hooks(agent: str, version: Version | None) -> bool:
    """Whether `agent` at `version` runs our hooks (an unknown version is taken as current)."""
    return version is None or version >= HOOKS_SINCE[agent]


def shown(version: Version) -> str:
    return ".".join(str(part) for part in version)


def notes(agent: str, version: Version | None, installed: bool) -> list[str]:
    """What the user must know after connect installed (or could not install) our hooks."""
    label = {"codex": "Codex", "gemini": "Gemini CLI"}[agent]
    instructions = {"codex": "AGENTS.md", "gemini": "GEMINI.md"}[agent]
    if version is not None and not has_hooks(agent, version):
        return [
            f"{label} {shown(version)} has no hooks ({shown(HOOKS_SINCE[agent])} and later "
            f"do): the memory instructions went to {instructions} instead"
        ]
    if not installed:
        return []
    said = []
    if agent == "codex":
        said.append(
            "Codex runs new hooks only once you trust them: open /hooks in Codex and trust the "
            "claude-memory hooks (again after connecting to another URL)"
        )
        if version is not None and version < CODEX_HOOKS_KEY_SINCE:
            said.append(
                f"Codex {shown(version)} may have hooks turned off: add `codex_hooks = true` "
                "under [features] in config.toml"
            )
    return said


def with_hooks_for(
    agent: str, path: Path, data: dict[str, Any], url: str | None, python: str | None
) -> dict[str, Any]:
    """`data` (a hooks or settings file's object) with our hooks for `url`, or without them."""
    try:
        if url is None:
            return without_our_hooks(data, where=str(path))
        return with_our_hooks(data, url, python, agent=agent, where=str(path))
    except HookSettingsError as exc:
        raise AgentFileError(f"{exc}; nothing was changed") from None


def codex_hooks_json(path: Path, url: str | None, python: str | None) -> tuple[str, str]:
    """(old text, new text) of Codex's hooks.json with our hooks for `url`, or without them.

    Codex refuses any top-level key but `hooks` and `description`, so only `hooks` changes; a
    file left with no hooks at all is removed (its backup keeps it).
    """
    hint = "Fix the file (or move it aside), then run connect again."
    old, data = read_json_object(path, hint if url else "Remove our hooks by hand.")
    updated = with_hooks_for("codex", path, data, url, python)
    if updated == data:
        return old, old
    if not updated or updated == {"hooks": {}}:
        return old, ""
    return old, render_json(updated, old)


def events(agent: str) -> list[str]:
    """The agent's events our hooks answer."""
    return [name for name, _, _ in AGENT_EVENTS[agent]]
