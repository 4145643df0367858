"""The recall agent (#67) in Codex, Gemini CLI and Copilot CLI, as each real CLI reads it.

`claude-memory connect <agent>` writes our recall agent into the agent's own agents folder;
the real CLI (tests/agent_clis.py), run offline against a stand-in of its model API, then
offers it to its model: Codex as a role of its `spawn_agent` tool, Gemini CLI as a subagent
its `invoke_agent` tool reaches, Copilot CLI among the custom agents of its `task` tool. That
is as far as it goes here: running the agent needs a real model, so nothing is said of its
answers. `disconnect` removes only our file; a user's file beside it, or at our path, stays.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from server.agents import codex, copilot, gemini, recall_agent
from tests.agent_clis import COPILOT_CACHE, agent_env, gemini_on_api_key
from tests.chat_stream_stub import ScriptedChat
from tests.db_fixtures import TOKEN
from tests.gemini_api_stub import ScriptedGemini
from tests.integration.processes import cli_command, cli_json, ran
from tests.responses_stub import ScriptedShell

pytestmark = pytest.mark.integration

STUB_KEYS = {"GEMINI_API_KEY": "not-a-real-key", "OPENAI_API_KEY": "not-a-real-key"}
PROMPT = "Which package manager does acme-api use?"


def codex_asks(env: dict[str, str], work: Path) -> list[dict[str, Any]]:
    """What `codex exec` sent its model (a Responses API stand-in named in config.toml)."""
    with ScriptedShell([]) as model:
        config = Path(env["CODEX_HOME"]) / "config.toml"
        provider = (
            '\n[model_providers.scripted]\nname = "scripted"\n'
            f'base_url = "{model.base_url}"\nwire_api = "responses"\n'
        )
        text = config.read_text()
        config.write_text(
            'model = "gpt-5.1-codex"\nmodel_provider = "scripted"\n' + text + provider
        )
        try:
            command = ["codex", "exec", "--skip-git-repo-check", "-C", str(work), PROMPT]
            done = ran(command, env, work)
        finally:
            config.write_text(text)
        assert done.returncode == 0, done.stderr[-2000:]
        return list(model.requests)


def gemini_asks(env: dict[str, str], work: Path) -> list[dict[str, Any]]:
    """What `gemini -p` sent its model (a Gemini API stand-in, GOOGLE_GEMINI_BASE_URL)."""
    with ScriptedGemini(lambda body: "pnpm.") as model:
        stand_in = {**env, "GOOGLE_GEMINI_BASE_URL": model.root_url}
        command = ["gemini", "-m", "flash", "-p", PROMPT, "--output-format", "json"]
        done = ran(command, stand_in, work)
        assert done.returncode == 0, done.stderr[-2000:]
        return list(model.requests)


def copilot_asks(env: dict[str, str], work: Path) -> list[dict[str, Any]]:
    """What `copilot -p` sent its model (offline, its model a custom provider)."""
    with ScriptedChat([], reply="pnpm.") as model:
        offline = {
            **env,
            "COPILOT_OFFLINE": "true",
            "COPILOT_PROVIDER_BASE_URL": model.base_url,
            "COPILOT_MODEL": "gpt-4o",
        }
        command = ["copilot", "-p", PROMPT, "--allow-all-tools", "--no-auto-update"]
        done = ran(command, offline, work)
        assert done.returncode == 0, done.stderr[-2000:]
        return list(model.requests)


# agent: (our file under HOME, a user's agent file beside it, how its CLI is run)
Asks = Callable[[dict[str, str], Path], list[dict[str, Any]]]
AGENTS: dict[str, tuple[Path, str, Asks]] = {
    "codex": (Path(".codex") / codex.RECALL_FILE, "reviewer.toml", codex_asks),
    "gemini": (Path(".gemini") / gemini.RECALL_FILE, "reviewer.md", gemini_asks),
    "copilot": (Path(".copilot") / copilot.RECALL_FILE, "reviewer.agent.md", copilot_asks),
}
# Where each CLI tells its model which agents it may call, and in what words.
OFFERED = {
    "codex": "Available roles:\\nclaude-memory-recall: {",
    "gemini": "<name>claude-memory-recall</name>",
    "copilot": "User-provided custom agents:\\n- **claude-memory-recall**:",
}


def cli_env(agent_clis: Path, home: Path) -> dict[str, str]:
    """The CLIs' environment, with Copilot's bundle unpacked once for every test."""
    env = agent_env(agent_clis, home, **STUB_KEYS)
    env = {key: value for key, value in env.items() if not key.startswith("COPILOT_")}
    env.update(XDG_CACHE_HOME=str(COPILOT_CACHE), COPILOT_AUTO_UPDATE="false")
    return env


@pytest.mark.parametrize("agent", sorted(AGENTS))
async def test_connect_writes_a_recall_agent_the_real_cli_offers_and_disconnect_removes_it(
    agent: str, guarded_url: str, agent_clis: Path, tmp_path: Path
) -> None:
    ours, neighbour, asks = AGENTS[agent]
    home, work = tmp_path / "home", tmp_path / "acme-api"
    work.mkdir()
    if agent == "gemini":
        gemini_on_api_key(home)
    mine = home / ours.parent / neighbour
    mine.parent.mkdir(parents=True)
    mine.write_text("a user's own agent file, never touched\n")
    env = cli_env(agent_clis, home)

    await asyncio.to_thread(cli_json, "connect", agent, "--url", guarded_url, env=env)
    written = (home / ours).read_text()
    again = await asyncio.to_thread(cli_json, "connect", agent, "--url", guarded_url, env=env)
    asked = json.dumps(await asyncio.to_thread(asks, env, work))
    removed = await asyncio.to_thread(cli_json, "disconnect", agent, env=env)

    assert recall_agent.instructions() in written.replace("\r\n", "\n")
    assert not again["changed"], "a second connect changes nothing"
    assert OFFERED[agent] in asked
    assert recall_agent.DESCRIPTION[:80] in asked
    assert removed["changed"] and not (home / ours).exists()
    assert mine.read_text() == "a user's own agent file, never touched\n"


@pytest.mark.parametrize("agent", sorted(AGENTS))
async def test_a_users_file_at_our_recall_agents_path_is_refused_and_left(
    agent: str, guarded_url: str, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    theirs = home / AGENTS[agent][0]
    theirs.parent.mkdir(parents=True)
    theirs.write_text("---\nname: claude-memory-recall\ndescription: the user's own\n---\nMine.\n")
    env = {**os.environ, "HOME": str(home), "CODEX_HOME": str(home / ".codex")}
    env["CLAUDE_MEMORY_TOKEN"] = TOKEN
    env = {k: v for k, v in env.items() if not k.startswith(("COPILOT_", "GEMINI_CLI_"))}

    done = await asyncio.to_thread(ran, cli_command("connect", agent, "--url", guarded_url), env)

    assert done.returncode != 0 and "is not ours" in done.stderr + done.stdout
    assert theirs.read_text().endswith("Mine.\n")
