"""The agents' own CLIs, installed once for the tests that drive them (`agent_clis`).

@openai/codex, @google/gemini-cli, @anthropic-ai/claude-code, opencode-ai and @github/copilot at
pinned versions, installed with npm into a cache folder outside the work tree (AGENT_CLIS_DIR,
else ~/.cache/claude-memory-tests/agent-clis-*) and reused while the versions match; nothing
else is downloaded at run time. Used by tests/integration/test_connect_clients.py,
test_agent_hook_clients.py, test_agent_model_distill.py, test_recall_agents.py,
test_llm_offers.py, test_opencode.py, test_copilot.py and test_claude_plugin.py (the fixture
reaches them as a plugin loaded by tests/conftest.py). `agent_env` is the environment those
CLIs run in; `gemini_on_api_key` signs Gemini CLI in to a stand-in of its API; COPILOT_CACHE
is where Copilot CLI unpacks its bundle, once for every test.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.db_fixtures import TOKEN

# Versions the tests were written against; bump them together with those tests' expectations.
CLI_VERSIONS = {
    "@openai/codex": "0.169.0",
    "@google/gemini-cli": "0.61.0",
    "@anthropic-ai/claude-code": "2.1.331",
    "opencode-ai": "1.18.33",
    "@github/copilot": "1.0.102",
}
EXECUTABLES = ("codex", "gemini", "claude", "opencode", "copilot")
_CACHE_ROOT = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
CLIS_DIR = Path(
    os.environ.get("AGENT_CLIS_DIR")
    or _CACHE_ROOT
    / "claude-memory-tests"
    / f"agent-clis-{hashlib.sha256(str(CLI_VERSIONS).encode()).hexdigest()[:12]}"
)
# Where Copilot CLI unpacks its bundle (235 MB) on first start (its XDG_CACHE_HOME): once for
# every test.
COPILOT_CACHE = CLIS_DIR / "copilot-cache"


@pytest.fixture(scope="session")
def agent_clis() -> Path:
    """The folder holding the `codex`, `gemini`, `claude`, `opencode` and `copilot` CLIs."""
    bin_dir = CLIS_DIR / "node_modules" / ".bin"
    stamp = CLIS_DIR / "versions.json"
    CLIS_DIR.mkdir(parents=True, exist_ok=True)
    with (CLIS_DIR / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        installed = stamp.read_text() if stamp.exists() else ""
        if installed != json.dumps(CLI_VERSIONS) or not all(
            (bin_dir / name).exists() for name in EXECUTABLES
        ):
            npm = shutil.which("npm")
            if npm is None:
                pytest.fail(
                    "npm is needed to install the agents' CLIs (scripts/test.sh installs it)"
                )
            packages = [f"{name}@{version}" for name, version in CLI_VERSIONS.items()]
            done = subprocess.run(
                [npm, "install", "--prefix", str(CLIS_DIR), "--no-audit", "--no-fund",
                 "--loglevel=error", *packages],
                capture_output=True, text=True, timeout=900, check=False,
            )  # fmt: skip
            if done.returncode != 0:
                pytest.fail(f"npm install of the agents' CLIs failed: {done.stderr[-2000:]}")
            stamp.write_text(json.dumps(CLI_VERSIONS))
    return bin_dir


def agent_env(agent_clis: Path, home: Path, **extra: str) -> dict[str, str]:
    """This process's environment for an agent's CLI: without the agents' own config folders,
    the CLIs first on PATH, HOME (and Codex's) in `home`, our bearer token, Gemini CLI trusting
    the folder (else it turns every MCP server off), no colours; and `extra`."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("CLAUDE_CONFIG_DIR", "GEMINI_CLI_HOME", "CODEX_HOME")
    }
    env.update(
        PATH=f"{agent_clis}{os.pathsep}{env.get('PATH', '')}",
        HOME=str(home),
        CODEX_HOME=str(home / ".codex"),
        CLAUDE_MEMORY_TOKEN=TOKEN,
        GEMINI_CLI_TRUST_WORKSPACE="true",
        NO_COLOR="1",
        **extra,
    )
    return env


def gemini_on_api_key(home: Path) -> None:
    """Gemini CLI's user settings in `home`: signed in with an API key (a stand-in's, given as
    GEMINI_API_KEY), sending no usage statistics, never updating itself."""
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(
        json.dumps(
            {
                "security": {"auth": {"selectedType": "gemini-api-key"}},
                "privacy": {"usageStatisticsEnabled": False},
                "general": {"disableAutoUpdate": True},
            }
        )
    )


def codex_app_server(env: dict[str, str], method: str, params: dict[str, Any]) -> Any:
    """One JSON-RPC request to Codex's own app server (`codex app-server` on stdio): its result.

    Codex's CLI has no command that connects to an MCP server or lists hooks as Codex reads
    them; the app server does both. It is started, initialised, asked once, and killed.
    """
    process = subprocess.Popen(
        ["codex", "app-server"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    timer = threading.Timer(60, process.kill)
    timer.start()
    try:
        assert process.stdin is not None and process.stdout is not None
        for message in (
            {
                "id": 1,
                "method": "initialize",
                "params": {"clientInfo": {"name": "t", "version": "0"}},
            },
            {"method": "initialized"},
            {"id": 2, "method": method, "params": params},
        ):
            process.stdin.write(json.dumps(message) + "\n")
        process.stdin.flush()
        for line in process.stdout:
            reply = json.loads(line)
            if reply.get("id") == 2:
                return reply["result"]
        raise AssertionError(f"codex app-server ended without answering {method}")
    finally:
        timer.cancel()
        process.kill()
        process.wait()
