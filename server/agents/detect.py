"""Reading what `connect` wrote, for `doctor`: each agent's detection (server/agents/<agent>.py
`detect`) reads its own files with these. Read only; a file that is absent reads as empty, one
that cannot be read is said in a note, never raised.
"""

from __future__ import annotations

import json
import shlex
import tomllib
from pathlib import Path
from typing import Any

from server.agents.unit import Found, Route
from server.jobs.connect import TOKEN_VARIABLE
from server.jobs.hook_install import is_ours
from server.jobs.server_check import base_url


def read_json(path: Path, found: Found) -> dict[str, Any]:
    """The JSON object in `path`; {} when absent, or unreadable (said in `found`'s notes)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        found.notes.append(f"cannot read {path}: {exc.strerror}")
        return {}
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        found.notes.append(f"{path} is not valid JSON (line {exc.lineno}): not read")
        return {}
    return data if isinstance(data, dict) else {}


def read_toml(path: Path, found: Found) -> dict[str, Any]:
    """The TOML document in `path`; {} when absent or unreadable (said in the notes)."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        found.notes.append(f"cannot read {path}: {exc}")
        return {}


def entry(data: dict[str, Any], key: str, name: str) -> dict[str, Any] | None:
    """`data[key][name]` when both are objects."""
    entries = data.get(key)
    value = entries.get(name) if isinstance(entries, dict) else None
    return value if isinstance(value, dict) else None


def entry_url(value: Any) -> str | None:
    """The server's base URL from an MCP entry's URL (`…/mcp` or `…/sse`)."""
    return base_url(value) if isinstance(value, str) and value else None


def sends_token(value: dict[str, Any]) -> bool:
    """Whether an MCP entry sends our token: a header or Codex's `bearer_token_env_var` naming
    CLAUDE_MEMORY_TOKEN."""
    if value.get("bearer_token_env_var") == TOKEN_VARIABLE:
        return True
    headers = value.get("headers")
    return isinstance(headers, dict) and any(
        isinstance(header, str) and TOKEN_VARIABLE in header for header in headers.values()
    )


def hook_urls(settings: dict[str, Any]) -> list[str]:
    """The `--url` of each of our hook handlers under `settings["hooks"]`, in order, distinct."""
    urls: list[str] = []
    hooks = settings.get("hooks")
    for groups in hooks.values() if isinstance(hooks, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for handler in handlers if isinstance(handlers, list) else ():
                url = url_argument(handler["command"]) if is_ours(handler) else None
                if url is not None and url not in urls:
                    urls.append(url)
    return urls


def url_argument(command: str) -> str | None:
    """The server's base URL a hook command passes as `--url`, if it does."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    for at, word in enumerate(words[:-1]):
        if word == "--url":
            return base_url(words[at + 1])
    return None


def hook_routes(path: str, source: Path, settings: dict[str, Any], fix: str) -> list[Route]:
    """A hooks route per URL our hooks in `settings` call (one, unless they were edited)."""
    return [Route(path, "hooks", source, url, fix) for url in hook_urls(settings)]
