"""connect / disconnect: our entry in Codex's config.toml and Gemini CLI's settings.json, and
only ours; backups, dry runs, refusals. These connect without hooks (`hooks=False`); our hooks
in hooks.json / settings.json: test_connect_hooks. The real CLIs reading these files:
test_connect_clients.
"""

from __future__ import annotations

import json
import tomllib
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from server.agents.codex import MARKER as CODEX_MARKER
from server.agents.registry import connect, disconnect
from server.cli.main import main
from server.jobs import hook_install
from server.jobs.agent_files import backups_folder
from server.jobs.connect import (
    BLOCK_START,
    ConnectError,
    mcp_url,
)

URL = "http://127.0.0.1:3333"
NOW = datetime(2026, 8, 22, 12, 0, tzinfo=UTC)
LATER = NOW + timedelta(seconds=1)
TOKEN = "a-token-that-must-never-be-written-0123"
CODEX_CONFIG = """\
# my codex config
model = "o3"  # the fast one

[mcp_servers.github]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-github"]

# profiles I switch between
[profiles.fast]
model = "o4-mini"
"""


def codex(home: Path, **kwargs: Any) -> Any:
    options = {"hooks": False, "now": NOW, **kwargs}
    return connect("codex", URL, use_token=False, environ=env(home), home=home, **options)


def env(home: Path, **more: str) -> dict[str, str]:
    """An environment whose data dir, where connect keeps its backups, is under `home`."""
    return {"CLAUDE_MEMORY_HOME": str(data_dir(home)), **more}


def data_dir(home: Path) -> Path:
    return home / "claude-memory-data"


def codex_file(home: Path) -> Path:
    return home / ".codex" / "config.toml"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def backups(home: Path) -> list[Path]:
    """The backups connect kept in the data dir of `env(home)`."""
    folder = backups_folder(data_dir(home))
    return sorted(folder.iterdir()) if folder.exists() else []


def beside(folder: Path) -> list[str]:
    """Backups left in an agent's own folder (there should be none)."""
    return sorted(p.name for p in folder.iterdir() if ".bak-" in p.name)


# --- Codex ------------------------------------------------------------------------------------


def test_codex_gets_a_streamable_http_table_and_keeps_the_rest_byte_for_byte(
    tmp_path: Path,
) -> None:
    path = write(codex_file(tmp_path), CODEX_CONFIG)

    change = connect(
        "codex",
        URL,
        use_token=True,
        environ=env(tmp_path, CLAUDE_MEMORY_TOKEN=TOKEN),
        home=tmp_path,
        now=NOW,
    )

    text = path.read_text()
    assert change.changed and change.transport == "streamable-http"
    assert text.startswith(CODEX_CONFIG)
    assert tomllib.loads(text)["mcp_servers"] == {
        "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"]},
        "claude-memory": {
            "url": "http://127.0.0.1:3333/mcp",
            "bearer_token_env_var": "CLAUDE_MEMORY_TOKEN",
        },
    }
    assert TOKEN not in text
    assert CODEX_MARKER in text


def test_codex_without_a_token_gets_no_bearer_variable(tmp_path: Path) -> None:
    codex(tmp_path)

    entry = tomllib.loads(codex_file(tmp_path).read_text())["mcp_servers"]["claude-memory"]
    assert entry == {"url": "http://127.0.0.1:3333/mcp"}


def test_codex_connect_twice_changes_nothing_the_second_time(tmp_path: Path) -> None:
    path = write(codex_file(tmp_path), CODEX_CONFIG)
    codex(tmp_path)
    after_first = path.read_text()
    made = backups(tmp_path)

    second = connect(
        "codex", URL, use_token=False, environ=env(tmp_path), home=tmp_path, now=LATER, hooks=False
    )

    assert not second.changed
    assert path.read_text() == after_first
    assert backups(tmp_path) == made


def test_codex_backs_up_the_old_file_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    path = write(codex_file(tmp_path), CODEX_CONFIG)

    change = codex(tmp_path)

    [file] = [file for file in change.files if file.path == path]  # the recall agent is new
    assert file.backup is not None
    assert file.backup == backups_folder(data_dir(tmp_path)) / (
        str(path).lstrip("/").replace("/", "_") + ".bak-20260822T120000000000Z"
    )
    assert file.backup.read_text() == CODEX_CONFIG
    assert beside(path.parent) == []
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")] == []


