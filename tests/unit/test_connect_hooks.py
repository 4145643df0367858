"""connect / disconnect: our hooks in Codex's hooks.json and Gemini CLI's settings.json, and
only ours; the fallback to the instructions block for versions without hooks.

The version comes from the agent's CLI on the PATH connect is given; here small scripts print
what `codex --version` and `gemini --version` print. The real CLIs reading these files and
running the hooks: tests/integration/test_agent_hook_clients.py.
"""

from __future__ import annotations

import json
import shlex
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from server.agents.registry import connect, disconnect
from server.jobs.connect import BLOCK_START, ConnectError
from server.jobs.hook_install import HOOKS_SCRIPT, is_ours

URL = "http://127.0.0.1:3333"
NOW = datetime(2026, 8, 22, 12, 0, tzinfo=UTC)
LATER = NOW + timedelta(seconds=1)
CODEX_EVENTS = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Stop",
    "SessionEnd",
]
GEMINI_EVENTS = [
    "SessionStart",
    "BeforeAgent",
    "BeforeTool",
    "AfterTool",
    "AfterAgent",
    "SessionEnd",
]
USER_HOOK = {"type": "command", "command": "~/bin/notify.sh", "timeout": 10}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def cli(folder: Path, name: str, prints: str) -> dict[str, str]:
    """A PATH holding a `name` command that prints `prints` for --version, like the real one."""
    write(folder / name, f"#!/bin/sh\necho {shlex.quote(prints)}\n").chmod(0o755)
    return {"PATH": str(folder)}


def attach(agent: str, home: Path, environ: dict[str, str] | None = None, **kwargs: Any) -> Any:
    options: dict[str, Any] = {"now": NOW, **kwargs}
    return connect(
        agent, URL, use_token=False, environ={**env(home), **(environ or {})}, home=home, **options
    )


def env(home: Path, **more: str) -> dict[str, str]:
    """An environment whose data dir, where connect keeps its backups, is under `home`."""
    return {"CLAUDE_MEMORY_HOME": str(data_dir(home)), **more}


def data_dir(home: Path) -> Path:
    return home / "claude-memory-data"


def ours(data: dict[str, Any], event: str) -> list[dict[str, Any]]:
    return [h for group in data["hooks"].get(event, []) for h in group["hooks"] if is_ours(h)]


def hooks_json(home: Path) -> Path:
    return home / ".codex" / "hooks.json"


def gemini_settings(home: Path) -> Path:
    return home / ".gemini" / "settings.json"


# --- Codex ------------------------------------------------------------------------------------


def test_codex_gets_our_hooks_in_hooks_json_with_the_agent_named(tmp_path: Path) -> None:
    change = attach("codex", tmp_path)

    data = json.loads(hooks_json(tmp_path).read_text())
    assert list(data) == ["hooks"]  # Codex refuses any other top-level key but `description`
    assert list(data["hooks"]) == CODEX_EVENTS
    assert change.hooks == CODEX_EVENTS
    for event in CODEX_EVENTS:
        [handler] = ours(data, event)
        assert set(handler) == {"type", "command", "timeout"}
        assert str(HOOKS_SCRIPT) in handler["command"]
        assert handler["command"].endswith(f"--url {URL} --agent codex || true")
        assert 1 <= handler["timeout"] <= 5  # seconds
    assert ours(data, "SessionEnd")[0]["timeout"] <= 3  # Codex clamps SessionEnd to 3 s
    assert any("trust" in note and "/hooks" in note for note in change.notes)


def test_codex_hooks_keep_the_users_hooks_and_leave_with_disconnect(tmp_path: Path) -> None:
    mine = {"description": "my hooks", "hooks": {"Stop": [{"hooks": [USER_HOOK]}]}}
    path = write(hooks_json(tmp_path), json.dumps(mine, indent=2) + "\n")
    before = path.read_text()

    attach("codex", tmp_path)
    data = json.loads(path.read_text())
    again = attach("codex", tmp_path, now=LATER)

    assert data["description"] == "my hooks"
    assert data["hooks"]["Stop"][0] == {"hooks": [USER_HOOK]}
    assert len(ours(data, "Stop")) == 1
    assert not again.changed
    disconnect("codex", environ=env(tmp_path), home=tmp_path, now=LATER + timedelta(seconds=1))
    assert path.read_text() == before


def test_codex_hooks_file_that_only_held_ours_goes_with_disconnect(tmp_path: Path) -> None:
    attach("codex", tmp_path)

    change = disconnect("codex", environ=env(tmp_path), home=tmp_path, now=LATER)

    assert change.changed
    assert not hooks_json(tmp_path).exists()
    assert not (tmp_path / ".codex" / "config.toml").exists()


def test_codex_hooks_follow_a_new_url_in_place(tmp_path: Path) -> None:
    attach("codex", tmp_path)

    connect(
        "codex",
        "http://127.0.0.1:4000",
        use_token=False,
        environ=env(tmp_path),
        home=tmp_path,
        now=LATER,
    )

    data = json.loads(hooks_json(tmp_path).read_text())
    assert all(len(ours(data, event)) == 1 for event in CODEX_EVENTS)
    assert "--url http://127.0.0.1:4000 --agent codex" in ours(data, "Stop")[0]["command"]


def test_no_hooks_connects_the_server_only_and_takes_earlier_hooks_out(tmp_path: Path) -> None:
    attach("codex", tmp_path)

    change = attach("codex", tmp_path, now=LATER, hooks=False)

    assert not hooks_json(tmp_path).exists()
    assert change.hooks == []
    assert "claude-memory" in (tmp_path / ".codex" / "config.toml").read_text()
    assert not (tmp_path / ".codex" / "AGENTS.md").exists()


