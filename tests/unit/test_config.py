"""load_settings: CLAUDE_MEMORY_* in the environment, then $CLAUDE_MEMORY_HOME/config.env, then
defaults; bad values name the variable; old unprefixed names and the cwd's `.env` are not read."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.core.config import (
    Secret,
    Settings,
    load_settings,
    read_env_file,
    read_settings,
    setting_names,
)
from server.core.errors import ConfigError


def test_defaults_match_the_documented_ones(tmp_path: Path) -> None:
    settings = load_settings({}, config_file=tmp_path / "absent.env")

    assert settings.database_url is None
    assert settings.host == "127.0.0.1"
    assert settings.port == 3333
    assert settings.embedding_model == "all-MiniLM-L6-v2"
    assert (settings.guard_noop_threshold, settings.guard_update_threshold) == (0.92, 0.75)
    assert (settings.cache_max_size, settings.cache_ttl_seconds) == (500, 600.0)
    assert (settings.db_pool_min_size, settings.db_pool_max_size) == (1, 5)
    assert settings.uses_embedded_database


def test_environment_overrides_the_config_file_in_the_data_dir(tmp_path: Path) -> None:
    (tmp_path / "config.env").write_text(
        "CLAUDE_MEMORY_PORT=4000\nCLAUDE_MEMORY_HOST=localhost\n# comment\n"
        "export CLAUDE_MEMORY_LOG_LEVEL='debug'\n"
    )

    loaded = read_settings({"CLAUDE_MEMORY_HOME": str(tmp_path), "CLAUDE_MEMORY_PORT": "5000"})

    assert loaded.settings.port == 5000
    assert loaded.settings.host == "localhost"
    assert loaded.settings.log_level == "DEBUG"
    assert loaded.sources == {
        "CLAUDE_MEMORY_HOME": "environment",
        "CLAUDE_MEMORY_HOST": f"{tmp_path / 'config.env'}:2",
        "CLAUDE_MEMORY_PORT": "environment",
        "CLAUDE_MEMORY_LOG_LEVEL": f"{tmp_path / 'config.env'}:4",
    }


def test_old_names_and_the_current_folders_env_are_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".env").write_text("CLAUDE_MEMORY_PORT=4000\nDATABASE_URL=postgresql://x@evil/db\n")
    monkeypatch.chdir(tmp_path)
    environ = {"CLAUDE_MEMORY_HOME": str(tmp_path / "home"), "PORT": "8080", "HOST": "0.0.0.0"}

    loaded = read_settings(environ)

    assert (loaded.settings.port, loaded.settings.host) == (3333, "127.0.0.1")
    assert loaded.settings.database_url is None
    assert loaded.warnings == (
        "HOST is set but not read: claude-memory reads CLAUDE_MEMORY_HOST",
        "PORT is set but not read: claude-memory reads CLAUDE_MEMORY_PORT",
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("PORT=4000", r"config\.env:1: unknown setting PORT; the name is now CLAUDE_MEMORY_PORT"),
        ("CLAUDE_MEMORY_HOME=/x", r"config\.env:1: set CLAUDE_MEMORY_HOME in the environment"),
        ("CLAUDE_MEMORY_PROT=1", r"config\.env:1: unknown setting CLAUDE_MEMORY_PROT$"),
    ],
)
def test_config_file_names_what_it_cannot_use(tmp_path: Path, line: str, message: str) -> None:
    (tmp_path / "config.env").write_text(line + "\n")

    with pytest.raises(ConfigError, match=message):
        load_settings({"CLAUDE_MEMORY_HOME": str(tmp_path)})


def test_empty_variable_counts_as_unset(tmp_path: Path) -> None:
    settings = load_settings(
        {"CLAUDE_MEMORY_DATABASE_URL": "", "CLAUDE_MEMORY_PORT": ""}, config_file=None
    )

    assert settings.database_url is None
    assert settings.port == 3333


def test_database_url_is_kept_secret() -> None:
    settings = load_settings(
        {"CLAUDE_MEMORY_DATABASE_URL": "postgresql://me:hunter2@db/x"}, config_file=None
    )

    assert isinstance(settings.database_url, Secret)
    assert settings.database_url.reveal() == "postgresql://me:hunter2@db/x"
    assert "hunter2" not in repr(settings)


def test_home_path_expands_user(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))

    settings = load_settings({"CLAUDE_MEMORY_HOME": "~/memdata"}, config_file=None)

    assert settings.claude_memory_home == tmp_path / "memdata"
    assert settings.embedded_pgdata == tmp_path / "memdata" / "pg"


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("CLAUDE_MEMORY_PORT", "abc", "CLAUDE_MEMORY_PORT must be a whole number"),
        ("CLAUDE_MEMORY_PORT", "0", "CLAUDE_MEMORY_PORT must be between 1 and 65535"),
        (
            "CLAUDE_MEMORY_GUARD_NOOP_THRESHOLD",
            "1.01",
            "CLAUDE_MEMORY_GUARD_NOOP_THRESHOLD must be between 0.0 and 1.0",
        ),
        (
            "CLAUDE_MEMORY_GUARD_UPDATE_THRESHOLD",
            "-0.1",
            "CLAUDE_MEMORY_GUARD_UPDATE_THRESHOLD must be between",
        ),
        ("CLAUDE_MEMORY_CACHE_MAX_SIZE", "-1", "CLAUDE_MEMORY_CACHE_MAX_SIZE must be between"),
        (
            "CLAUDE_MEMORY_CACHE_TTL_SECONDS",
            "x",
            "CLAUDE_MEMORY_CACHE_TTL_SECONDS must be a number",
        ),
        ("CLAUDE_MEMORY_LOG_LEVEL", "chatty", "CLAUDE_MEMORY_LOG_LEVEL must be one of"),
        ("CLAUDE_MEMORY_HOST", "   ", "CLAUDE_MEMORY_HOST must not be empty"),
        (
            "CLAUDE_MEMORY_ALLOWED_HOSTS",
            "mybox.lan:3333",
            "CLAUDE_MEMORY_ALLOWED_HOSTS must list host names",
        ),
        (
            "CLAUDE_MEMORY_ALLOWED_HOSTS",
            "http://mybox.lan",
            "CLAUDE_MEMORY_ALLOWED_HOSTS must list host names",
        ),
        (
            "CLAUDE_MEMORY_ALLOWED_HOSTS",
            "mybox.lan,0.0.0.0",
            "CLAUDE_MEMORY_ALLOWED_HOSTS cannot allow every address",
        ),
        ("CLAUDE_MEMORY_ALLOWED_HOSTS", "*", "CLAUDE_MEMORY_ALLOWED_HOSTS must list host names"),
    ],
)
def test_bad_values_name_the_variable(variable: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_settings({variable: value}, config_file=None)


def test_allowed_hosts_are_lower_cased_names_without_brackets() -> None:
    settings = load_settings(
        {"CLAUDE_MEMORY_ALLOWED_HOSTS": " MyBox.LAN , server,[fd00::5] ,"}, config_file=None
    )

    assert settings.allowed_hosts == ("mybox.lan", "server", "fd00::5")


def test_update_threshold_above_noop_threshold_is_refused() -> None:
    with pytest.raises(ConfigError, match="CLAUDE_MEMORY_GUARD_UPDATE_THRESHOLD must not exceed"):
        load_settings(
            {
                "CLAUDE_MEMORY_GUARD_NOOP_THRESHOLD": "0.8",
                "CLAUDE_MEMORY_GUARD_UPDATE_THRESHOLD": "0.9",
            },
            config_file=None,
        )


def test_malformed_config_file_line_is_reported_with_its_number(tmp_path: Path) -> None:
    env_file = tmp_path / "config.env"
    env_file.write_text("CLAUDE_MEMORY_PORT=1\nnot a setting\n")

    with pytest.raises(ConfigError, match=r"config\.env:2: expected KEY=value"):
        read_env_file(env_file)


def test_root_default_home_is_outside_root_home(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from server.core.config import default_home

    if os.geteuid() == 0:
        assert default_home() == Path("/var/lib/claude-memory")
    else:
        monkeypatch.setenv("XDG_DATA_HOME", "/tmp/xdg")
        assert default_home() == Path("/tmp/xdg/claude-memory")


def test_data_home_is_claude_memory_home_as_settings_read_it_else_the_default(
    tmp_path: Path,
) -> None:
    from server.core.config import data_home, default_home, load_settings

    named = {"CLAUDE_MEMORY_HOME": f" {tmp_path}/data "}

    assert data_home(named) == load_settings(named).claude_memory_home == tmp_path / "data"
    assert data_home({"CLAUDE_MEMORY_HOME": " "}) == default_home()
    assert data_home({}) == load_settings({}, config_file=None).claude_memory_home


def test_configuration_page_documents_every_setting() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text()

    missing = [name for name in setting_names() if f"`{name}`" not in page]

    assert missing == []
    assert len(setting_names()) == len(Settings.__dataclass_fields__)
