"""Distilling with the user's own agent (#67): the real agent CLIs against local models.

agent_clis (session)   the pinned CLIs (tests/agent_clis.py)
claude_model           tests/messages_stub.py's Messages API answering like a distilling model:
                       it reads the transcript it is sent and reports tests/integration/
                       distilling.py's LESSONS for the turns holding their phrase (Claude Code's
                       model, and Copilot CLI's through its BYOK settings)
hook_calls             a local HTTP server counting every request that reaches it: the test's
                       HOME has our hooks (and, through `connect_to`, our MCP entry) pointing
                       at it
child_env              HOME (with those hooks), the CLIs first on PATH, the stand-in as
                       ANTHROPIC_BASE_URL, offline
Codex's model is tests/responses_stub.py, Gemini CLI's tests/gemini_api_stub.py.

What is proven with each real CLI and our exact arguments: what it sends the model (our
prompt, no tools, one request per session), that neither our hooks nor our MCP server are
reached from the child (and are from a plain headless session in the same HOME, so the count
can tell), that its transcript is not kept or imported, the caps, a rate-limit answer, and that
a session goes only to its own agent's model.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from server.core.access import acting_as
from server.ingest.codex import CODEX
from server.ingest.copilot import COPILOT as COPILOT_FORMAT
from server.ingest.gemini import GEMINI as GEMINI_FORMAT
from server.ingest.importer import ImportFilters, SessionImporter
from server.jobs.hook_install import install
from server.learning.agent_models import RunBudget
from server.learning.child import CHILD_MARKER, child_folder
from server.learning.claude_code_model import CLAUDE_CODE, ClaudeCodeModel
from server.learning.codex_model import CODEX as CODEX_PROVIDER
from server.learning.codex_model import CodexModel
from server.learning.copilot_model import COPILOT, CopilotModel
from server.learning.distill import Distiller, DistillSummary
from server.learning.distill_core import SYSTEM_PROMPT
from server.learning.gemini_model import GEMINI, GeminiModel
from server.service.memory import MemoryService
from tests.agent_clis import gemini_on_api_key
from tests.db_fixtures import free_port
from tests.fixture_sessions import CLAUDE_PROJECTS
from tests.gemini_api_stub import ScriptedGemini
from tests.gemini_api_stub import request_text as gemini_request_text
from tests.integration.distilling import LESSONS, lessons_for
from tests.integration.hook_runs import payload, run_hook
from tests.integration.processes import completed, run_cli
from tests.llm_stub import ContentReply
from tests.messages_stub import ScriptedReply
from tests.responses_stub import ScriptedShell
from tests.stub_server import QuietHandler, ScriptedModel, send_json

pytestmark = pytest.mark.integration

CODEX_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "codex" / "sessions"
GEMINI_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gemini"
COPILOT_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "copilot" / "session-state"
REPOSITORY = Path(__file__).resolve().parents[2]
CLAUDE_SESSIONS = 4  # the shared Claude Code fixtures the `imported` fixture brings in


def request_text(body: dict[str, Any]) -> str:
    """All the text of a Messages API request's user turns."""
    parts = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts += [block.get("text", "") for block in content if isinstance(block, dict)]
    return "\n".join(parts)


def distilled(text: str) -> str:
    """What a distilling model answers to a request holding `text`."""
    reply = lessons_for([{"role": "user", "content": text}])
    assert isinstance(reply, ContentReply)
    return reply.content


def judged(text: str) -> str:
    """What a model answers to a link review holding `text`: NEW replaces OLD in every pair."""
    count = len(re.findall(r"^Pair \d+$", text, re.M))
    return json.dumps({"verdicts": [{"pair": n, "replaces": True} for n in range(1, count + 1)]})


