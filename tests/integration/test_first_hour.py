"""A new user's first hour, from the README's own commands, with the real pinned Claude Code CLI.

In a fresh HOME holding a user's own Claude Code settings: `./quickstart.sh` (native, in the
background, the plugin accepted), then the README's commands as written, through the
`claude-memory` launcher quickstart installs: `doctor` finds no problem, Claude Code holds
exactly one connection and one set of hooks, and `disconnect claude-code` leaves the user's
settings as they were before quickstart ran.

The server is this checkout's, on the test's database (any Postgres by setting, as the README
allows) and a free port; the agent CLIs come from tests/agent_clis.py.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.db_fixtures import free_port
from tests.integration.processes import completed

pytestmark = pytest.mark.integration

REPOSITORY = Path(__file__).resolve().parents[2]
USER_SETTINGS = {
    "permissions": {"allow": ["Bash(ls)"]},
    "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo done"}]}]},
}
USER_SERVER = {"type": "stdio", "command": "my-tool", "args": []}


def run(command: list[str], env: dict[str, str]) -> str:
    """A README command, run from the checkout as a user would."""
    return completed(command, env, cwd=REPOSITORY, timeout=600)


def claude_memory_servers(listing: str) -> list[str]:
    return [line for line in listing.splitlines() if "claude-memory" in line]


def test_readme_commands_leave_one_connection_and_disconnect_restores_the_settings(
    agent_clis: Path, isolated_home: Path, pg_url: str
) -> None:
    claude_dir = isolated_home / ".claude"
    claude_dir.mkdir()
    settings = claude_dir / "settings.json"
    settings.write_text(json.dumps(USER_SETTINGS, indent=2) + "\n")
    (isolated_home / ".claude.json").write_text(json.dumps({"mcpServers": {"mine": USER_SERVER}}))
    settings_before = settings.read_text()
    skipped = ("CLAUDE_CONFIG_DIR", "CLAUDE_MEMORY_URL", "CLAUDE_MEMORY_TOKEN", "PYTHONPATH")
    env = {key: value for key, value in os.environ.items() if key not in skipped}
    launcher_dir = isolated_home / ".local" / "bin"
    env.update(
        HOME=str(isolated_home),
        PATH=f"{launcher_dir}{os.pathsep}{agent_clis}{os.pathsep}{env.get('PATH', '')}",
        CLAUDE_MEMORY_DATABASE_URL=pg_url,
        CLAUDE_MEMORY_PORT=str(free_port()),
        DISABLE_AUTOUPDATER="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        NO_COLOR="1",
    )
    if "PYTHONPATH" in os.environ:  # a checkout beside the venv's own: the launcher runs it
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]

    said = run(["./quickstart.sh", "--native", "--detach", "--no-import", "--plugin"], env)
    try:
        doctor = run(["claude-memory", "doctor"], env)
        listing = run(["claude", "mcp", "list"], env)
        settings_connected = json.loads(settings.read_text())
        disconnected = run(["claude-memory", "disconnect", "claude-code", "--plain"], env)
        listing_after = run(["claude", "mcp", "list"], env)
    finally:
        stopped = run(["claude-memory", "stop"], env)

    assert "installed the claude-memory command" in said
    assert (launcher_dir / "claude-memory").is_file()
    assert doctor.rstrip().endswith("no problems found"), doctor
    servers = claude_memory_servers(listing)
    assert len(servers) == 1, listing
    assert servers[0].startswith("plugin:memories:claude-memory") and "Connected" in servers[0]
    # One set of hooks: the plugin's; settings.json holds only the user's own.
    assert settings_connected["hooks"] == USER_SETTINGS["hooks"]
    assert settings_connected["enabledPlugins"] == {"memories@claude-memory": True}

    assert "claude-code: disconnected" in disconnected
    assert claude_memory_servers(listing_after) == []
    assert settings.read_text() == settings_before
    mcp_servers = json.loads((isolated_home / ".claude.json").read_text())["mcpServers"]
    assert mcp_servers == {"mine": USER_SERVER}
    assert json.loads(stopped)["status"] == "stopped"
