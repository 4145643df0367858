"""`signals` on the imported fixtures: corrections found, aggregates updated in place."""

from __future__ import annotations

import json
from pathlib import Path

from server.core.models.memories import Memory, MemoryFilter
from server.ingest.importer import ImportFilters, SessionImporter
from server.learning.signals_job import mine_signals
from server.service.memory import MemoryService
from tests.fixture_sessions import CLAUDE_PROJECTS, S1, S1_FILE


async def signal_memories(service: MemoryService, kind: str) -> list[str]:
    page = await service.list_memories(MemoryFilter(source="signals", kind=kind), limit=100)
    return [m.content for m in page.memories]


async def test_the_four_fixture_corrections_become_preferences(
    service: MemoryService, imported: Path
) -> None:
    summary = await mine_signals(service)

    corrections = await signal_memories(service, "preference")
    assert summary.corrections == len(corrections) == 4
    joined = "\n".join(corrections)
    assert "this repo uses pnpm" in joined
    assert "Bash: npm install zod" in joined  # what it corrected
    assert "pnpm lint && pnpm test" in joined
    assert "don't run anything against staging" in joined
    assert "per API key" in joined
    for look_alike in ("terminal froze", "remember lint+tests first", "looks good. commit it"):
        assert look_alike not in joined


async def test_aggregates_are_patterns_updated_in_place(
    service: MemoryService, imported: Path
) -> None:
    await mine_signals(service)
    first = {m.metadata["signal_key"]: m for m in await _patterns(service)}

    again = await mine_signals(service)

    assert again.sessions == 0
    assert again.created == 0
    assert {m.metadata["signal_key"]: m.id for m in await _patterns(service)} == {
        key: m.id for key, m in first.items()
    }
    commands = first["signals:commands:acme-api"]
    assert "pnpm test" in commands.content

    session_file = imported / S1_FILE.relative_to(CLAUDE_PROJECTS)
    with session_file.open("a", encoding="utf-8") as handle:
        for n in range(6):
            handle.write(_bash_call(n))
    await SessionImporter(service, ImportFilters()).run(imported)

    grown = await mine_signals(service)

    after = {m.metadata["signal_key"]: m for m in await _patterns(service)}
    assert grown.sessions == 1
    assert grown.updated >= 1
    assert set(after) == set(first)
    assert after["signals:commands:acme-api"].id == commands.id
    assert after["signals:commands:acme-api"].content != commands.content
    assert "pnpm typecheck" in after["signals:commands:acme-api"].content


async def test_preferences_and_startup_context_show_the_tiers(
    service: MemoryService, imported: Path
) -> None:
    await service.save("Prefers answers that lead with the root cause.", kind="preference")
    await mine_signals(service)

    tiers = await service.preferences("acme-api")
    context = await service.startup_context("acme-api")

    assert [p.memory.content for p in tiers.explicit] == [
        "Prefers answers that lead with the root cause."
    ]
    assert {p.memory.kind for p in tiers.signals} == {"preference", "pattern"}
    assert all(p.evidence_sessions >= 1 for p in tiers.signals)
    assert "## Preferences (stated)" in context.markdown
    assert "## Learned from corrections and habits" in context.markdown
    assert "confidence" in context.markdown


async def test_dry_run_reports_without_writing(service: MemoryService, imported: Path) -> None:
    summary = await mine_signals(service, dry_run=True)

    assert summary.corrections == 4
    assert await signal_memories(service, "preference") == []


async def _patterns(service: MemoryService) -> list[Memory]:
    page = await service.list_memories(MemoryFilter(source="signals", kind="pattern"), limit=100)
    return page.memories


def _bash_call(n: int) -> str:
    session = S1
    return (
        json.dumps(
            {
                "type": "assistant",
                "uuid": f"e0000000-0000-4000-8000-00000000000{n}",
                "sessionId": session,
                "cwd": "/home/dev/acme-api",
                "timestamp": f"2026-04-25T10:0{n}:00.000Z",
                "message": {
                    "role": "assistant",
                    "id": f"msg_e{n}",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": f"toolu_e{n}",
                            "name": "Bash",
                            "input": {"command": "pnpm typecheck"},
                        }
                    ],
                },
            }
        )
        + "\n"
    )
