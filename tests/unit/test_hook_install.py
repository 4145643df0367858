"""install-hooks / uninstall-hooks: our entries merged into settings.json, and only ours removed."""

from __future__ import annotations

import json
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from server.cli.main import main
from server.jobs.agent_files import backups_folder
from server.jobs.hook_install import (
    EVENTS,
    HookSettingsError,
    install,
    is_ours,
    settings_path,
    uninstall,
)
from tests.fixture_sessions import SHARED_FIXTURES

URL = "http://127.0.0.1:3333"
NOW = datetime(2026, 8, 22, 12, 0, tzinfo=UTC)
FIXTURE_SETTINGS = SHARED_FIXTURES / "hooks" / "settings.example.json"
OTHER_HOOK = {"type": "command", "command": "~/bin/notify-done.sh", "timeout": 10}


def existing_settings() -> dict[str, Any]:
    """A user's file: a model choice, a PreToolUse guard and a Stop hook of their own."""
    return {
        "model": "opus",
        "permissions": {"allow": ["Bash(pnpm test:*)"]},
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [{"type": "command", "command": "~/bin/guard.sh", "timeout": 5}],
                }
            ],
            "Stop": [{"hooks": [OTHER_HOOK]}],
        },
    }


def backups(tmp_path: Path) -> Path:
    """Where install and uninstall keep the old file: a data dir under `tmp_path`."""
    return backups_folder(tmp_path / "data")


def write(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=4) + "\n")


def read(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text())
    assert isinstance(data, dict)
    return data


def ours(data: dict[str, Any], event: str) -> list[dict[str, Any]]:
    return [h for group in data["hooks"].get(event, []) for h in group["hooks"] if is_ours(h)]


