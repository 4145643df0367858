"""`claude-memory install-hooks` / `uninstall-hooks`: our entries in Claude Code's settings.json;
and the merge every agent with command hooks shares (Codex's hooks.json and Gemini CLI's
settings.json get theirs from `connect`, server/agents/).

Those agents read the layout of FORMATS.md §3.1, one matcher group per event:
`{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": ..., "timeout": 5}]}]}}`;
they differ in event names, units and handler fields, so each agent's module makes its own
handlers (`HookEvent`s in, `(event name, handler)` pairs out) and `with_our_hooks` places them.
A handler is ours when its command runs the hook client (see `is_ours`); everything else in the
file is kept as it is. Installing replaces our handler where it already sits (so running it
twice leaves one copy and no change), uninstalling removes only ours. Before a write the old file
is copied into the data dir's `backups/agent-files/` (never beside it); the new one is written to
a temporary file and renamed over it, so Claude Code never reads half a file. Standard library
only, like hooks.py.
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

from server.agent_facts import claude_code
from server.jobs.agent_files import AgentFileError, write_with_backup

HOOKS_SCRIPT = Path(__file__).resolve().parents[1] / "hooks.py"
HookEvent = tuple[str, str, int]  # (the agent's event name, our event argument, its timeout)
Handlers = list[tuple[str, dict[str, Any]]]  # (the agent's event name, our handler for it)
# Claude Code's events, as its module lists them (server/agent_facts/claude_code.py).
EVENTS: tuple[HookEvent, ...] = tuple(
    (name, event, timeout) for name, event, timeout, _ in claude_code.HOOKS
)
# Capture-only hooks on every tool call run in the background (`"async": true`), so the agent
# never waits for them (FORMATS.md §3.3).
ASYNC_EVENTS = ("PostToolUse", "PostToolUseFailure")
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
    return claude_code.claude_dir(environ, home) / "settings.json"


def hook_command(event: str, url: str, python: str | None = None, agent: str | None = None) -> str:
    """The shell command an agent runs for `event` (hooks.py's argument, e.g. `stop`).

    `agent` is hooks.py's `--agent` (none for Claude Code, its default). `-I -S` starts the
    interpreter without site-packages, the user's folder or PYTHON* variables: hooks.py needs
    only the standard library. `|| true` keeps the exit code 0 even if Python itself cannot
    start (exit 2 would erase the user's prompt).
    """
    interpreter = shlex.quote(python or sys.executable)
    script = shlex.quote(str(HOOKS_SCRIPT))
    which = f" --agent {shlex.quote(agent)}" if agent else ""
    return f"{interpreter} -I -S {script} {event} --url {shlex.quote(url)}{which} || true"


def claude_code_handlers(url: str, python: str | None = None) -> Handlers:
    """Our handlers for Claude Code's events; the capture-only ones run in the background."""
    handlers: Handlers = []
    for name, event, timeout in EVENTS:
        handler: dict[str, Any] = {
            "type": "command",
            "command": hook_command(event, url, python),
            "timeout": timeout,
        }
        if name in ASYNC_EVENTS:
            handler["async"] = True
        handlers.append((name, handler))
    return handlers


def is_ours(handler: Any) -> bool:
    """A command handler that runs our hook client, by whichever route."""
    if not isinstance(handler, dict) or handler.get("type") != "command":
        return False
    command = handler.get("command")
    return isinstance(command, str) and any(marker in command for marker in MARKERS)


def with_our_hooks(
    settings: Mapping[str, Any], handlers: Handlers, where: str = "settings.json"
) -> dict[str, Any]:
    """`settings` with our handler for each event of `handlers`, in place of any earlier copy.

    `where` names the file in error messages.
    """
    updated = without_our_hooks(settings, keep=tuple(name for name, _ in handlers), where=where)
    if updated.get("hooks") is None:
        updated["hooks"] = {}
    hooks = updated["hooks"]
    for name, ours in handlers:
        groups = hooks.setdefault(name, [])
        if not isinstance(groups, list):
            raise HookSettingsError(f"hooks.{name} in {where} is not a list")
        placed = False
        kept: list[Any] = []
        for group in groups:
            present = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(present, list) or not any(is_ours(h) for h in present):
                kept.append(group)
                continue
            new_handlers = []
            for handler in present:
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
    path: Path,
    url: str,
    *,
    now: datetime,
    backups: Path,
    dry_run: bool = False,
    python: str | None = None,
) -> HookChange:
    """Merge our entries into the settings file at `path`; the old file goes to `backups`."""
    old_text, current = read_settings(path)
    updated = with_our_hooks(current, claude_code_handlers(url, python))
    return _apply(path, old_text, current, updated, now, backups, dry_run)


def uninstall(path: Path, *, now: datetime, backups: Path, dry_run: bool = False) -> HookChange:
    """Remove our entries, and only ours, from the settings file at `path`; the old file goes
    to `backups`."""
    old_text, current = read_settings(path)
    return _apply(path, old_text, current, without_our_hooks(current), now, backups, dry_run)


def _apply(
    path: Path,
    old_text: str,
    current: dict[str, Any],
    updated: dict[str, Any],
    now: datetime,
    backups: Path,
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
    try:
        backup = write_with_backup(path, new_text, now, backups)
    except AgentFileError as exc:
        raise HookSettingsError(str(exc)) from None
    return HookChange(path, True, backup, diff, events)