def test_codex_dry_run_prints_the_diff_and_writes_nothing(tmp_path: Path) -> None:
    path = write(codex_file(tmp_path), CODEX_CONFIG)

    change = codex(tmp_path, dry_run=True)

    [file] = [file for file in change.files if file.path == path]
    assert change.changed and file.changed and file.backup is None
    assert file.diff.startswith(f"--- {path}")
    assert '+url = "http://127.0.0.1:3333/mcp"' in file.diff
    assert path.read_text() == CODEX_CONFIG
    assert sorted(p.name for p in path.parent.iterdir()) == ["config.toml"]


def test_codex_dry_run_on_a_missing_file_creates_nothing(tmp_path: Path) -> None:
    change = codex(tmp_path, dry_run=True)

    assert change.changed
    assert not (tmp_path / ".codex").exists()


def test_codex_replaces_an_older_entry_where_it_stands(tmp_path: Path) -> None:
    old = CODEX_CONFIG.replace(
        "# profiles I switch between",
        '[mcp_servers."claude-memory"]\ncommand = "claude-memory"\nargs = ["mcp-stdio"]\n\n'
        '[mcp_servers."claude-memory".env]\nLOG_LEVEL = "DEBUG"\n\n# profiles I switch between',
    )
    path = write(codex_file(tmp_path), old)

    codex(tmp_path)

    text = path.read_text()
    data = tomllib.loads(text)
    assert data["mcp_servers"]["claude-memory"] == {"url": "http://127.0.0.1:3333/mcp"}
    assert data["profiles"] == {"fast": {"model": "o4-mini"}}
    assert "mcp-stdio" not in text and "LOG_LEVEL" not in text
    # In place: before the profiles, whose comment stays with them.
    assert text.index("[mcp_servers.claude-memory]") < text.index("# profiles I switch between")
    assert "# profiles I switch between\n[profiles.fast]" in text


def test_codex_disconnect_restores_the_file_as_it_was(tmp_path: Path) -> None:
    path = write(codex_file(tmp_path), CODEX_CONFIG)
    codex(tmp_path)

    change = disconnect("codex", environ=env(tmp_path), home=tmp_path, now=LATER)

    assert change.changed
    assert path.read_text() == CODEX_CONFIG


def test_codex_disconnect_removes_an_entry_codex_itself_wrote_and_only_that(
    tmp_path: Path,
) -> None:
    # The shape `codex mcp add claude-memory --url ...` writes, between two other tables.
    ours = '[mcp_servers.claude-memory]\nurl = "http://127.0.0.1:4000/mcp"\n\n'
    path = write(
        codex_file(tmp_path),
        CODEX_CONFIG.replace("# profiles I switch between", ours + "# profiles I switch between"),
    )

    disconnect("codex", environ=env(tmp_path), home=tmp_path, now=NOW)

    assert path.read_text() == CODEX_CONFIG


def test_codex_disconnect_without_our_entry_changes_nothing(tmp_path: Path) -> None:
    path = write(codex_file(tmp_path), CODEX_CONFIG)

    change = disconnect("codex", environ=env(tmp_path), home=tmp_path, now=NOW)

    assert not change.changed
    assert path.read_text() == CODEX_CONFIG
    assert backups(tmp_path) == []


def test_codex_disconnect_deletes_a_file_that_only_held_our_entry(tmp_path: Path) -> None:
    codex(tmp_path)

    disconnect("codex", environ=env(tmp_path), home=tmp_path, now=LATER)

    assert not codex_file(tmp_path).exists()
    # config.toml's and our recall agent's, each removed
    assert len(backups(tmp_path)) == 2
    assert beside(tmp_path / ".codex") == []
    assert not list((tmp_path / ".codex" / "agents").iterdir())


def test_codex_follows_codex_home(tmp_path: Path) -> None:
    home = tmp_path / "elsewhere"

    connect(
        "codex",
        URL,
        use_token=False,
        environ=env(tmp_path, CODEX_HOME=str(home)),
        home=tmp_path,
        now=NOW,
    )

    assert (home / "config.toml").is_file()
    assert not (tmp_path / ".codex").exists()


def test_codex_keeps_a_file_without_a_final_newline(tmp_path: Path) -> None:
    path = write(codex_file(tmp_path), 'model = "o3"')

    codex(tmp_path)
    disconnect("codex", environ=env(tmp_path), home=tmp_path, now=LATER)

    assert tomllib.loads(path.read_text()) == {"model": "o3"}


def test_codex_refuses_an_entry_written_as_an_inline_table(tmp_path: Path) -> None:
    inline = (
        'mcp_servers = { claude-memory = { url = "http://x/mcp" }, other = { command = "y" } }\n'
    )
    path = write(codex_file(tmp_path), inline)

    with pytest.raises(ConnectError, match="inline or with dotted keys"):
        codex(tmp_path)
    with pytest.raises(ConnectError, match="inline or with dotted keys"):
        disconnect("codex", environ=env(tmp_path), home=tmp_path, now=NOW)

    assert path.read_text() == inline


