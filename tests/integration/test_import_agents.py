"""Codex CLI and Gemini CLI sessions through the one importer, beside Claude Code's.

The fixtures under tests/fixtures/codex and tests/fixtures/gemini follow each agent's saved
format (current and an older shape; their READMEs say which versions). Each import runs twice:
the second adds nothing. A decision made in a Codex session is found by hybrid search and,
once distilled, shows in the startup context Claude Code's SessionStart hook gets for the
same repository.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx
import pytest
from fastmcp import Client

from server.core.models.journal import JournalFilter
from server.core.models.memories import MemoryFilter
from server.ingest.agent_format import AgentFormat
from server.ingest.codex import CODEX, read_codex_rollout
from server.ingest.gemini import GEMINI
from server.ingest.importer import ImportFilters, SessionImporter
from server.learning.distill import Distiller
from server.learning.llm import ChatClient
from server.service.memory import MemoryService
from tests.llm_stub import Reply, ScriptedLLM

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CODEX_SESSION = "019b2f4e-8a31-7c52-9d1e-4f6a8b0c2d13"
DECISION = (
    "Decision: acme-api numbers invoices per tenant as INV-<tenant>-<seq>, the sequence kept "
    "in a tenant_counters row locked with SELECT ... FOR UPDATE."
)


def copied(agent: AgentFormat, tmp_path: Path) -> Path:
    """The agent's fixture folder copied, as the agent keeps it: the root import reads."""
    if agent is CODEX:
        return Path(shutil.copytree(FIXTURES / "codex" / "sessions", tmp_path / "sessions"))
    gemini = Path(shutil.copytree(FIXTURES / "gemini", tmp_path / ".gemini"))
    return gemini / "tmp"


async def run_import(service: MemoryService, agent: AgentFormat, root: Path) -> dict[str, object]:
    summary = await SessionImporter(service, ImportFilters(), agent=agent).run(root)
    return summary.as_json()


@pytest.mark.parametrize("agent", [CODEX, GEMINI], ids=["codex", "gemini"])
async def test_an_agents_sessions_import_once_with_malformed_lines_reported(
    service: MemoryService, tmp_path: Path, agent: AgentFormat
) -> None:
    root = copied(agent, tmp_path)

    first = await run_import(service, agent, root)
    again = await run_import(service, agent, root)

    assert first["errors"] == [] and first["source"] == agent.source
    assert first["malformed_lines"] >= 1, "each fixture holds a malformed line"
    assert first["turns_imported"] >= 4 and first["events"] >= 3 and first["prompts"] >= 2
    assert first["sessions"] >= 2, "the current and the older shape"
    assert (again["turns_imported"], again["events"], again["prompts"]) == (0, 0, 0)
    turns = await service.list_memories(MemoryFilter(kind="raw"), limit=500)
    assert turns.total == first["turns_imported"]
    assert {m.source for m in turns.memories} == {agent.source}
    assert "acme-api" in {m.project for m in turns.memories}
    sessions = {s.session_id: s for s in (await service.sessions()).sessions}
    assert {s.source for s in sessions.values()} == {agent.source}
    failed = await service.journal(JournalFilter(failed_only=True), limit=100)
    assert failed.calls >= 1, "a failing call is journaled as failed"


async def test_a_line_written_in_two_parts_is_imported_once_whole(
    service: MemoryService, tmp_path: Path
) -> None:
    root = copied(CODEX, tmp_path)
    [current] = root.glob(f"2026/*/*/*{CODEX_SESSION}.jsonl")
    whole = current.read_bytes()
    cut = whole.index(b"Decision: invoices are numbered per tenant") + 10  # inside the prompt
    every_turn = ImportFilters(min_length=0)

    current.write_bytes(whole[:cut])
    await SessionImporter(service, every_turn, agent=CODEX).run(root)
    current.write_bytes(whole)
    await SessionImporter(service, every_turn, agent=CODEX).run(root)

    stored = await service.list_memories(MemoryFilter(session_id=CODEX_SESSION), limit=500)
    expected = {turn.uuid for turn in read_codex_rollout(current).turns}
    assert {m.metadata["record_uuid"] for m in stored.memories} == expected
    assert any(m.content.startswith("Decision: invoices") for m in stored.memories)


