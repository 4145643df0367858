"""`claude-memory install-hooks` / `uninstall-hooks`: our entries in Claude Code's settings.json;
the same entries for Codex's hooks.json and Gemini CLI's settings.json (`connect`).

All three agents read the layout of FORMATS.md §3.1, one matcher group per event:
`{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": ..., "timeout": 5}]}]}}`;
they differ in event names and units (AGENT_EVENTS): Gemini CLI's timeouts are milliseconds,
and its handlers carry a `name` (`/hooks disable <name>` turns one off).
A handler is ours when its command runs the hook client (see `is_ours`); everything else in the
file is kept as it is. Installing replaces our handler where it already sits (so running it
twice leaves one copy and no change), uninstalling removes only ours. Before a write the old file
is copied to `settings.json.bak-<UTC time>`; the new one is written to a temporary file and
renamed over it, so Claude Code never reads half a file. Standard library only, like hooks.py.
"""

from __future__ import annotations

import copy
import difflib
import json
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from server.jobs.agent_files import write_with_backup

HOOKS_SCRIPT = Path(__file__).resolve().parents[1] / "hooks.py"
# (Claude Code event, our event argument, handler timeout in seconds). The client gives up
# sooner (2 s, or 1 s for the capture events); SessionEnd hooks share a 1.5 s budget that a
# larger timeout raises (FORMATS.md §3.4).
EVENTS = (
    ("SessionStart", "session-start", 5),
    ("UserPromptSubmit", "user-prompt-submit", 5),
    ("PreToolUse", "pre-tool-use", 3),
    ("PostToolUse", "post-tool-use", 3),
    ("PostToolUseFailure", "post-tool-use-failure", 3),
    ("Stop", "stop", 3),
    ("SessionEnd", "session-end", 2),
)
# Capture-only hooks on every tool call run in the background (`"async": true`), so the agent
# never waits for them (FORMATS.md §3.3).
ASYNC_EVENTS = ("PostToolUse", "PostToolUseFailure")
# Codex (codex-rs/hooks, 0.169.0): Claude Code's event names, timeouts in seconds, SessionEnd
# clamped to 3 s. Its PostToolUse stays synchronous: `codex exec` may end before a background
# hook has journaled the call.
CODEX_EVENTS = (
    ("SessionStart", "session-start", 5),
    ("UserPromptSubmit", "user-prompt-submit", 5),
    ("PreToolUse", "pre-tool-use", 3),
    ("PostToolUse", "post-tool-use", 3),
    ("Stop", "stop", 3),
    ("SessionEnd", "session-end", 3),
)
# Gemini CLI (docs/hooks/reference.md): its own event names, timeouts in milliseconds; every
# hook is synchronous (SessionEnd excepted: Gemini does not wait for it).
GEMINI_EVENTS = (
    ("SessionStart", "session-start", 5_000),
    ("BeforeAgent", "before-agent", 5_000),
    ("BeforeTool", "before-tool", 3_000),
    ("AfterTool", "after-tool", 3_000),
    ("AfterAgent", "after-agent", 3_000),
    ("SessionEnd", "session-end", 3_000),
)
AGENT_EVENTS = {"claude-code": EVENTS, "codex": CODEX_EVENTS, "gemini": GEMINI_EVENTS}
MARKERS = ("server/hooks.py", "server.hooks", "claude-memory hook")


class HookSettingsError(Exception):
    """settings.json cannot be changed safely; the message says why."""


@dataclass(frozen=True, slots=True)
class HookChange:
    """What an install or uninstall did (or would do, for a dry run)."""

    settings: Path
    changed: bool
    backup: Path | None
    diff: str
    events: list[str]


def settings_path(environ: Mapping[str, str], home: Path) -> Path:
    """`$CLAUDE_CONFIG_DIR/settings.json`, else `~/.claude/settings.json`."""
    config_dir = environ.get("CLAUDE_CONFIG_DIR")
    base = Path(config_dir).expanduser() if config_dir else home / ".claude"
    return base / "settings.json"


def hook_command(
    event: str, url: str, python: str | None = None, agent: str = "claude-code"
) -> str:
    """The shell command `agent` runs for `event` (hooks.py's argument, e.g. `stop`).

    `-I -S` starts the interpreter without site-packages, the user's folder or PYTHON*
    variables: hooks.py needs only the standard library. `|| true` keeps the exit code 0 even
    if Python itself cannot start (exit 2 would erase the user's prompt).
    """
    interpreter = shlex.quote(python or sys.executable)
    script = shlex.quote(str(HOOKS_SCRIPT))
    which = "" if agent == "claude-code" else f" --agent {shlex.quote(agent)}"
    return f"{interpreter} -I -S {script} {event} --url {shlex.quote(url)}{which} || true"


def our_handler(
    agent: str, name: str, event: str, timeout: int, url: str, python: str | None = None
) -> dict[str, Any]:
    """Our handler for `agent`'s event `name`, in the shape that agent reads."""
    command = hook_command(event, url, python, agent)
    if agent == "gemini":
        return {
            "type": "command",
            "name": f"claude-memory-{event}",
            "command": command,
            "timeout": timeout,
        }
    handler: dict[str, Any] = {"type": "command", "command": command, "timeout": timeout}
    if agent == "claude-code" and name in ASYNC_EVENTS:
        handler["async"] = True
    return handler