class DistillingClaude(ScriptedReply):
    """The Messages API stand-in, answering each request as a distilling model would (and a
    link review with a verdict on each pair)."""

    def record(self, body: dict[str, Any]) -> int:
        text = request_text(body)
        self.reply = judged(text) if "<pairs>" in text else distilled(text)
        return super().record(body)

    @property
    def distill_requests(self) -> list[dict[str, Any]]:
        return [body for body in self.requests if "<transcript>" in request_text(body)]

    @property
    def review_requests(self) -> list[dict[str, Any]]:
        return [body for body in self.requests if "<pairs>" in request_text(body)]


class HookCalls(ScriptedModel):
    """Counts what our hooks send (any request at all) and answers with nothing to add."""

    def handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                stub.record({"path": self.path, "size": length})
                self.rfile.read(length)
                send_json(self, 200, {})

            def do_GET(self) -> None:
                self.do_POST()

        return Handler


@pytest.fixture
def claude_model() -> Iterator[DistillingClaude]:
    with DistillingClaude() as model:
        yield model


@pytest.fixture
def hook_calls() -> Iterator[HookCalls]:
    with HookCalls() as server:
        yield server


def connect_to(agent: str, hook_calls: HookCalls, env: dict[str, str]) -> None:
    """`claude-memory connect <agent>` in the test's HOME, its hooks and MCP entry pointing at
    `hook_calls`: whatever the agent then sends our server is counted there."""
    done = run_cli(
        "connect", agent, "--url", hook_calls.base_url.removesuffix("/v1"), "--no-check", env=env
    )
    assert done.returncode == 0, done.stderr


def run_agent(argv: list[str], env: dict[str, str], cwd: Path) -> str:
    """A plain headless session of an agent's CLI, as the user would run one: its output."""
    cwd.mkdir(exist_ok=True)
    return completed(argv, env, cwd)


def reached(hook_calls: HookCalls) -> set[str]:
    """What reached our server: `hooks` (any hook endpoint), `mcp` (the MCP endpoint)."""
    paths = [request["path"] for request in hook_calls.requests]
    return {"hooks" for path in paths if "/hooks/" in path} | {
        "mcp" for path in paths if path.startswith("/mcp")
    }


@pytest.fixture
def child_env(
    agent_clis: Path, isolated_home: Path, claude_model: DistillingClaude, hook_calls: HookCalls
) -> dict[str, str]:
    install(
        isolated_home / ".claude" / "settings.json",
        hook_calls.base_url.removesuffix("/v1"),
        now=datetime.now(tz=UTC),
        backups=isolated_home / "backups",
    )
    skipped = ("CLAUDE_CONFIG_DIR", "CLAUDE_MEMORY_URL", "CLAUDE_MEMORY_TOKEN")
    env = {key: value for key, value in os.environ.items() if key not in skipped}
    env.update(
        HOME=str(isolated_home),
        PATH=f"{agent_clis}{os.pathsep}{env.get('PATH', '')}",
        ANTHROPIC_BASE_URL=claude_model.root_url,
        ANTHROPIC_API_KEY="sk-ant-stub-key",
        DISABLE_AUTOUPDATER="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        CLAUDE_CODE_MAX_RETRIES="0",
        NO_COLOR="1",
    )
    return env


async def import_codex_sessions(service: MemoryService, tmp_path: Path) -> None:
    """The Codex fixture sessions, copied and imported next to the Claude Code ones."""
    codex_root = Path(shutil.copytree(CODEX_FIXTURES, tmp_path / "codex-sessions"))
    await SessionImporter(service, ImportFilters(min_length=0), agent=CODEX).run(codex_root)


async def distill_with_claude(
    service: MemoryService, env: dict[str, str], *, max_sessions: int = 20
) -> DistillSummary:
    home = service.settings.claude_memory_home
    model = ClaudeCodeModel(home, timeout=120, environ=env)
    budget = RunBudget(CLAUDE_CODE, max_sessions, 200_000, usage=model.usage)
    distiller = Distiller(
        service, model, model="haiku", workers=1, budget=budget, context_tokens=150_000
    )
    return await distiller.run()