async def test_a_codex_decision_is_searchable_and_reaches_claude_codes_startup_context(
    service: MemoryService, tmp_path: Path
) -> None:
    await run_import(service, CODEX, copied(CODEX, tmp_path))

    found = await service.search_hybrid("how are invoice numbers assigned per tenant?", limit=5)
    assert found.hits and found.hits[0].source == "codex"
    assert "INV-" in found.hits[0].content and found.hits[0].project == "acme-api"

    reply = Reply.json(
        {
            "memories": [
                {"content": DECISION, "kind": "decision", "tags": ["invoices"], "turns": [1]}
            ]
        }
    )
    with ScriptedLLM(default=reply) as llm:
        async with ChatClient(llm.base_url, timeout=5) as client:
            summary = await Distiller(service, client, model="qwen2.5:7b", workers=1).run(
                session=CODEX_SESSION
            )
    assert summary.memories_saved == 1

    # Claude Code's SessionStart hook, opened in the same repository.
    context = await service.startup_context("acme-api")
    assert DECISION in context.markdown
    # Narrowed by the user to one agent, recent work comes from that agent alone.
    from_codex = await service.startup_context("acme-api", source="codex")
    from_claude = await service.startup_context("acme-api", source="claude-code")
    assert DECISION in from_codex.markdown
    assert DECISION not in from_claude.markdown
    assert "Recent work from claude-code only." in from_claude.markdown


async def test_searches_narrow_to_one_agent(
    service: MemoryService, tmp_path: Path, imported: Path, app_url: str
) -> None:
    await run_import(service, CODEX, copied(CODEX, tmp_path))
    question = {"query": "how are invoice numbers assigned per tenant?", "limit": 10}

    async with httpx.AsyncClient(base_url=app_url) as http:
        everyone = (await http.post("/api/search", json=question)).json()["hits"]
        claude = await http.post("/api/search", json={**question, "source": "claude-code"})
    async with Client(f"{app_url}/mcp") as mcp:
        codex = await mcp.call_tool("hybrid_search", {**question, "source": "codex"})

    assert {hit["source"] for hit in everyone} == {"codex", "claude-code"}
    assert {hit["source"] for hit in claude.json()["hits"]} == {"claude-code"}
    codex_hits = codex.structured_content["hits"]  # type: ignore[index]
    assert codex_hits and {hit["source"] for hit in codex_hits} == {"codex"}


async def test_distilled_facts_keep_their_agent_for_every_filter(
    service: MemoryService, tmp_path: Path, imported: Path, app_url: str
) -> None:
    """A fact distilled from a Codex session says so, and "from Codex" finds it in search, the
    memory list and the timeline; the session list counts each agent's sessions."""
    await run_import(service, CODEX, copied(CODEX, tmp_path))
    reply = Reply.json(
        {"memories": [{"content": DECISION, "kind": "decision", "tags": [], "turns": [1]}]}
    )
    with ScriptedLLM(default=reply) as llm:
        async with ChatClient(llm.base_url, timeout=5) as client:
            await Distiller(service, client, model="qwen2.5:7b", workers=1).run(
                session=CODEX_SESSION
            )
    [fact] = (await service.list_memories(MemoryFilter(source="distill"))).memories
    assert (fact.content, fact.metadata["agent"]) == (DECISION, "codex")

    question = {"query": "invoice numbering per tenant", "limit": 20, "kind": "distilled"}
    async with httpx.AsyncClient(base_url=app_url) as http:
        from_codex = (await http.post("/api/search", json={**question, "source": "codex"})).json()
        from_claude = await http.post("/api/search", json={**question, "source": "claude-code"})
        listed = (await http.get("/api/memories", params={"source": "codex"})).json()
        timeline = (await http.get("/api/timeline", params={"source": "codex"})).json()
        sessions = (await http.get("/api/sessions", params={"source": "codex"})).json()

    assert [hit["id"] for hit in from_codex["hits"]] == [fact.id]
    assert fact.id not in {hit["id"] for hit in from_claude.json()["hits"]}
    assert fact.id in {m["id"] for m in listed["memories"]}
    assert fact.id in {point["id"] for point in timeline["points"]}
    assert {m["source"] for m in listed["memories"]} == {"codex", "distill"}
    assert sessions["by_source"]["codex"] == sessions["total"] >= 2
    assert sessions["by_source"]["claude-code"] >= 1, "the imported Claude Code sessions"
    assert {s["source"] for s in sessions["sessions"]} == {"codex"}
