"""The Claude Code plugin in `plugins/memories/`: the files made from this package.

The plugin is installed from this repository's marketplace (`.claude-plugin/marketplace.json`)
and copied by Claude Code into its own cache, so it cannot reach back into this checkout or its
virtualenv, and links out of its folder do not survive the copy. Three of its parts are therefore
made from the package rather than written by hand:

- `hooks/hooks.json`: every hook `install-hooks` writes (server/jobs/hook_install.py `EVENTS`,
  same timeouts, the capture-only ones in the background), each running the hook client
  shipped inside the plugin with the system's `python3 -I -S`.
- `agents/recall.md`: the recall subagent (server/agents/recall_agent.py's instructions, on
  Haiku, with our read-only tools only).
- `client/`: that hook client, a copy of server/hooks.py and the standard-library modules it
  imports (`CLIENT_FILES`, at the same paths, so its own import of the working-tree check
  finds them).

`python -m server.agents.claude_plugin` writes them; tests/unit/test_plugin_files.py fails
while the committed files differ from what it would write.

The server's URL and token are the plugin's options (`userConfig` in plugin.json: Claude Code
asks for them, or `claude plugin install --config url=...`), overridden by `CLAUDE_MEMORY_URL`
and `CLAUDE_MEMORY_TOKEN` in the environment. Claude Code hands a hook its options as
`CLAUDE_PLUGIN_OPTION_<KEY>` variables; the shell picks one per hook, and with neither set the
hook client falls back to CLAUDE_MEMORY_HOST and CLAUDE_MEMORY_PORT as always.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from server.agents import recall_agent
from server.jobs.hook_install import ASYNC_EVENTS, EVENTS

REPOSITORY = Path(__file__).resolve().parents[2]
PLUGIN = REPOSITORY / "plugins" / "memories"
CLIENT = "client"
# The recall subagent's frontmatter: Claude Code names a plugin's MCP tools
# mcp__plugin_<plugin>_<server>__<tool>.
RECALL_FIELDS: dict[str, object] = {
    "name": "recall",
    "description": recall_agent.DESCRIPTION,
    "model": "haiku",
    "tools": ", ".join(
        f"mcp__plugin_memories_claude-memory__{tool}" for tool in recall_agent.TOOLS
    ),
}
# The hook client and everything it may import (tests/unit/test_architecture.py holds it to
# these: the working-tree check, redaction and the reading it matches on, and each agent's
# standard-library description), with the packages they sit in, as paths under the
# repository and, the same, under the plugin's client/ folder. Globbed, so a new agent's
# description ships without editing this list.
_CLIENT_MODULES = (
    REPOSITORY / "server" / "hooks.py",
    REPOSITORY / "server" / "core" / "redact.py",
    REPOSITORY / "server" / "core" / "readable.py",
    *(REPOSITORY / "server" / "worktree").glob("*.py"),
    *(REPOSITORY / "server" / "agent_facts").glob("*.py"),
)
CLIENT_FILES = tuple(
    sorted(
        {
            path.relative_to(REPOSITORY).as_posix()
            for module in _CLIENT_MODULES
            for path in (
                module,
                *(
                    folder / "__init__.py"
                    for folder in module.parents
                    if folder.is_relative_to(REPOSITORY / "server")
                ),
            )
        }
    )
)


def hook_command(event: str) -> str:
    """The shell command for our `event` (hooks.py's argument, e.g. `user-prompt-submit`).

    `|| true` keeps the exit code 0 when `python3` is missing (exit 2 would erase the prompt).
    """
    return (
        'CLAUDE_MEMORY_TOKEN="${CLAUDE_MEMORY_TOKEN:-$CLAUDE_PLUGIN_OPTION_TOKEN}" '
        f'python3 -I -S "${{CLAUDE_PLUGIN_ROOT}}/{CLIENT}/server/hooks.py" {event} '
        '--url "${CLAUDE_MEMORY_URL:-$CLAUDE_PLUGIN_OPTION_URL}" || true'
    )


def hooks_json() -> dict[str, Any]:
    """hooks/hooks.json: the events and timeouts of `install-hooks`, the plugin's client."""
    hooks: dict[str, Any] = {}
    for name, event, timeout in EVENTS:
        handler: dict[str, Any] = {
            "type": "command",
            "command": hook_command(event),
            "timeout": timeout,
        }
        if name in ASYNC_EVENTS:
            handler["async"] = True
        hooks[name] = [{"hooks": [handler]}]
    return {"hooks": hooks}


def built_files() -> dict[str, str]:
    """What the build writes: the text of each file, by its path under the plugin folder."""
    files = {
        "hooks/hooks.json": json.dumps(hooks_json(), indent=2) + "\n",
        "agents/recall.md": recall_agent.markdown_agent(RECALL_FIELDS, ""),
    }
    for source in CLIENT_FILES:
        files[f"{CLIENT}/{source}"] = (REPOSITORY / source).read_text(encoding="utf-8")
    return files


def stale_files(plugin: Path = PLUGIN) -> list[str]:
    """The built files that are missing from `plugin` or differ from what the build writes,
    and files under its client/ that the build would not write."""
    wanted = built_files()
    stale = [
        name
        for name, text in wanted.items()
        if not (plugin / name).is_file() or (plugin / name).read_text(encoding="utf-8") != text
    ]
    client = plugin / CLIENT
    extra = [
        path.relative_to(plugin).as_posix()
        for path in sorted(client.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    ]
    return stale + [name for name in extra if name not in wanted]


def build(plugin: Path = PLUGIN) -> list[str]:
    """Write the built files into `plugin` (and drop stray client files); what changed."""
    changed = stale_files(plugin)
    wanted = built_files()
    for name in changed:
        path = plugin / name
        if name in wanted:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(wanted[name], encoding="utf-8")
        else:
            path.unlink()
    return changed


if __name__ == "__main__":
    written = build()
    sys.stdout.write("".join(f"wrote {name}\n" for name in written) or "up to date\n")
