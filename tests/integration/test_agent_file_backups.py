"""Where connect, disconnect, install-hooks and uninstall-hooks keep the old versions of the
agents' files: in the data dir (`<data dir>/backups/agent-files/`), never beside the file
(issue #68: `disconnect opencode` and `disconnect copilot` left `.bak-<time>` files in the
agents' folders). The real CLI in a fresh HOME; no server is needed (`--no-check`).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from tests.integration.processes import cli_json

pytestmark = pytest.mark.integration

OPENCODE_CONFIG = {"$schema": "https://opencode.ai/config.json", "share": "disabled"}
COPILOT_CONFIG = {"mcpServers": {"notes": {"type": "http", "url": "https://notes.example/mcp"}}}
CLAUDE_SETTINGS = {"model": "opus", "permissions": {"allow": ["Bash(pnpm test:*)"]}}
URL = "http://127.0.0.1:3999"


def write(path: Path, data: dict[str, Any]) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=2) + "\n"
    path.write_text(text)
    return text


def fresh_env(tmp_path: Path) -> dict[str, str]:
    """A user's environment: HOME and the data dir under `tmp_path`, no agent's own overrides
    (so every agent's files are in its default folder under HOME), no agent CLI on PATH."""
    dropped = ("XDG_", "OPENCODE", "COPILOT_", "CLAUDE_CONFIG_DIR", "CLAUDE_MEMORY_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    env.update(HOME=str(tmp_path / "home"), CLAUDE_MEMORY_HOME=str(tmp_path / "data"))
    return env


def backups_by_file(*reports: dict[str, Any]) -> dict[str, list[Path]]:
    """Each changed file's backups, as connect and disconnect report them, in order."""
    found: dict[str, list[Path]] = {}
    for report in reports:
        for file in report["files"]:
            if file["backup"]:
                found.setdefault(file["path"], []).append(Path(file["backup"]))
    return found


def test_connect_disconnect_and_hooks_keep_backups_in_the_data_dir_not_beside_the_files(
    tmp_path: Path,
) -> None:
    env = fresh_env(tmp_path)
    home = tmp_path / "home"
    opencode = home / ".config" / "opencode" / "opencode.json"
    copilot = home / ".copilot" / "mcp-config.json"
    claude = home / ".claude" / "settings.json"
    originals = {
        str(opencode): write(opencode, OPENCODE_CONFIG),
        str(copilot): write(copilot, COPILOT_CONFIG),
        str(claude): write(claude, CLAUDE_SETTINGS),
    }

    reports = [
        cli_json("connect", "opencode", "--url", URL, "--no-check", env=env),
        cli_json("disconnect", "opencode", env=env),
        cli_json("connect", "copilot", "--url", URL, "--no-check", env=env),
        cli_json("disconnect", "copilot", env=env),
    ]
    installed = cli_json("install-hooks", "--url", URL, "--no-check", "--json", env=env)
    removed = cli_json("uninstall-hooks", "--json", env=env)

    assert all(report["changed"] for report in [*reports, installed, removed])
    left = [str(p) for p in home.rglob("*") if ".bak-" in p.name]
    assert left == [], "backups left in the agents' folders"
    folder = tmp_path / "data" / "backups" / "agent-files"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    kept = backups_by_file(*reports)
    kept[str(claude)] = [Path(installed["backup"]), Path(removed["backup"])]
    for path, original in originals.items():
        first = kept[path][0]
        assert first.parent == folder
        assert first.name.startswith(path.lstrip("/").replace("/", "_") + ".bak-")
        assert first.read_text() == original, path
        assert json.loads(Path(path).read_text()) == json.loads(original), "not as it was"
    every = [backup for backups in kept.values() for backup in backups]
    assert sorted(every) == sorted(folder.iterdir())
    assert {stat.S_IMODE(backup.stat().st_mode) for backup in every} == {0o600}
