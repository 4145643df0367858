"""Our hooks run by the real Codex CLI and Gemini CLI, end to end, offline.

`claude-memory connect` installs the hooks (and the MCP entry) into an isolated home; then the
agent itself runs one non-interactive session against the real app, with a scripted model in
place of the real one: Codex talks to tests/responses_stub.py (a local Responses API), Gemini
CLI reads its own `--fake-responses` file. The model runs two shell commands, one a warning
lesson covers and one a strict lesson covers, then answers. What the agent handed the model,
and what it wrote in its session file, shows the hooks worked: the prompt's recall, the
lessons, the strict one stopping its call; then the journal and the import at the end of the
turn are checked on the server.

Codex runs user hooks only after the user trusts them in /hooks; `hooks/list` of its app
server shows ours as untrusted, and the session runs with `--dangerously-bypass-hook-trust`,
which stands for that one step. Every subprocess runs in a worker thread: the server under
test shares this event loop.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from server.core.models.journal import JournalFilter
from server.core.models.memories import MemoryFilter
from server.service.memory import MemoryService
from tests.agent_clis import agent_env, codex_app_server, gemini_on_api_key
from tests.integration.acme_facts import FORCE_PUSH, RATE_LIMIT, STAGING
from tests.integration.processes import cli_command, ran
from tests.responses_stub import ScriptedShell

pytestmark = pytest.mark.integration

PROMPT = (
    "no — per API key (`x-api-key`), not per IP. anonymous requests without a key get the IP "
    "bucket at 10/min."
)
RECENT_WORK = "acme-api's nightly export job now writes Parquet files to the reports bucket."
WARNED = "echo staging-smoke-test"
STOPPED = "git push origin main --force"
# The agents ask our stub models, which take any key.
STUB_KEYS = {"GEMINI_API_KEY": "not-a-real-key", "OPENAI_API_KEY": "not-a-real-key"}


@pytest.fixture
async def project(service: MemoryService, isolated_home: Path) -> tuple[Path, int]:
    """A repository the memory knows (one fact for prompt recall, and a distilled one its
    session-start context shows instead: a session gets a memory once), and the two lessons;
    the fact's id."""
    folder = isolated_home / "work" / "acme-api"
    folder.mkdir(parents=True)
    await service.save(
        RECENT_WORK, project="acme-api", project_path=str(folder), kind="distilled", force=True
    )
    saved = await service.save(
        RATE_LIMIT, project="acme-api", project_path=str(folder), kind="manual", force=True
    )
    await service.add_lesson(STAGING)
    await service.add_lesson(FORCE_PUSH)
    return folder, saved.id