def test_codex_refuses_to_add_a_table_to_an_inline_mcp_servers(tmp_path: Path) -> None:
    inline = 'mcp_servers = { other = { command = "y" } }\n'
    path = write(codex_file(tmp_path), inline)

    with pytest.raises(ConnectError, match="without changing other entries"):
        codex(tmp_path)

    assert path.read_text() == inline


def test_codex_refuses_a_file_that_is_not_toml(tmp_path: Path) -> None:
    path = write(codex_file(tmp_path), "model = \n[broken\n")

    with pytest.raises(ConnectError, match="is not valid TOML"):
        codex(tmp_path)

    assert path.read_text() == "model = \n[broken\n"


# --- Gemini CLI -------------------------------------------------------------------------------

GEMINI_SETTINGS = {
    "theme": "Dracula",
    "security": {"auth": {"selectedType": "oauth-personal"}},
    "mcpServers": {"github": {"command": "npx", "args": ["-y", "gh"], "trust": False}},
}


def gemini_file(home: Path) -> Path:
    return home / ".gemini" / "settings.json"


def gemini(home: Path, use_token: bool = False, **kwargs: Any) -> Any:
    options = {"hooks": False, "now": NOW, **kwargs}
    return connect("gemini", URL, use_token=use_token, environ=env(home), home=home, **options)


def test_gemini_gets_an_http_url_entry_and_keeps_everything_else(tmp_path: Path) -> None:
    path = write(gemini_file(tmp_path), json.dumps(GEMINI_SETTINGS, indent=2) + "\n")

    change = gemini(tmp_path, use_token=True)

    data = json.loads(path.read_text())
    assert change.changed
    assert data["mcpServers"]["claude-memory"] == {
        "httpUrl": "http://127.0.0.1:3333/mcp",
        "timeout": 30000,
        "headers": {"Authorization": "Bearer ${CLAUDE_MEMORY_TOKEN}"},
    }
    del data["mcpServers"]["claude-memory"]
    assert data == GEMINI_SETTINGS
    assert list(json.loads(path.read_text())) == ["theme", "security", "mcpServers"]


def test_gemini_connect_twice_changes_nothing_and_backs_up_once(tmp_path: Path) -> None:
    path = write(gemini_file(tmp_path), json.dumps(GEMINI_SETTINGS) + "\n")
    before = path.read_text()

    first = gemini(tmp_path)
    after_first = path.read_text()
    second = connect(
        "gemini", URL, use_token=False, environ=env(tmp_path), home=tmp_path, now=LATER, hooks=False
    )

    assert first.changed and not second.changed
    assert path.read_text() == after_first
    [backup] = backups(tmp_path)
    assert backup.read_text() == before


def test_gemini_keeps_the_files_indentation(tmp_path: Path) -> None:
    path = write(gemini_file(tmp_path), json.dumps(GEMINI_SETTINGS, indent=4) + "\n")

    gemini(tmp_path)

    assert path.read_text().splitlines()[1] == '    "theme": "Dracula",'


def test_gemini_refuses_a_settings_file_that_is_not_json(tmp_path: Path) -> None:
    text = '{\n  // my settings\n  "theme": "Dracula"\n}\n'
    path = write(gemini_file(tmp_path), text)

    with pytest.raises(ConnectError, match=r"not valid JSON \(line 2") as refused:
        gemini(tmp_path)

    assert '"httpUrl": "http://127.0.0.1:3333/mcp"' in str(refused.value)
    assert path.read_text() == text
    assert backups(tmp_path) == []


def test_gemini_dry_run_writes_nothing(tmp_path: Path) -> None:
    path = write(gemini_file(tmp_path), json.dumps(GEMINI_SETTINGS) + "\n")
    before = path.read_text()

    change = gemini(tmp_path, dry_run=True)

    assert change.changed and "+" in change.files[0].diff
    assert path.read_text() == before
    assert backups(tmp_path) == []


def test_gemini_disconnect_removes_only_our_entry(tmp_path: Path) -> None:
    path = write(gemini_file(tmp_path), json.dumps(GEMINI_SETTINGS, indent=2) + "\n")
    before = path.read_text()
    gemini(tmp_path, use_token=True)

    change = disconnect("gemini", environ=env(tmp_path), home=tmp_path, now=LATER)

    assert change.changed
    assert path.read_text() == before


