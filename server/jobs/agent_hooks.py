"""Our command hooks in other agents' files, for `claude-memory connect`: the agent's version
(from its own CLI) and our handlers merged into, or taken out of, one of its JSON files.

Which agents have hooks, from which version, and what the user must know then, is each
agent's own (server/agents/<agent>.py). The version is what `<program> --version` prints, when
the CLI is on the PATH connect was given; without it the current behaviour is assumed.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from server.jobs.agent_files import AgentFileError
from server.jobs.hook_install import (
    Handlers,
    HookSettingsError,
    with_our_hooks,
    without_our_hooks,
)

Version = tuple[int, int, int]
VERSION_SECONDS = 30  # gemini --version starts a Node process
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")


def parse_version(text: str) -> Version | None:
    """The first `X.Y.Z` in `text` ("codex-cli 0.169.0", "0.61.0")."""
    match = _VERSION.search(text)
    if match is None:
        return None
    major, minor, patch = (int(part) for part in match.groups())
    return major, minor, patch


def installed_version(program: str, environ: Mapping[str, str]) -> Version | None:
    """The version of `program` on `environ`'s PATH; None if absent or unreadable."""
    search = environ.get("PATH")
    found = shutil.which(program, path=search) if search else None
    if found is None:
        return None
    try:
        done = subprocess.run(
            [found, "--version"],
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


def shown(version: Version) -> str:
    return ".".join(str(part) for part in version)


def with_hooks(path: Path, data: dict[str, Any], handlers: Handlers | None) -> dict[str, Any]:
    """`data` (a hooks or settings file's object) with our `handlers`, or without ours (None)."""
    try:
        if handlers is None:
            return without_our_hooks(data, where=str(path))
        return with_our_hooks(data, handlers, where=str(path))
    except HookSettingsError as exc:
        raise AgentFileError(f"{exc}; nothing was changed") from None