def run(
    *command: str, env: dict[str, str], cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return ran(list(command), env, cwd)


async def connected(agent: str, url: str, env: dict[str, str]) -> dict[str, Any]:
    done = await asyncio.to_thread(run, *cli_command("connect", agent, "--url", url), env=env)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


async def wait_for(check: Any, what: str, timeout: float = 60) -> Any:
    """Poll the coroutine function `check` until it returns something true."""
    deadline = time.monotonic() + timeout
    while not (found := await check()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.2)
    return found


def codex_hooks_listed(env: dict[str, str]) -> list[dict[str, Any]]:
    """The hooks Codex's app server reads from the user's files (`hooks/list`)."""
    result = codex_app_server(env, "hooks/list", {})
    return [hook for entry in result["data"] for hook in entry["hooks"]]


async def test_codex_runs_our_hooks_in_a_real_session(
    agent_clis: Path,
    guarded_url: str,
    service: MemoryService,
    project: tuple[Path, int],
    isolated_home: Path,
) -> None:
    folder, fact = project
    env = agent_env(agent_clis, isolated_home, **STUB_KEYS)
    with ScriptedShell([WARNED, STOPPED]) as model:
        config = isolated_home / ".codex" / "config.toml"
        config.parent.mkdir()
        config.write_text(
            'model = "gpt-5.1-codex"\nmodel_provider = "scripted"\n\n'
            "[model_providers.scripted]\n"
            f'name = "scripted"\nbase_url = "{model.base_url}"\nwire_api = "responses"\n'
        )
        result = await connected("codex", guarded_url, env)
        listed = await asyncio.to_thread(codex_hooks_listed, env)
        session = await asyncio.to_thread(
            run,
            "codex", "exec", "--dangerously-bypass-hook-trust",
            "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check",
            "-C", str(folder), PROMPT,
            env=env,
        )  # fmt: skip
        asked = [json.dumps(request) for request in model.requests]

    assert result["agent_version"] == "0.169.0" and "Stop" in result["hooks"]
    assert any("/hooks" in note for note in result["notes"])
    ours = [hook for hook in listed if "server/hooks.py" in (hook["command"] or "")]
    assert {hook["eventName"] for hook in ours} == {
        "sessionStart", "userPromptSubmit", "preToolUse", "postToolUse", "stop", "sessionEnd",
    }  # fmt: skip
    assert {hook["trustStatus"] for hook in ours} == {"untrusted"}
    assert session.returncode == 0, session.stderr[-3000:]
    assert len(asked) == 3
    # The prompt's recall reached the model with the prompt; the lessons with the calls.
    assert f"manual #{fact}, acme-api" in asked[0]
    assert STAGING.message in asked[1]
    assert "blocked by PreToolUse hook" in asked[2] and FORCE_PUSH.message in asked[2]

    async def journaled() -> list[Any]:
        page = await service.journal(JournalFilter(project="acme-api"), limit=10)
        return [call for entry in page.entries for call in entry.calls]

    calls = await wait_for(journaled, "the shell call in the journal")
    assert ("call_0", "Bash") in {(call.tool_use_id, call.tool) for call in calls}

    async def imported() -> int:
        page = await service.list_memories(MemoryFilter(project="acme-api", source="codex"))
        return page.total

    assert await wait_for(imported, "the turn-end import of the rollout") >= 1


async def test_gemini_runs_our_hooks_in_a_real_session(
    agent_clis: Path,
    guarded_url: str,
    service: MemoryService,
    project: tuple[Path, int],
    isolated_home: Path,
    tmp_path: Path,
) -> None:
    folder, fact = project
    env = agent_env(agent_clis, isolated_home, **STUB_KEYS)
    gemini_on_api_key(isolated_home)
    responses = tmp_path / "responses.jsonl"
    responses.write_text(scripted_gemini([WARNED, STOPPED]))

    result = await connected("gemini", guarded_url, env)
    session = await asyncio.to_thread(
        run,
        "gemini", "--fake-responses-non-strict", str(responses), "--approval-mode", "yolo",
        "--output-format", "stream-json", "--prompt", PROMPT,
        env=env, cwd=folder,
    )  # fmt: skip

    assert result["agent_version"] == "0.61.0" and "AfterAgent" in result["hooks"]
    assert session.returncode == 0, session.stderr[-3000:]
    events = [json.loads(line) for line in session.stdout.splitlines() if line.startswith("{")]
    results = [event for event in events if event["type"] == "tool_result"]
    assert [event["status"] for event in results] == ["success", "error"]
    assert FORCE_PUSH.message in results[1]["output"]  # stopped, with the lesson as the reason
    [chat] = (isolated_home / ".gemini" / "tmp").glob("*/chats/session-*.jsonl")
    written = chat.read_text()
    assert f"manual #{fact}, acme-api" in written  # the recall, appended to the prompt
    assert STAGING.message in written  # the lesson, appended to the warned call's result
    session_id = next(event["session_id"] for event in events if event["type"] == "init")

    async def imported() -> int:
        page = await service.list_memories(MemoryFilter(session_id=session_id, source="gemini"))
        return page.total

    async def journaled() -> list[Any]:
        page = await service.journal(JournalFilter(session_id=session_id), limit=10)
        return [call.tool for entry in page.entries for call in entry.calls]

    assert await wait_for(imported, "the turn-end import of the session") >= 1
    assert "run_shell_command" in await wait_for(journaled, "the calls in the journal")


def scripted_gemini(commands: list[str]) -> str:
    """A `--fake-responses` file: the router's verdicts, one shell call per command, a reply."""

    def stream(part: dict[str, Any]) -> dict[str, Any]:
        usage = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
        candidate = {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP"}
        return {
            "method": "generateContentStream",
            "response": [{"candidates": [candidate], "usageMetadata": usage}],
        }

    verdict = json.dumps({"complexity_reasoning": "a simple task", "complexity_score": 10})
    route = {
        "method": "generateContent",
        "response": {"candidates": [{"content": {"role": "model", "parts": [{"text": verdict}]}}]},
    }
    calls = [
        stream({"functionCall": {"name": "run_shell_command", "args": {"command": command}}})
        for command in commands
    ]
    lines = [route, route, *calls, stream({"text": "Done."})]
    return "".join(json.dumps(line) + "\n" for line in lines)