def test_gemini_disconnect_drops_the_mcp_servers_key_it_emptied(tmp_path: Path) -> None:
    path = write(gemini_file(tmp_path), '{"theme": "Dracula"}\n')
    gemini(tmp_path)

    disconnect("gemini", environ=env(tmp_path), home=tmp_path, now=LATER)

    assert json.loads(path.read_text()) == {"theme": "Dracula"}


def test_gemini_follows_gemini_cli_home(tmp_path: Path) -> None:
    environ = env(tmp_path, GEMINI_CLI_HOME=str(tmp_path / "g"))

    connect("gemini", URL, use_token=False, environ=environ, home=tmp_path, now=NOW)

    assert (tmp_path / "g" / ".gemini" / "settings.json").is_file()
    assert not (tmp_path / ".gemini").exists()


# --- instructions blocks ----------------------------------------------------------------------


def test_instructions_block_is_added_once_and_removed_alone(tmp_path: Path) -> None:
    agents = write(tmp_path / ".codex" / "AGENTS.md", "# Mine\n\nUse pnpm.\n")

    codex(tmp_path, instructions=True)
    once = agents.read_text()
    codex(tmp_path, now=LATER, instructions=True)

    assert agents.read_text() == once
    assert once.startswith("# Mine\n\nUse pnpm.\n\n" + BLOCK_START)
    assert "`startup_context`" in once

    disconnect("codex", environ=env(tmp_path), home=tmp_path, now=LATER + timedelta(seconds=1))

    assert agents.read_text() == "# Mine\n\nUse pnpm.\n"


def test_gemini_instructions_go_to_gemini_md_and_leave_with_disconnect(tmp_path: Path) -> None:
    gemini(tmp_path, instructions=True)
    context = tmp_path / ".gemini" / "GEMINI.md"
    assert context.read_text().startswith(BLOCK_START)

    disconnect("gemini", environ=env(tmp_path), home=tmp_path, now=LATER)

    assert not context.exists()


def test_instructions_with_unpaired_markers_are_left_alone(tmp_path: Path) -> None:
    text = f"notes\n{BLOCK_START} -->\nhalf a block\n"
    agents = write(tmp_path / ".codex" / "AGENTS.md", text)

    with pytest.raises(ConnectError, match="markers do not pair up"):
        disconnect("codex", environ=env(tmp_path), home=tmp_path, now=NOW)

    assert agents.read_text() == text


# --- Claude Code (the `claude` CLI itself is driven in test_connect_clients) ------------------


def test_claude_code_without_the_cli_names_the_command_to_run(tmp_path: Path) -> None:
    environ = env(tmp_path, PATH=str(tmp_path / "empty"))

    with pytest.raises(ConnectError) as refused:
        connect("claude-code", URL, use_token=True, environ=environ, home=tmp_path, now=NOW)

    assert str(refused.value) == (
        "the `claude` command is not on PATH; run: claude mcp add --scope user --transport http "
        "claude-memory http://127.0.0.1:3333/mcp --header 'Authorization: Bearer "
        "${CLAUDE_MEMORY_TOKEN}'"
    )


def test_claude_code_dry_run_lists_the_commands_and_touches_nothing(tmp_path: Path) -> None:
    config = write(
        tmp_path / ".claude.json",
        json.dumps({"mcpServers": {"claude-memory": {"type": "sse", "url": URL + "/sse"}}}),
    )
    before = config.read_text()

    change = connect(
        "claude-code",
        URL,
        use_token=False,
        environ=env(tmp_path, PATH=""),
        home=tmp_path,
        now=NOW,
        dry_run=True,
    )

    assert change.commands == [
        ["claude", "mcp", "remove", "claude-memory", "--scope", "user"],
        ["claude", "mcp", "add", "--scope", "user", "--transport", "http", "claude-memory",
         "http://127.0.0.1:3333/mcp"],
    ]  # fmt: skip
    assert '-  "type": "sse"' in change.files[0].diff
    assert config.read_text() == before


def test_claude_code_already_connected_needs_no_command(tmp_path: Path) -> None:
    entry = {"type": "http", "url": "http://127.0.0.1:3333/mcp"}
    write(tmp_path / ".claude.json", json.dumps({"mcpServers": {"claude-memory": entry}}))

    first = connect(
        "claude-code", URL, use_token=False, environ=env(tmp_path), home=tmp_path, now=NOW
    )
    again = connect(
        "claude-code", URL, use_token=False, environ=env(tmp_path), home=tmp_path, now=NOW
    )
    gone = disconnect("claude-code", environ=env(tmp_path), home=tmp_path / "nobody", now=NOW)

    settings = tmp_path / ".claude" / "settings.json"
    assert first.commands == [] and [f.path for f in first.files if f.changed] == [settings]
    assert not again.changed and again.commands == []
    assert not gone.changed and gone.commands == []