async def test_claude_code_distills_each_session_in_one_request_with_no_tools_or_mcp(
    service: MemoryService,
    imported: Path,
    child_env: dict[str, str],
    claude_model: DistillingClaude,
) -> None:
    summary = await distill_with_claude(service, child_env)

    assert summary.stopped is None, summary.stopped
    assert summary.distilled == CLAUDE_SESSIONS
    assert summary.memories_saved == len(LESSONS)
    asked = claude_model.distill_requests
    assert len(asked) == CLAUDE_SESSIONS  # one request per session, no repair
    for body in claude_model.requests:
        assert body["tools"] == []
        assert "mcp_servers" not in body
        assert "haiku" in body["model"]
        assert SYSTEM_PROMPT in "\n".join(block["text"] for block in body["system"])
    receipt = summary.llm or {}
    assert (receipt["provider"], receipt["calls"], receipt["sessions_sent"]) == (
        "claude-code",
        len(claude_model.requests),  # the sessions' and their link reviews'
        CLAUDE_SESSIONS,
    )
    assert receipt["cost_usd"] is not None and receipt["tokens_in"] > 0


async def test_our_hooks_and_mcp_never_run_in_the_child_though_they_do_in_a_plain_session(
    service: MemoryService,
    imported: Path,
    child_env: dict[str, str],
    hook_calls: HookCalls,
    tmp_path: Path,
) -> None:
    connect_to("claude-code", hook_calls, child_env)
    summary = await distill_with_claude(service, child_env)
    during_distill = reached(hook_calls)
    run_agent(["claude", "-p", "hello", "--output-format", "json"], child_env, tmp_path / "acme")

    assert summary.distilled == CLAUDE_SESSIONS
    assert during_distill == set()
    assert reached(hook_calls) == {"hooks", "mcp"}  # the same HOME, a plain session


async def test_the_childs_transcript_is_neither_kept_nor_imported(
    service: MemoryService,
    imported: Path,
    child_env: dict[str, str],
    isolated_home: Path,
) -> None:
    await distill_with_claude(service, child_env)
    projects = isolated_home / ".claude" / "projects"
    kept = list(projects.rglob("*.jsonl")) if projects.exists() else []
    # Were a CLI ever to keep it: a session that ran in the child's folder is not imported.
    folder = child_folder(service.settings.claude_memory_home)
    planted = projects / "-child" / "planted.jsonl"
    planted.parent.mkdir(parents=True)
    shutil.copy(next(imported.rglob("*.jsonl")), planted)
    lines = planted.read_text().splitlines()
    planted.write_text(
        "\n".join(
            json.dumps({**json.loads(line), "cwd": str(folder)}) if '"cwd"' in line else line
            for line in lines
        )
        + "\n"
    )
    summary = await SessionImporter(service, ImportFilters()).run(projects)

    assert kept == []
    assert summary.turns_imported == 0
    assert summary.turns_skipped["memory_model_session"] > 0


async def test_the_session_cap_stops_a_run_and_the_next_run_resumes(
    service: MemoryService,
    imported: Path,
    child_env: dict[str, str],
    claude_model: DistillingClaude,
) -> None:
    first = await distill_with_claude(service, child_env, max_sessions=3)
    sent_first = len(claude_model.requests)
    second = await distill_with_claude(service, child_env, max_sessions=3)

    assert (first.distilled, sent_first) == (3, 3)
    assert any("cap reached: 3 sessions per run" in line for line in first.left_pending)
    assert first.stopped is None
    assert second.distilled == CLAUDE_SESSIONS - 3
    assert second.left_pending == []


# Each close enough to the pnpm lesson to be put to the model (similarity 0.71 by the bundled
# model), not so close as to be its duplicate.
OLDER_FROM_CLAUDE = "acme-api uses npm for installs."
OLDER_FROM_CODEX = "acme-api's package manager is npm; run npm install after pulling."
SAID_LONG_AGO = datetime(2020, 1, 1, tzinfo=UTC)


