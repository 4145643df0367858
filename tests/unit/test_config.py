"""load_settings: environment first, then .env, then defaults; bad values name the variable."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.core.config import Secret, Settings, load_settings, read_env_file, setting_names
from server.core.errors import ConfigError


def test_defaults_match_the_documented_ones(tmp_path: Path) -> None:
    settings = load_settings({}, env_file=tmp_path / "absent.env")

    assert settings.database_url is None
    assert settings.host == "127.0.0.1"
    assert settings.port == 3333
    assert settings.embedding_model == "all-MiniLM-L6-v2"
    assert (settings.guard_noop_threshold, settings.guard_update_threshold) == (0.92, 0.75)
    assert (settings.cache_max_size, settings.cache_ttl_seconds) == (500, 600.0)
    assert (settings.db_pool_min_size, settings.db_pool_max_size) == (1, 5)
    assert settings.uses_embedded_database


def test_environment_overrides_env_file(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text("PORT=4000\nHOST=localhost\n# comment\nexport LOG_LEVEL='debug'\n")

    settings = load_settings({"PORT": "5000"}, env_file=env_file)

    assert settings.port == 5000
    assert settings.host == "localhost"
    assert settings.log_level == "DEBUG"


def test_empty_variable_counts_as_unset(tmp_path: Path) -> None:
    settings = load_settings({"DATABASE_URL": "", "PORT": ""}, env_file=None)

    assert settings.database_url is None
    assert settings.port == 3333


def test_database_url_is_kept_secret() -> None:
    settings = load_settings({"DATABASE_URL": "postgresql://me:hunter2@db/x"}, env_file=None)

    assert isinstance(settings.database_url, Secret)
    assert settings.database_url.reveal() == "postgresql://me:hunter2@db/x"
    assert "hunter2" not in repr(settings)


def test_home_path_expands_user(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))

    settings = load_settings({"CLAUDE_MEMORY_HOME": "~/memdata"}, env_file=None)

    assert settings.claude_memory_home == tmp_path / "memdata"
    assert settings.embedded_pgdata == tmp_path / "memdata" / "pg"


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("PORT", "abc", "PORT must be a whole number"),
        ("PORT", "0", "PORT must be between 1 and 65535"),
        ("GUARD_NOOP_THRESHOLD", "1.01", "GUARD_NOOP_THRESHOLD must be between 0.0 and 1.0"),
        ("GUARD_UPDATE_THRESHOLD", "-0.1", "GUARD_UPDATE_THRESHOLD must be between"),
        ("CACHE_MAX_SIZE", "-1", "CACHE_MAX_SIZE must be between"),
        ("CACHE_TTL_SECONDS", "x", "CACHE_TTL_SECONDS must be a number"),
        ("LOG_LEVEL", "chatty", "LOG_LEVEL must be one of"),
        ("HOST", "   ", "HOST must not be empty"),
        ("ALLOWED_HOSTS", "mybox.lan:3333", "ALLOWED_HOSTS must list host names"),
        ("ALLOWED_HOSTS", "http://mybox.lan", "ALLOWED_HOSTS must list host names"),
        ("ALLOWED_HOSTS", "mybox.lan,0.0.0.0", "ALLOWED_HOSTS cannot allow every address"),
        ("ALLOWED_HOSTS", "*", "ALLOWED_HOSTS must list host names"),
    ],
)
def test_bad_values_name_the_variable(variable: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_settings({variable: value}, env_file=None)


def test_allowed_hosts_are_lower_cased_names_without_brackets() -> None:
    settings = load_settings({"ALLOWED_HOSTS": " MyBox.LAN , server,[fd00::5] ,"}, env_file=None)

    assert settings.allowed_hosts == ("mybox.lan", "server", "fd00::5")


def test_update_threshold_above_noop_threshold_is_refused() -> None:
    with pytest.raises(ConfigError, match="GUARD_UPDATE_THRESHOLD must not exceed"):
        load_settings(
            {"GUARD_NOOP_THRESHOLD": "0.8", "GUARD_UPDATE_THRESHOLD": "0.9"}, env_file=None
        )


def test_malformed_env_file_line_is_reported_with_its_number(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text("PORT=1\nnot a setting\n")

    with pytest.raises(ConfigError, match=r"\.env:2: expected KEY=value"):
        read_env_file(env_file)


def test_root_default_home_is_outside_root_home(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from server.core.config import default_home

    if os.geteuid() == 0:
        assert default_home() == Path("/var/lib/claude-memory")
    else:
        monkeypatch.setenv("XDG_DATA_HOME", "/tmp/xdg")
        assert default_home() == Path("/tmp/xdg/claude-memory")


def test_readme_documents_every_setting() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()

    missing = [name for name in setting_names() if f"`{name}`" not in readme]

    assert missing == []
    assert len(setting_names()) == len(Settings.__dataclass_fields__)