def test_install_adds_one_entry_per_event_in_the_documented_shape(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"

    change = install(path, URL, now=NOW, backups=backups(tmp_path))

    data = read(path)
    assert change.changed and change.backup is None
    for name, event, _ in EVENTS:
        [group] = data["hooks"][name]
        [handler] = group["hooks"]
        assert handler["type"] == "command"
        assert f" {event} --url {URL}" in handler["command"]
        assert handler["command"].endswith("|| true")
        assert isinstance(handler["timeout"], int)


def test_install_twice_leaves_one_copy_of_each_entry_and_keeps_the_others(
    tmp_path: Path,
) -> None:
    path = tmp_path / "settings.json"
    write(path, existing_settings())

    first = install(path, URL, now=NOW, backups=backups(tmp_path))
    after_first = path.read_text()
    second = install(path, URL, now=NOW + timedelta(seconds=1), backups=backups(tmp_path))

    data = read(path)
    assert first.changed and not second.changed
    assert path.read_text() == after_first
    assert all(len(ours(data, name)) == 1 for name, _, _ in EVENTS)
    assert data["model"] == "opus"
    assert data["permissions"] == {"allow": ["Bash(pnpm test:*)"]}
    # The user's own PreToolUse guard is kept as it was, ahead of ours.
    theirs = [g for g in data["hooks"]["PreToolUse"] if not any(is_ours(h) for h in g["hooks"])]
    assert theirs == existing_settings()["hooks"]["PreToolUse"]
    assert data["hooks"]["PreToolUse"][0] == existing_settings()["hooks"]["PreToolUse"][0]
    assert OTHER_HOOK in [h for group in data["hooks"]["Stop"] for h in group["hooks"]]


def test_install_replaces_an_older_entry_in_place(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    install(path, "http://127.0.0.1:4000", now=NOW, backups=backups(tmp_path))

    install(path, URL, now=NOW + timedelta(seconds=1), backups=backups(tmp_path))

    [handler] = ours(read(path), "UserPromptSubmit")
    assert f"--url {URL}" in handler["command"]
    assert "4000" not in json.dumps(read(path))


def test_install_backs_the_previous_file_up_into_the_data_dir_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    write(path, existing_settings())
    before = path.read_text()

    change = install(path, URL, now=NOW, backups=backups(tmp_path))

    assert change.backup is not None
    assert change.backup.parent == backups(tmp_path)
    flat = str(path).lstrip("/").replace("/", "_")
    assert change.backup.name == f"{flat}.bak-20260822T120000000000Z"
    assert change.backup.read_text() == before
    assert stat.S_IMODE(change.backup.stat().st_mode) == 0o600
    assert stat.S_IMODE(backups(tmp_path).stat().st_mode) == 0o700
    assert [p.name for p in tmp_path.iterdir() if ".bak-" in p.name or ".tmp" in p.name] == []


def test_install_refuses_and_leaves_the_file_when_no_backup_can_be_made(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    write(path, existing_settings())
    before = path.read_text()
    (tmp_path / "data").write_text("a file where the data dir should be")

    with pytest.raises(HookSettingsError, match=r"cannot back up .*settings\.json was left as it"):
        install(path, URL, now=NOW, backups=backups(tmp_path))

    assert path.read_text() == before


def test_dry_run_shows_a_diff_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "claude" / "settings.json"
    path.parent.mkdir()
    write(path, existing_settings())
    before = path.read_text()

    change = install(path, URL, now=NOW, backups=backups(tmp_path), dry_run=True)

    assert change.changed
    assert change.diff.startswith(f"--- {path}")
    assert "+" in change.diff and "UserPromptSubmit" in change.diff
    assert path.read_text() == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]


def test_uninstall_removes_only_our_entries(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    write(path, existing_settings())
    install(path, URL, now=NOW, backups=backups(tmp_path))

    change = uninstall(path, now=NOW + timedelta(seconds=1), backups=backups(tmp_path))

    assert change.changed
    assert read(path) == existing_settings()


def test_uninstall_drops_the_hooks_key_our_install_created(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    write(path, {"model": "opus"})
    install(path, URL, now=NOW, backups=backups(tmp_path))

    uninstall(path, now=NOW + timedelta(seconds=1), backups=backups(tmp_path))

    assert read(path) == {"model": "opus"}


def test_uninstall_recognises_the_cli_form_of_our_hook_by_its_marker(
    tmp_path: Path,
) -> None:
    path = tmp_path / "settings.json"
    cli_hook = {"type": "command", "command": "claude-memory hook session-start"}
    write(path, {"hooks": {"SessionStart": [{"hooks": [cli_hook, OTHER_HOOK]}]}})

    uninstall(path, now=NOW, backups=backups(tmp_path))

    assert read(path) == {"hooks": {"SessionStart": [{"hooks": [OTHER_HOOK]}]}}


def test_uninstall_without_our_entries_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    write(path, json.loads(FIXTURE_SETTINGS.read_text()))
    before = path.read_text()

    change = uninstall(path, now=NOW, backups=backups(tmp_path))

    assert not change.changed
    assert path.read_text() == before


def test_a_settings_file_that_is_not_json_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"hooks": {')

    with pytest.raises(HookSettingsError, match="not valid JSON"):
        install(path, URL, now=NOW, backups=backups(tmp_path))

    assert path.read_text() == '{"hooks": {'


def test_a_symlinked_settings_file_is_changed_at_its_target(tmp_path: Path) -> None:
    target = tmp_path / "dotfiles" / "settings.json"
    target.parent.mkdir()
    write(target, {"model": "opus"})
    link = tmp_path / "settings.json"
    link.symlink_to(target)

    install(link, URL, now=NOW, backups=backups(tmp_path))

    assert link.is_symlink()
    assert len(ours(read(target), "SessionStart")) == 1


def test_settings_path_follows_claude_config_dir(tmp_path: Path) -> None:
    assert settings_path({}, tmp_path) == tmp_path / ".claude" / "settings.json"
    assert settings_path({"CLAUDE_CONFIG_DIR": "/cfg"}, tmp_path) == Path("/cfg/settings.json")


def test_cli_install_then_uninstall_round_trip(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "settings.json"
    write(path, existing_settings())

    assert main(["install-hooks", "--settings", str(path), "--dry-run"]) == 0
    diff = capsys.readouterr().out
    assert main(["install-hooks", "--settings", str(path), "--json", "--no-check"]) == 0
    installed = json.loads(capsys.readouterr().out)
    assert main(["uninstall-hooks", "--settings", str(path), "--json"]) == 0
    removed = json.loads(capsys.readouterr().out)

    assert diff.startswith("---")
    assert installed["changed"] and Path(installed["backup"]).parent == backups(tmp_path)
    assert "server/hooks.py user-prompt-submit" in installed["command"]
    assert removed["changed"]
    assert read(path) == existing_settings()