def test_claude_code_without_the_plugin_gets_our_hooks_and_the_plugins_command(
    tmp_path: Path,
) -> None:
    entry = {"type": "http", "url": "http://127.0.0.1:3333/mcp"}
    write(tmp_path / ".claude.json", json.dumps({"mcpServers": {"claude-memory": entry}}))
    settings = write(tmp_path / ".claude" / "settings.json", json.dumps({"model": "opus"}))

    change = connect(
        "claude-code", URL, use_token=False, environ=env(tmp_path), home=tmp_path, now=NOW
    )

    written = json.loads(settings.read_text())
    assert written["model"] == "opus"
    assert "--url http://127.0.0.1:3333" in json.dumps(written["hooks"]["UserPromptSubmit"])
    assert "UserPromptSubmit" in change.hooks
    assert any("claude plugin install memories@claude-memory" in note for note in change.notes)


def test_claude_code_disconnect_takes_out_the_hooks_install_hooks_wrote(tmp_path: Path) -> None:
    settings = write(tmp_path / ".claude" / "settings.json", json.dumps({"model": "opus"}))
    hook_install.install(settings, URL, now=NOW, backups=backups_folder(data_dir(tmp_path)))
    assert len(json.loads(settings.read_text())["hooks"]) == 7

    gone = disconnect("claude-code", environ=env(tmp_path), home=tmp_path, now=NOW)

    assert gone.changed and gone.commands == []
    assert json.loads(settings.read_text()) == {"model": "opus"}


def test_mcp_url_accepts_a_base_or_an_endpoint() -> None:
    assert mcp_url("http://127.0.0.1:3333") == "http://127.0.0.1:3333/mcp"
    assert mcp_url("http://127.0.0.1:3333/") == "http://127.0.0.1:3333/mcp"
    assert mcp_url("http://127.0.0.1:3333/sse") == "http://127.0.0.1:3333/mcp"
    assert mcp_url("http://h:1/prefix/mcp/") == "http://h:1/prefix/mcp"


# --- the commands -----------------------------------------------------------------------------


def test_cli_connect_dry_run_then_connect_then_disconnect(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.setenv("CLAUDE_MEMORY_TOKEN", TOKEN)
    path = write(codex_file(isolated_home), CODEX_CONFIG)

    assert main(["connect", "codex", "--url", "http://127.0.0.1:4567", "--dry-run", "--plain"]) == 0
    diff = capsys.readouterr().out
    assert main(["connect", "codex", "--url", "http://127.0.0.1:4567", "--no-check"]) == 0
    connected = json.loads(capsys.readouterr().out)
    assert main(["disconnect", "codex"]) == 0
    disconnected = json.loads(capsys.readouterr().out)

    assert diff.startswith(f"--- {path}") and "would change" in diff
    assert connected["changed"] and connected["url"] == "http://127.0.0.1:4567/mcp"
    backup = Path(connected["files"][0]["backup"])
    assert backup.parent == backups_folder(isolated_home.parent / "data")
    assert backup.read_text() == CODEX_CONFIG and beside(path.parent) == []
    assert "CLAUDE_MEMORY_TOKEN" in connected["notes"][0]
    assert disconnected["changed"] and disconnected["action"] == "disconnect"
    assert path.read_text() == CODEX_CONFIG


def test_cli_connect_defaults_to_the_configured_port(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("GEMINI_CLI_HOME", raising=False)
    monkeypatch.delenv("CLAUDE_MEMORY_TOKEN", raising=False)
    monkeypatch.setenv("CLAUDE_MEMORY_PORT", "4001")

    assert main(["connect", "gemini", "--plain", "--no-check"]) == 0

    out = capsys.readouterr().out
    assert "gemini: connected to http://127.0.0.1:4001/mcp (streamable HTTP)" in out
    settings = json.loads(gemini_file(isolated_home).read_text())
    assert settings["mcpServers"]["claude-memory"]["httpUrl"] == "http://127.0.0.1:4001/mcp"


def test_cli_refusal_is_one_line_and_exit_code_1(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("GEMINI_CLI_HOME", raising=False)
    write(gemini_file(isolated_home), "{not json")

    assert main(["connect", "gemini", "--no-check"]) == 1

    # Before it, one line per setting that is not a default (here the data dir) and its source.
    *settings, err = capsys.readouterr().err.strip().splitlines()
    assert err.startswith("claude-memory: error: ") and "not valid JSON" in err
    assert all(line.endswith("(from environment)") for line in settings)
