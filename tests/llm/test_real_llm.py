"""Distillation against a real OpenAI-compatible endpoint, measured on the fixture facts.

Runs only when LLM_TEST_BASE_URL (and LLM_TEST_MODEL) are set: tests/conftest.py leaves these
tests out of the run otherwise. It imports the fixtures, distills them with the real model and
reports how many of the fixture README's 15 facts the distilled memories state.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from server.core.models.memories import MemoryFilter
from server.ingest.importer import ImportFilters, SessionImporter
from server.learning.distill import Distiller
from server.learning.llm import ChatClient
from server.service.memory import MemoryService
from tests.fixture_sessions import CLAUDE_PROJECTS

pytestmark = pytest.mark.llm

# One fact of the fixture README per entry: every phrase group must match (any of its words).
FACTS: dict[str, list[tuple[str, ...]]] = {
    "pnpm, never npm": [("pnpm",), ("npm",)],
    "lint and test before commit": [("lint",), ("test",), ("commit",)],
    "named exports only": [("named export", "default export")],
    "conventional commits": [("conventional",)],
    "keyset pagination on GET /orders": [("keyset", "cursor"), ("orders",)],
    "JS Date drops microseconds": [("microsecond",)],
    "withTransaction leaked pool clients": [("withtransaction", "pool"), ("release", "leak")],
    "no load tests on staging": [("staging",), ("load",)],
    "Idempotency-Key follow-up": [("idempotency",)],
    "rate limit per API key": [("api key", "x-api-key"), ("rate",)],
    "RFC 9457 problem+json": [("9457", "problem+json", "sendproblem")],
    "Redis store in prod": [("redis",)],
    "integer cents, EUR de-DE": [("cents",)],
    "TanStack Query, no useEffect fetching": [("tanstack",)],
    "CLI named acme-billing": [("acme-billing",)],
}


def stated(fact: list[tuple[str, ...]], texts: list[str]) -> bool:
    return any(all(any(w in text for w in group) for group in fact) for text in texts)


async def test_distilled_memories_recall_the_fixture_facts(
    service: MemoryService, tmp_path: Path
) -> None:
    base_url = os.environ["LLM_TEST_BASE_URL"]
    model = os.environ.get("LLM_TEST_MODEL", "qwen2.5:7b")
    projects = tmp_path / "projects"
    shutil.copytree(CLAUDE_PROJECTS, projects)
    await SessionImporter(service, ImportFilters()).run(projects)

    async with ChatClient(base_url, timeout=600) as client:
        summary = await Distiller(service, client, model=model, workers=1).run()

    learned = await service.list_memories(MemoryFilter(source="distill"), limit=500)
    texts = [m.content.lower() for m in learned.memories]
    found = [name for name, fact in FACTS.items() if stated(fact, texts)]
    recall = len(found) / len(FACTS)
    print(f"\nfixture fact recall with {model}: {recall:.2f} ({len(found)}/{len(FACTS)})")
    print("missing:", sorted(set(FACTS) - set(found)))
    assert summary.stopped is None
    assert summary.distilled >= 3
    assert recall >= 0.5