async def save_older(
    service: MemoryService, text: str, session_id: str | None = None, **options: Any
) -> None:
    """A memory of acme-api from long before the sessions, one a new lesson could replace."""
    outcome = await service.save(
        text,
        project="acme-api",
        kind="distilled",
        session_id=session_id,
        created_at=SAID_LONG_AGO,
        force=True,
        **options,
    )
    assert outcome.status == "saved", outcome


async def test_neither_a_codex_session_nor_a_memory_from_one_goes_to_claude_code(
    service: MemoryService,
    imported: Path,
    child_env: dict[str, str],
    claude_model: DistillingClaude,
    tmp_path: Path,
) -> None:
    """A Codex session stays pending. Two older memories a new lesson could replace, one from
    a Claude Code session and one from a Codex session: the link review asks Claude Code about
    the first pair and never shows it the second."""
    await import_codex_sessions(service, tmp_path)
    queue = await service.learning.distill_queue()
    codex_ids = {p.session_id for p in queue if p.source == "codex"}
    codex_turns = [
        turn.content
        for session_id in codex_ids
        for turn in await service.learning.undistilled_turns(session_id)
    ]
    sessions = {p.source: p.session_id for p in queue}
    for text, source in ((OLDER_FROM_CLAUDE, "claude-code"), (OLDER_FROM_CODEX, "codex")):
        await save_older(service, text, sessions[source])

    summary = await distill_with_claude(service, child_env)
    sent = "\n".join(request_text(body) for body in claude_model.requests)
    reviews = "\n".join(request_text(body) for body in claude_model.review_requests)
    still_pending = {p.session_id for p in await service.learning.distill_queue()}

    assert codex_ids, "the Codex fixture gave no session to distill"
    assert summary.stopped is None, summary.stopped
    assert summary.distilled == CLAUDE_SESSIONS
    assert codex_ids <= still_pending
    assert not any(turn[:80] in sent for turn in codex_turns)
    assert any("codex session(s) left pending" in line for line in summary.left_pending)
    assert OLDER_FROM_CLAUDE in reviews
    assert OLDER_FROM_CODEX not in sent
    assert summary.links_reviewed >= 1 and summary.link_reviews_failed == 0
    assert any(
        "link review:" in line and "another agent's session" in line
        for line in summary.left_pending
    ), summary.left_pending
    receipt = summary.llm or {}
    assert receipt["calls"] == len(claude_model.requests)
    assert receipt["sessions_sent"] == CLAUDE_SESSIONS


async def test_a_teammates_shared_memory_never_goes_to_the_model_of_a_users_link_review(
    service: MemoryService,
    imported: Path,
    child_env: dict[str, str],
    claude_model: DistillingClaude,
) -> None:
    """A team's server: alice owns the Claude Code sessions (claimed when she was added), bob
    shares a memory of the same project that a Claude Code session of his wrote. Distilling
    alice's sessions with Claude Code reviews the new lesson against alice's own older memory
    and never shows the model bob's, though it is as close and from the same agent: his text
    goes to no provider alice chose."""
    alice, _ = await service.users.add("alice", claim_unowned=True)
    bob, _ = await service.users.add("bob")
    [claude_session, *_] = [p.session_id for p in await service.learning.distill_queue()]
    with acting_as(service.users.viewer(alice.user)):
        await save_older(service, OLDER_FROM_CLAUDE, claude_session)
    with acting_as(service.users.viewer(bob.user)):
        await save_older(
            service, OLDER_FROM_CODEX, visibility="shared", metadata={"agent": "claude-code"}
        )

    summary = await distill_with_claude(service, child_env)
    sent = "\n".join(request_text(body) for body in claude_model.requests)
    reviews = "\n".join(request_text(body) for body in claude_model.review_requests)

    assert summary.stopped is None, summary.stopped
    assert summary.distilled == CLAUDE_SESSIONS
    assert OLDER_FROM_CLAUDE in reviews
    assert OLDER_FROM_CODEX not in sent
    assert summary.links_reviewed >= 1 and summary.link_reviews_failed == 0
    assert any(
        "link review:" in line and "a teammate's" in line for line in summary.left_pending
    ), summary.left_pending