def test_a_hooks_json_codex_cannot_read_stops_connect_before_any_write(tmp_path: Path) -> None:
    write(hooks_json(tmp_path), '{"hooks": [')

    with pytest.raises(ConnectError, match="not valid JSON"):
        attach("codex", tmp_path)

    assert not (tmp_path / ".codex" / "config.toml").exists()


def test_codex_without_hooks_gets_the_instructions_block_instead(tmp_path: Path) -> None:
    environ = cli(tmp_path / "bin", "codex", "codex-cli 0.110.0")

    change = attach("codex", tmp_path, environ)

    assert not hooks_json(tmp_path).exists()
    assert (tmp_path / ".codex" / "AGENTS.md").read_text().startswith(BLOCK_START)
    assert change.version == "0.110.0" and change.hooks == []
    assert change.notes == [
        "Codex 0.110.0 has no hooks (0.114.0 and later do): the memory instructions went to "
        "AGENTS.md instead"
    ]


def test_codex_with_hooks_behind_a_feature_flag_is_told_how_to_turn_them_on(
    tmp_path: Path,
) -> None:
    environ = cli(tmp_path / "bin", "codex", "codex-cli 0.120.0")

    change = attach("codex", tmp_path, environ)

    assert hooks_json(tmp_path).is_file()
    assert any("codex_hooks = true" in note for note in change.notes)


def test_the_current_codex_gets_hooks_and_no_flag_advice(tmp_path: Path) -> None:
    environ = cli(tmp_path / "bin", "codex", "codex-cli 0.169.0")

    change = attach("codex", tmp_path, environ)

    assert change.version == "0.169.0" and change.hooks == CODEX_EVENTS
    assert not any("[features]" in note for note in change.notes)


def test_codex_dry_run_shows_the_hooks_and_writes_nothing(tmp_path: Path) -> None:
    change = attach("codex", tmp_path, dry_run=True)

    hooks_diff = next(f.diff for f in change.files if f.path.name == "hooks.json")
    assert '"PreToolUse"' in hooks_diff and "--agent codex" in hooks_diff
    assert not (tmp_path / ".codex").exists()


# --- Gemini CLI -------------------------------------------------------------------------------


def test_gemini_gets_our_hooks_with_millisecond_timeouts_and_names(tmp_path: Path) -> None:
    path = write(gemini_settings(tmp_path), json.dumps({"ui": {"theme": "Dracula"}}) + "\n")

    change = attach("gemini", tmp_path)

    data = json.loads(path.read_text())
    assert list(data) == ["ui", "mcpServers", "hooks"]
    assert list(data["hooks"]) == GEMINI_EVENTS
    assert change.hooks == GEMINI_EVENTS
    for event in GEMINI_EVENTS:
        [handler] = ours(data, event)
        assert handler["name"].startswith("claude-memory-")
        assert handler["command"].endswith(f"--url {URL} --agent gemini || true")
        assert 1_000 <= handler["timeout"] <= 5_000  # milliseconds
    assert ours(data, "BeforeAgent")[0]["command"].split()[4] == "before-agent"


def test_gemini_hooks_keep_the_users_and_leave_with_disconnect(tmp_path: Path) -> None:
    mine = {
        "hooks": {
            "disabled": ["lint"],
            "AfterTool": [{"matcher": "write_file", "hooks": [{**USER_HOOK, "name": "lint"}]}],
        },
        "ui": {"theme": "Dracula"},
    }
    path = write(gemini_settings(tmp_path), json.dumps(mine, indent=2) + "\n")
    before = path.read_text()

    attach("gemini", tmp_path)
    data = json.loads(path.read_text())
    disconnect("gemini", environ=env(tmp_path), home=tmp_path, now=LATER)

    assert data["hooks"]["disabled"] == ["lint"]
    assert data["hooks"]["AfterTool"][0] == mine["hooks"]["AfterTool"][0]
    assert len(ours(data, "AfterTool")) == 1
    assert path.read_text() == before


def test_gemini_without_hooks_gets_the_instructions_block_instead(tmp_path: Path) -> None:
    environ = cli(tmp_path / "bin", "gemini", "0.20.0")

    change = attach("gemini", tmp_path, environ)

    assert "hooks" not in json.loads(gemini_settings(tmp_path).read_text())
    assert (tmp_path / ".gemini" / "GEMINI.md").read_text().startswith(BLOCK_START)
    assert change.notes[-1] == (
        "Gemini CLI 0.20.0 has no hooks (0.26.0 and later do): the memory instructions went to "
        "GEMINI.md instead"
    )
    assert "only in a folder you trusted" in change.notes[0]


def test_a_cli_whose_version_cannot_be_read_counts_as_current(tmp_path: Path) -> None:
    environ = cli(tmp_path / "bin", "gemini", "something went wrong")

    change = attach("gemini", tmp_path, environ)

    assert change.version is None and change.hooks == GEMINI_EVENTS


def test_hooks_are_not_installed_for_an_https_server(tmp_path: Path) -> None:
    change = connect(
        "gemini",
        "https://memory.example",
        use_token=False,
        environ=env(tmp_path),
        home=tmp_path,
        now=NOW,
    )

    assert "hooks" not in json.loads(gemini_settings(tmp_path).read_text())
    assert change.hooks == [] and any("http://" in note for note in change.notes)
