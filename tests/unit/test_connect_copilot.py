"""connect / disconnect for GitHub Copilot CLI: our `mcpServers` entry in its mcp-config.json and
only ours, our hooks file, `$COPILOT_HOME`, refusals.
Copilot's own CLI reading the result: tests/integration/test_copilot.py."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from server.agents.registry import connect, disconnect
from server.jobs.connect import ConnectError

URL = "http://127.0.0.1:3333"
NOW = datetime(2026, 11, 26, 9, 0, tzinfo=UTC)
USER_CONFIG = {"mcpServers": {"docs": {"type": "local", "command": "docs-server", "args": []}}}


def copilot(home: Path, **kwargs: Any) -> Any:
    options: dict[str, Any] = {"use_token": False, "environ": env(home), "now": NOW, **kwargs}
    return connect("copilot", URL, home=home, **options)


def env(home: Path, **more: str) -> dict[str, str]:
    """An environment whose data dir, where connect keeps its backups, is under `home`."""
    return {"CLAUDE_MEMORY_HOME": str(data_dir(home)), **more}


def data_dir(home: Path) -> Path:
    return home / "claude-memory-data"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_copilot_gets_an_http_entry_without_a_header_when_there_is_no_token(
    tmp_path: Path,
) -> None:
    path = write(tmp_path / ".copilot" / "mcp-config.json", json.dumps(USER_CONFIG))

    change = copilot(tmp_path)

    data = json.loads(path.read_text())
    assert change.changed and change.agent == "copilot"
    assert change.hooks == ["SessionStart", "UserPromptSubmit", "Stop"]
    assert data["mcpServers"] == {
        **USER_CONFIG["mcpServers"],
        "claude-memory": {"type": "http", "url": f"{URL}/mcp", "tools": ["*"]},
    }
    hooks = json.loads((tmp_path / ".copilot" / "hooks" / "claude-memory.json").read_text())
    assert hooks["version"] == 1 and list(hooks["hooks"]) == change.hooks
    [stop] = hooks["hooks"]["Stop"]
    assert stop["type"] == "command" and "hooks.py stop --url" in stop["bash"]
    assert "--agent copilot" in stop["bash"] and stop["timeoutSec"] == 5
    assert not (tmp_path / ".copilot" / "copilot-instructions.md").exists()


def test_without_hooks_copilot_gets_none_and_a_hooks_file_not_ours_is_refused(
    tmp_path: Path,
) -> None:
    copilot(tmp_path)
    hooks = tmp_path / ".copilot" / "hooks" / "claude-memory.json"

    change = copilot(tmp_path, hooks=False)
    mine = write(hooks, '{"version": 1, "hooks": {"Stop": [{"type": "command", "bash": "x"}]}}')

    assert change.hooks == [] and not (tmp_path / ".copilot" / "copilot-instructions.md").exists()
    with pytest.raises(ConnectError, match="not ours"):
        copilot(tmp_path)
    assert mine.read_text().startswith('{"version": 1')


def test_copilot_home_moves_both_files(tmp_path: Path) -> None:
    home = tmp_path / "elsewhere"

    copilot(tmp_path, environ=env(tmp_path, COPILOT_HOME=str(home)))

    assert "claude-memory" in json.loads((home / "mcp-config.json").read_text())["mcpServers"]
    assert (home / "hooks" / "claude-memory.json").is_file()
    assert not (tmp_path / ".copilot").exists()


def test_a_config_that_is_not_json_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    path = write(tmp_path / ".copilot" / "mcp-config.json", "{ // mine\n}")

    with pytest.raises(ConnectError, match="mcpServers"):
        copilot(tmp_path)

    assert path.read_text() == "{ // mine\n}"


def test_disconnect_removes_only_ours(tmp_path: Path) -> None:
    path = write(tmp_path / ".copilot" / "mcp-config.json", json.dumps(USER_CONFIG))
    copilot(tmp_path, use_token=True)

    change = disconnect("copilot", environ=env(tmp_path), home=tmp_path, now=NOW)

    assert change.changed and json.loads(path.read_text()) == USER_CONFIG
    assert not (tmp_path / ".copilot" / "hooks" / "claude-memory.json").exists()
