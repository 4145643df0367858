"""Whether the user looks signed in to an agent's CLI (`llm offers`, #67), from its files."""

from __future__ import annotations

import json
from pathlib import Path

from server.learning.claude_code_model import ClaudeCodeModel


def test_claude_code_names_its_account_in_the_config_folder_it_was_given(tmp_path: Path) -> None:
    """With CLAUDE_CONFIG_DIR set, Claude Code keeps `.claude.json` there, not in the home
    (a macOS login: the token in the keychain, the account named in that file)."""
    home, config = tmp_path / "user", tmp_path / "claude-config"
    home.mkdir()
    config.mkdir()
    environ = {"CLAUDE_CONFIG_DIR": str(config)}
    (home / ".claude.json").write_text(json.dumps({"oauthAccount": {"emailAddress": "x@y"}}))

    assert not ClaudeCodeModel.signed_in(environ, home), "the home's file is not the one read"

    (config / ".claude.json").write_text(json.dumps({"oauthAccount": {"emailAddress": "x@y"}}))

    assert ClaudeCodeModel.signed_in(environ, home)
    assert ClaudeCodeModel.signed_in({}, home), "without the variable, the home's file"