def is_ours(handler: Any) -> bool:
    """A command handler that runs our hook client, by whichever route."""
    if not isinstance(handler, dict) or handler.get("type") != "command":
        return False
    command = handler.get("command")
    return isinstance(command, str) and any(marker in command for marker in MARKERS)


def with_our_hooks(
    settings: Mapping[str, Any],
    url: str,
    python: str | None = None,
    agent: str = "claude-code",
    where: str = "settings.json",
) -> dict[str, Any]:
    """`settings` with our handler for each of `agent`'s events, in place of any earlier copy.

    `where` names the file in error messages.
    """
    events = AGENT_EVENTS[agent]
    updated = without_our_hooks(settings, keep=tuple(name for name, _, _ in events), where=where)
    if updated.get("hooks") is None:
        updated["hooks"] = {}
    hooks = updated["hooks"]
    for name, event, timeout in events:
        ours = our_handler(agent, name, event, timeout, url, python)
        groups = hooks.setdefault(name, [])
        if not isinstance(groups, list):
            raise HookSettingsError(f"hooks.{name} in {where} is not a list")
        placed = False
        kept: list[Any] = []
        for group in groups:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list) or not any(is_ours(h) for h in handlers):
                kept.append(group)
                continue
            new_handlers = []
            for handler in handlers:
                if not is_ours(handler):
                    new_handlers.append(handler)
                elif not placed:
                    new_handlers.append(ours)
                    placed = True
            if new_handlers:
                kept.append({**group, "hooks": new_handlers})
        if not placed:
            kept.append({"hooks": [ours]})
        hooks[name] = kept
    return updated


def without_our_hooks(
    settings: Mapping[str, Any], keep: tuple[str, ...] = (), where: str = "settings.json"
) -> dict[str, Any]:
    """`settings` without our handlers (except in the `keep` events), dropping what that empties.

    Groups, events and the `hooks` key itself are removed only when removing our handlers left
    them empty; anything empty to begin with stays. Keys of `hooks` that hold no list of groups
    (Gemini CLI's older `hooks.disabled`, say) are left alone.
    """
    updated = copy.deepcopy(dict(settings))
    hooks = updated.get("hooks")
    if hooks is None:
        return updated
    if not isinstance(hooks, dict):
        raise HookSettingsError(f"`hooks` in {where} is not an object")
    for name in list(hooks):
        groups = hooks[name]
        if name in keep or not isinstance(groups, list):
            continue
        kept = []
        for group in groups:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list) or not any(is_ours(h) for h in handlers):
                kept.append(group)
                continue
            others = [h for h in handlers if not is_ours(h)]
            if others:
                kept.append({**group, "hooks": others})
        if kept or not groups:
            hooks[name] = kept
        else:
            del hooks[name]
    if not hooks and settings.get("hooks"):
        del updated["hooks"]
    return updated


def read_settings(path: Path) -> tuple[str, dict[str, Any]]:
    """The file's text and its JSON object; an absent file is empty."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return "", {}
    except OSError as exc:
        raise HookSettingsError(f"cannot read {path}: {exc.strerror}") from None
    if not text.strip():
        return text, {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise HookSettingsError(
            f"{path} is not valid JSON (line {exc.lineno}); fix it first, nothing was changed"
        ) from None
    if not isinstance(data, dict):
        raise HookSettingsError(f"{path} does not hold a JSON object; nothing was changed")
    return text, data


def render(settings: Mapping[str, Any]) -> str:
    return json.dumps(settings, indent=2, ensure_ascii=False) + "\n"


def install(
    path: Path, url: str, *, now: datetime, dry_run: bool = False, python: str | None = None
) -> HookChange:
    """Merge our entries into the settings file at `path`."""
    old_text, current = read_settings(path)
    return _apply(path, old_text, current, with_our_hooks(current, url, python), now, dry_run)


def uninstall(path: Path, *, now: datetime, dry_run: bool = False) -> HookChange:
    """Remove our entries, and only ours, from the settings file at `path`."""
    old_text, current = read_settings(path)
    return _apply(path, old_text, current, without_our_hooks(current), now, dry_run)


def _apply(
    path: Path,
    old_text: str,
    current: dict[str, Any],
    updated: dict[str, Any],
    now: datetime,
    dry_run: bool,
) -> HookChange:
    events = [name for name, _, _ in EVENTS]
    if updated == current:
        return HookChange(path, False, None, "", events)
    new_text = render(updated)
    diff = "".join(
        difflib.unified_diff(
            old_text.splitlines(keepends=True),
            new_text.splitlines(keepends=True),
            fromfile=str(path),
            tofile=f"{path} (new)",
        )
    )
    if dry_run:
        return HookChange(path, True, None, diff, events)
    backup = write_with_backup(path, new_text, now)
    return HookChange(path, True, backup, diff, events)