class RateLimited(ScriptedModel):
    """The Messages API answering every request with HTTP 429 and a rate_limit_error."""

    def handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                stub.record(json.loads(self.rfile.read(length) or b"{}"))
                error = {
                    "type": "rate_limit_error",
                    "message": "This request would exceed your account's rate limit.",
                }
                send_json(self, 429, {"type": "error", "error": error})

        return Handler


async def test_a_rate_limit_answer_stops_the_run_and_leaves_every_session_pending(
    service: MemoryService, imported: Path, child_env: dict[str, str]
) -> None:
    with RateLimited() as limited:
        env = {**child_env, "ANTHROPIC_BASE_URL": limited.base_url.removesuffix("/v1")}
        summary = await distill_with_claude(service, env)
        asked = len(limited.requests)
    pending = await service.learning.distill_queue()

    assert summary.stopped is not None
    assert "rate limited" in summary.stopped and "stay pending" in summary.stopped
    assert asked == 1  # the first answer stopped the run
    assert summary.distilled == 0
    assert len(pending) == CLAUDE_SESSIONS
    assert all(p.distill_failures == 0 for p in pending)


async def test_secrets_in_what_is_sent_are_redacted_first(
    service: MemoryService, child_env: dict[str, str], claude_model: DistillingClaude
) -> None:
    secret = "sk-proj-" + "Q7x9" * 10
    model = ClaudeCodeModel(service.settings.claude_memory_home, timeout=120, environ=child_env)
    await model.complete_json(
        [
            {"role": "system", "content": "Reply with {}."},
            {"role": "user", "content": f"<transcript>export OPENAI_API_KEY={secret}</transcript>"},
        ],
        model="haiku",
    )

    sent = json.dumps(claude_model.requests)
    assert secret not in sent
    assert "[REDACTED" in sent
    assert model.usage.redactions == 1


async def test_the_hook_client_does_nothing_inside_the_child(hook_calls: HookCalls) -> None:
    url = hook_calls.base_url.removesuffix("/v1")
    data = payload("UserPromptSubmit")

    in_child = await run_hook("user-prompt-submit", data, url, env={CHILD_MARKER: "1"})
    called_in_child = len(hook_calls.requests)
    outside = await run_hook("user-prompt-submit", data, url)

    assert (in_child.returncode, in_child.stdout, called_in_child) == (0, "", 0)
    assert outside.returncode == 0 and hook_calls.requests


def test_nothing_is_sent_before_llm_use_and_a_dry_run_sends_nothing_either(
    fresh_database: Callable[[], str],
    child_env: dict[str, str],
    claude_model: DistillingClaude,
    tmp_path: Path,
) -> None:
    """The commands as the user runs them: distill with no consent given goes to the local
    endpoint (down here) and never to Claude; `llm use` says what will be sent where; a dry
    run lists it with its size; then a run sends it and leaves its receipt."""
    home = tmp_path / "memory-home"
    env = {
        **child_env,
        "CLAUDE_MEMORY_DATABASE_URL": fresh_database(),
        "CLAUDE_MEMORY_HOME": str(home),
        "CLAUDE_MEMORY_OLLAMA_URL": f"http://127.0.0.1:{free_port()}/v1",
    }
    fixtures = CLAUDE_PROJECTS
    imported = run_cli("import", "--claude-code", str(fixtures), "--json", env=env)
    assert imported.returncode == 0, imported.stderr

    refused = run_cli("distill", "--json", env=env)
    sent_without_consent = len(claude_model.requests)
    used = run_cli("llm", "use", "claude-code", env=env)
    dry = run_cli("distill", "--dry-run", "--json", env=env)
    sent_by_dry_run = len(claude_model.requests)
    done = run_cli("distill", "--json", env=env)
    status = run_cli("llm", "status", "--json", env=env)

    assert refused.returncode == 1 and "cannot reach" in refused.stderr
    assert sent_without_consent == 0
    assert used.returncode == 0, used.stderr
    assert "Claude Code sessions" in used.stdout and "Anthropic" in used.stdout
    assert "CLAUDE_MEMORY_LLM_PROVIDER=claude-code" in (home / "config.env").read_text()
    assert dry.returncode == 0, dry.stderr
    would_send = json.loads(dry.stdout)["would_send"]
    assert len(would_send) == CLAUDE_SESSIONS
    assert all("would send 1 request(s)" in line and "tokens" in line for line in would_send)
    assert sent_by_dry_run == 0
    assert done.returncode == 0, done.stderr
    receipt = json.loads(done.stdout)["llm"]
    assert (receipt["provider"], receipt["calls"]) == ("claude-code", CLAUDE_SESSIONS)
    assert len(claude_model.requests) == CLAUDE_SESSIONS
    assert json.loads(status.stdout)["last_receipt"]["calls"] == CLAUDE_SESSIONS


