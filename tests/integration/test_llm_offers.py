"""`doctor` and quickstart.sh offer `claude-memory llm use <agent>` (#67), and never turn it on.

The real pinned CLIs are on PATH in an empty HOME; the user signs in to one of them the way
that CLI does it (`codex login --with-api-key`, which writes its auth.json). Then `llm offers`
(what quickstart.sh prints) and `doctor` name that agent, and only it, with what would be sent
where; nothing is written to config.env; once `llm use` is run, neither offers anything.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.integration.processes import run_cli

pytestmark = pytest.mark.integration

# The variables any of the CLIs would take a login from: none may leak in from outside.
LOGIN_VARIABLES = (
    "ANTHROPIC_API_KEY",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "CODEX_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "COPILOT_GITHUB_TOKEN",
    "GH_TOKEN",
    "GITHUB_TOKEN",
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "GEMINI_CLI_HOME",
    "COPILOT_HOME",
    "CLAUDE_MEMORY_LLM_PROVIDER",
)


@pytest.fixture
def env(agent_clis: Path, isolated_home: Path, tmp_path: Path) -> dict[str, str]:
    base = {key: value for key, value in os.environ.items() if key not in LOGIN_VARIABLES}
    return base | {
        "HOME": str(isolated_home),
        "PATH": f"{agent_clis}{os.pathsep}{base.get('PATH', '')}",
        "CLAUDE_MEMORY_HOME": str(tmp_path / "data"),
        "CLAUDE_MEMORY_PORT": "1",
        "NO_COLOR": "1",
    }


def offered(env: dict[str, str]) -> tuple[list[str], list[str]]:
    """What `llm offers` prints, and what `doctor --json` lists as offers."""
    offers = run_cli("llm", "offers", env=env)
    assert offers.returncode == 0, offers.stderr
    doctor = run_cli("doctor", "--json", env=env)
    return offers.stdout.splitlines(), json.loads(doctor.stdout)["llm_offers"]


def test_an_installed_signed_in_cli_is_offered_until_llm_use_turns_one_on(
    env: dict[str, str], tmp_path: Path
) -> None:
    before = offered(env)
    login = subprocess.run(
        ["codex", "login", "--with-api-key"],
        input="sk-not-a-real-key\n",
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    lines, listed = offered(env)
    config = tmp_path / "data" / "config.env"
    written_by_offers = config.read_text() if config.exists() else ""
    used = run_cli("llm", "use", "codex", env=env)
    after = offered(env)

    assert before == ([], [])  # installed, but nobody signed in
    assert login.returncode == 0, login.stdout + login.stderr
    assert lines == listed and len(lines) == 1, lines
    assert "`claude-memory llm use codex`" in lines[0]
    assert "OpenAI's model" in lines[0] and "redacted text" in lines[0]
    assert "Nothing is sent unless you run it" in lines[0]
    assert "LLM_PROVIDER" not in written_by_offers
    assert used.returncode == 0, used.stderr
    assert after == ([], [])
