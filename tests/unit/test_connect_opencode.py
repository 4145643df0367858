"""connect / disconnect for OpenCode: our `mcp` entry in its global config and only ours, our
plugin (it has no command hooks), the instructions block for a version without plugins,
backups, refusals. OpenCode's own
CLI reading the result: tests/integration/test_opencode.py."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from server.agents.opencode import PLUGIN_EVENTS, config_file
from server.agents.registry import connect, disconnect
from server.jobs.connect import BLOCK_START, ConnectError

URL = "http://127.0.0.1:3333"
NOW = datetime(2026, 11, 26, 9, 0, tzinfo=UTC)
USER_CONFIG = {
    "$schema": "https://opencode.ai/config.json",
    "model": "ollama/qwen2.5-coder:7b",
    "mcp": {"docs": {"type": "local", "command": ["docs-server", "--stdio"]}},
}


def opencode(home: Path, **kwargs: Any) -> Any:
    options: dict[str, Any] = {"use_token": False, "environ": env(home), "now": NOW, **kwargs}
    return connect("opencode", URL, home=home, **options)


def env(home: Path, **more: str) -> dict[str, str]:
    """An environment whose data dir, where connect keeps its backups, is under `home`."""
    return {"CLAUDE_MEMORY_HOME": str(data_dir(home)), **more}


def data_dir(home: Path) -> Path:
    return home / "claude-memory-data"


def plugin(home: Path) -> Path:
    return home / ".config" / "opencode" / "plugins" / "claude-memory.js"


def settings(home: Path, name: str = "opencode.json") -> Path:
    return home / ".config" / "opencode" / name


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_opencode_gets_a_remote_entry_and_our_plugin_and_keeps_everything_else(
    tmp_path: Path,
) -> None:
    path = write(settings(tmp_path), json.dumps(USER_CONFIG, indent=2) + "\n")

    change = opencode(tmp_path, use_token=True)

    data = json.loads(path.read_text())
    assert change.changed and change.agent == "opencode" and change.hooks == PLUGIN_EVENTS
    assert data["mcp"]["claude-memory"] == {
        "type": "remote",
        "url": "http://127.0.0.1:3333/mcp",
        "enabled": True,
        "oauth": False,
        "headers": {"Authorization": "Bearer {env:CLAUDE_MEMORY_TOKEN}"},
    }
    del data["mcp"]["claude-memory"]
    assert data == USER_CONFIG
    assert any("CLAUDE_MEMORY_TOKEN" in note for note in change.notes)
    script = plugin(tmp_path).read_text()
    assert script.startswith("// claude-memory: added by `claude-memory connect opencode`")
    assert 'const SERVER = "http://127.0.0.1:3333";' in script
    # The plugin and the recall subagent are new.
    assert [f.backup is not None for f in change.files] == [True, False, False]
    recall = tmp_path / ".config" / "opencode" / "agents" / "claude-memory-recall.md"
    assert 'mode: "subagent"' in recall.read_text()
    assert not (tmp_path / ".config" / "opencode" / "AGENTS.md").exists()


def test_opencode_connect_twice_changes_nothing_the_second_time(tmp_path: Path) -> None:
    first = opencode(tmp_path)
    again = opencode(tmp_path, now=NOW + timedelta(seconds=1))

    assert first.changed and not again.changed
    assert json.loads(settings(tmp_path).read_text())["mcp"]["claude-memory"]["url"].endswith(
        "/mcp"
    )


def test_opencode_with_no_hooks_registers_the_server_alone_and_removes_our_plugin(
    tmp_path: Path,
) -> None:
    opencode(tmp_path)

    change = opencode(tmp_path, hooks=False, now=NOW + timedelta(seconds=1))

    assert [(f.path.name, f.changed) for f in change.files] == [
        ("opencode.json", False),
        ("claude-memory.js", True),
        ("claude-memory-recall.md", False),  # kept: the server stays connected
    ]
    assert not plugin(tmp_path).exists() and change.hooks == []
    assert not (tmp_path / ".config" / "opencode" / "AGENTS.md").exists()


def test_a_plugin_of_the_users_under_our_name_is_left_alone(tmp_path: Path) -> None:
    mine = write(plugin(tmp_path), "export const Mine = async () => ({});\n")

    with pytest.raises(ConnectError, match="not ours"):
        opencode(tmp_path)

    assert mine.read_text() == "export const Mine = async () => ({});\n"
    assert not settings(tmp_path).exists()


def test_a_subagent_of_the_users_under_our_recall_name_is_left_alone(tmp_path: Path) -> None:
    agents = tmp_path / ".config" / "opencode" / "agents"
    mine = write(agents / "claude-memory-recall.md", "---\nmode: subagent\n---\nMine.\n")

    with pytest.raises(ConnectError, match="not ours"):
        opencode(tmp_path)

    assert mine.read_text() == "---\nmode: subagent\n---\nMine.\n"
    assert not settings(tmp_path).exists()


def test_an_opencode_without_plugins_gets_the_instructions_block(tmp_path: Path) -> None:
    fake = write(tmp_path / "bin" / "opencode", "#!/bin/sh\necho 0.15.2\n")
    fake.chmod(0o755)

    change = opencode(tmp_path, environ=env(tmp_path, PATH=str(fake.parent)))

    assert change.version == "0.15.2" and change.hooks == []
    assert not plugin(tmp_path).exists()
    agents_md = tmp_path / ".config" / "opencode" / "AGENTS.md"
    assert agents_md.read_text().startswith(BLOCK_START)
    assert change.notes == [
        "OpenCode 0.15.2 has no hooks (1.0.0 and later do): the memory instructions went to "
        "AGENTS.md instead"
    ]


def test_opencode_writes_the_file_it_already_reads(tmp_path: Path) -> None:
    # OpenCode writes a bare opencode.jsonc on its first start; config.json is its oldest name.
    jsonc = write(settings(tmp_path, "opencode.jsonc"), '{"$schema": "https://opencode.ai/c"}\n')
    write(settings(tmp_path, "config.json"), "{}\n")

    opencode(tmp_path, hooks=False)

    assert config_file({}, tmp_path) == jsonc
    assert "claude-memory" in json.loads(jsonc.read_text())["mcp"]
    assert not settings(tmp_path).exists()
    assert config_file({"XDG_CONFIG_HOME": "/cfg"}, tmp_path) == Path("/cfg/opencode/opencode.json")


def test_opencode_refuses_a_config_with_comments_and_changes_nothing(tmp_path: Path) -> None:
    text = '{\n  // my model\n  "model": "ollama/qwen2.5-coder:7b"\n}\n'
    path = write(settings(tmp_path, "opencode.jsonc"), text)

    with pytest.raises(ConnectError, match="mcp by hand"):
        opencode(tmp_path)

    assert path.read_text() == text
    assert sorted(p.name for p in path.parent.iterdir()) == ["opencode.jsonc"]


def test_opencode_disconnect_removes_our_entry_plugin_and_block_and_only_those(
    tmp_path: Path,
) -> None:
    path = write(settings(tmp_path), json.dumps(USER_CONFIG, indent=2) + "\n")
    agents_md = write(tmp_path / ".config" / "opencode" / "AGENTS.md", "# Mine\n\nUse pnpm.\n")
    opencode(tmp_path, instructions=True)

    removed = disconnect(
        "opencode", environ=env(tmp_path), home=tmp_path, now=NOW + timedelta(seconds=1)
    )

    assert removed.changed and not plugin(tmp_path).exists()
    assert json.loads(path.read_text()) == USER_CONFIG
    assert agents_md.read_text() == "# Mine\n\nUse pnpm.\n"