class DistillingCodex(ScriptedShell):
    """The Responses API stand-in, answering each request as a distilling model would."""

    def __init__(self) -> None:
        super().__init__([])

    def answer(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        said = [
            part.get("text", "")
            for item in body.get("input", [])
            if isinstance(item, dict) and item.get("role") == "user"
            for part in item.get("content", [])
            if isinstance(part, dict)
        ]
        reply = lessons_for([{"role": "user", "content": "\n".join(said)}])
        assert isinstance(reply, ContentReply)
        self.reply = reply.content
        return super().answer(body)


def pointed_codex(agent_clis: Path, folder: Path, base_url: str) -> Path:
    """A `codex` that runs the real one with our arguments plus the stand-in's URL: Codex reads
    its endpoint only from config (`openai_base_url`), and our arguments ignore the user's."""
    folder.mkdir()
    wrapper = folder / "codex"
    wrapper.write_text(
        "#!/bin/sh\n"
        'sub="$1"; shift\n'
        f'exec "{agent_clis / "codex"}" "$sub" -c \'openai_base_url="{base_url}"\''
        " -c features.responses_websockets=false -c features.responses_websockets_v2=false"
        ' "$@"\n'
    )
    wrapper.chmod(0o755)
    return folder


def codex_tools(body: dict[str, Any]) -> set[str]:
    """Every tool a Responses API request from Codex offers: its `tools`, and (0.169 on) the
    namespaces of an `additional_tools` input item, as `namespace.tool`."""
    offered = {tool.get("name") or tool.get("type") for tool in body.get("tools", [])}
    for item in body.get("input", []):
        if isinstance(item, dict) and item.get("type") == "additional_tools":
            for tool in item.get("tools", []):
                inner = tool.get("tools") if tool.get("type") == "namespace" else None
                offered |= (
                    {f"{tool['name']}.{each['name']}" for each in inner}
                    if inner is not None
                    else {tool.get("name") or tool.get("type")}
                )
    return offered


async def test_codex_distills_only_codex_sessions_with_no_tools_hooks_or_mcp(
    service: MemoryService,
    imported: Path,
    child_env: dict[str, str],
    agent_clis: Path,
    isolated_home: Path,
    hook_calls: HookCalls,
    tmp_path: Path,
) -> None:
    await import_codex_sessions(service, tmp_path)
    queue = await service.learning.distill_queue()
    codex_ids = {p.session_id for p in queue if p.source == "codex"}
    with DistillingCodex() as model:
        bin_dir = pointed_codex(agent_clis, tmp_path / "bin", model.base_url)
        env = {**child_env, "PATH": f"{bin_dir}{os.pathsep}{child_env['PATH']}"}
        connect_to("codex", hook_calls, env)
        cli = CodexModel(service.settings.claude_memory_home, timeout=120, environ=env)
        budget = RunBudget(CODEX_PROVIDER, 20, 200_000, usage=cli.usage)
        summary = await Distiller(
            service, cli, model="", workers=1, budget=budget, context_tokens=150_000
        ).run()
        asked = list(model.requests)
        during_distill = reached(hook_calls)
        plain = ["codex", "exec", "--json", "--skip-git-repo-check"]
        run_agent([*plain, "--dangerously-bypass-hook-trust", "hi"], env, tmp_path / "acme")
        plain_tools = codex_tools(model.requests[-1])
        plain_model = model.requests[-1]["model"]
    still_pending = {p.session_id for p in await service.learning.distill_queue()}
    rollouts = list((isolated_home / ".codex" / "sessions").rglob("rollout-*.jsonl"))

    assert codex_ids and summary.stopped is None, summary.stopped
    assert summary.distilled == len(codex_ids)
    assert len(asked) == len(codex_ids)
    assert during_distill == set()
    assert reached(hook_calls) == {"hooks", "mcp"}  # the same HOME, a plain session
    # So the reading can tell: a plain session with the same model offers code mode and more.
    assert {"functions.exec", "clock.sleep", "collaboration.spawn_agent"} <= plain_tools
    for body in asked:
        assert body["model"] == plain_model  # a model whose catalogue entry asks for code mode
        assert codex_tools(body) == set()
        assert not any(i.get("type") == "additional_tools" for i in body["input"])
        assert "You are Codex" not in json.dumps(body["input"])  # our one line instead
        developer = json.dumps([i for i in body["input"] if i.get("role") == "developer"])
        assert json.dumps(SYSTEM_PROMPT)[1:200] in developer
    assert {p.session_id for p in queue if p.source == "claude-code"} <= still_pending
    assert any("claude-code session(s) left pending" in line for line in summary.left_pending)
    assert (summary.llm or {})["calls"] == len(codex_ids)
    assert len(rollouts) == 1  # the plain session's; the child kept none


async def test_gemini_distills_only_gemini_sessions_with_no_tools_hooks_or_mcp(
    service: MemoryService,
    imported: Path,
    child_env: dict[str, str],
    isolated_home: Path,
    hook_calls: HookCalls,
    tmp_path: Path,
) -> None:
    gemini_root = Path(shutil.copytree(GEMINI_FIXTURES, tmp_path / ".gemini")) / "tmp"
    await SessionImporter(service, ImportFilters(min_length=0), agent=GEMINI_FORMAT).run(
        gemini_root
    )
    queue = await service.learning.distill_queue()
    gemini_ids = {p.session_id for p in queue if p.source == "gemini"}
    gemini_on_api_key(isolated_home)
    with ScriptedGemini(lambda body: distilled(gemini_request_text(body))) as model:
        env = {**child_env, "GOOGLE_GEMINI_BASE_URL": model.root_url, "GEMINI_API_KEY": "k"}
        connect_to("gemini", hook_calls, env)
        cli = GeminiModel(service.settings.claude_memory_home, timeout=120, environ=env)
        budget = RunBudget(GEMINI, 20, 200_000, usage=cli.usage)
        summary = await Distiller(
            service, cli, model="flash-lite", workers=1, budget=budget, context_tokens=150_000
        ).run()
        asked = list(model.requests)
        during_distill = reached(hook_calls)
        child_chats = await SessionImporter(service, ImportFilters(), agent=GEMINI_FORMAT).run(
            isolated_home / ".gemini" / "tmp"
        )
        plain = ["gemini", "--output-format", "json", "--skip-trust", "-p", "hi"]
        run_agent(plain, env, tmp_path / "acme")
        plain_tools = gemini_tools(model.requests[-1])
    still_pending = {p.session_id for p in await service.learning.distill_queue()}

    assert gemini_ids and summary.stopped is None, summary.stopped
    assert summary.distilled == len(gemini_ids)
    assert len(asked) == len(gemini_ids)
    assert during_distill == set()
    assert reached(hook_calls) == {"hooks", "mcp"}  # the same HOME, a plain session
    assert {"read_file", "google_web_search"} <= plain_tools  # so the reading can tell
    for body in asked:
        assert gemini_tools(body) == set()
        assert SYSTEM_PROMPT in json.dumps(body["systemInstruction"], ensure_ascii=False).replace(
            "\\n", "\n"
        ).replace('\\"', '"')
    assert {p.session_id for p in queue if p.source == "claude-code"} <= still_pending
    assert (summary.llm or {})["calls"] == len(gemini_ids)
    assert child_chats.turns_imported == 0


def gemini_tools(body: dict[str, Any]) -> set[str]:
    """The tools a Gemini API request declares to the model."""
    return {
        declared["name"]
        for tool in body.get("tools", [])
        for declared in tool.get("functionDeclarations", [])
    }


async def test_copilot_distills_only_copilot_sessions_with_no_tools_hooks_or_mcp(
    service: MemoryService,
    imported: Path,
    child_env: dict[str, str],
    claude_model: DistillingClaude,
    hook_calls: HookCalls,
    tmp_path: Path,
) -> None:
    """The real Copilot CLI, its model the Messages API stand-in (Copilot's BYOK settings)."""
    root = Path(shutil.copytree(COPILOT_FIXTURES, tmp_path / "session-state"))
    await SessionImporter(service, ImportFilters(min_length=0), agent=COPILOT_FORMAT).run(root)
    queue = await service.learning.distill_queue()
    copilot_ids = {p.session_id for p in queue if p.source == "copilot"}
    env = {
        **child_env,
        "COPILOT_PROVIDER_BASE_URL": claude_model.root_url,
        "COPILOT_PROVIDER_TYPE": "anthropic",
        "COPILOT_PROVIDER_API_KEY": "sk-ant-stub-key",
        "COPILOT_MODEL": "claude-haiku-4.5",
        "COPILOT_OFFLINE": "true",
    }
    connect_to("copilot", hook_calls, env)
    cli = CopilotModel(service.settings.claude_memory_home, timeout=120, environ=env)
    budget = RunBudget(COPILOT, 20, 200_000, usage=cli.usage)

    summary = await Distiller(
        service, cli, model="", workers=1, budget=budget, context_tokens=40_000
    ).run()
    asked = list(claude_model.requests)
    during_distill = reached(hook_calls)
    run_agent(["copilot", "-p", "hi", "--allow-all-tools"], env, tmp_path / "acme")
    plain_tools = {tool["name"] for tool in claude_model.requests[-1].get("tools", [])}

    assert copilot_ids and summary.stopped is None, summary.stopped
    assert summary.distilled == len(copilot_ids) == len(asked)
    assert during_distill == set()
    assert reached(hook_calls) == {"hooks", "mcp"}  # the same HOME, a plain session
    assert {"bash", "edit"} <= plain_tools  # so the reading can tell
    for body in asked:
        assert body.get("tools", []) == []
        assert SYSTEM_PROMPT in request_text(body)
    assert (summary.llm or {})["tokens_estimated"] is True
    assert any("claude-code session(s) left pending" in line for line in summary.left_pending)


def test_the_real_copilot_accepts_our_exact_arguments(
    agent_clis: Path, isolated_home: Path, tmp_path: Path
) -> None:
    """Offline and logged out, the real CLI given our arguments stops at login; given one it
    does not know, at a usage error: so acceptance is told apart from refusal."""
    cli = CopilotModel(tmp_path, timeout=60)
    ours = cli.argv(SYSTEM_PROMPT, "", "<transcript>hello</transcript>")[1:]
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN")
    }
    env.update(HOME=str(isolated_home), NO_COLOR="1")

    def run(*args: str) -> str:
        done = subprocess.run(
            [str(agent_clis / "copilot"), *args],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        return done.stdout + done.stderr

    accepted = run(*ours)
    refused = run(*ours, "--no-such-flag")

    assert "authenticate" in accepted, accepted[-1000:]
    assert "copilot --help" not in accepted
    assert "copilot --help" in refused and "authenticate" not in refused
