"""`behavior` with the scripted LLM, and `profile` writing ~/.claude/user.md."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from server.core.models.memories import MemoryDraft, MemoryFilter
from server.ingest.importer import ImportFilters, SessionImporter
from server.learning.behavior import BehaviorReader
from server.learning.distill import Distiller
from server.learning.llm import ChatClient
from server.learning.profile import patch_claude_md, render_profile
from server.service.memory import MemoryService
from tests.fixture_sessions import CLAUDE_PROJECTS, S1, S3
from tests.held_inserts import with_inserts_held
from tests.llm_stub import Reply, ScriptedLLM, ScriptedReply

TURN = re.compile(r"^\[T(\d+)\] (User|Assistant): ", re.M)
HABIT = "Runs lint and the tests before every commit and expects the agent to do the same."


def observe(messages: list[dict[str, Any]]) -> ScriptedReply:
    """Cite the first user turn of the window, as a model would cite its evidence."""
    if "how this developer works" not in messages[0]["content"]:
        return Reply.json({"memories": []})  # the distill pass: nothing for this test
    users = [int(n) for n, speaker in TURN.findall(messages[-1]["content"]) if speaker == "User"]
    return Reply.json(
        {
            "memories": [
                {"content": HABIT, "kind": "behavior", "tags": ["quality"], "turns": users[:1]}
            ]
        }
    )


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    with ScriptedLLM(default=Reply.by_prompt(observe)) as server:
        yield server


@pytest.fixture
async def distilled(service: MemoryService, llm: ScriptedLLM, tmp_path: Path) -> None:
    projects = tmp_path / "projects"
    shutil.copytree(CLAUDE_PROJECTS, projects)
    await SessionImporter(service, ImportFilters()).run(projects)
    async with ChatClient(llm.base_url, timeout=5) as client:
        await Distiller(service, client, model="m", workers=2).run()


async def read_behavior(service: MemoryService, llm: ScriptedLLM, **options: Any) -> Any:
    force = options.pop("force", False)
    async with ChatClient(llm.base_url, timeout=5) as client:
        reader = BehaviorReader(service, client, model="m", workers=2, force=force)
        return await reader.run(**options)


async def behaviors(service: MemoryService) -> list[Any]:
    return (await service.list_memories(MemoryFilter(kind="behavior"), limit=50)).memories


async def test_one_observation_seen_in_every_session_gathers_its_evidence(
    service: MemoryService, llm: ScriptedLLM, distilled: None
) -> None:
    summary = await read_behavior(service, llm)

    [observation] = await behaviors(service)
    assert summary.read == 4
    assert (summary.observations, summary.supported) == (1, 3)
    assert observation.content == HABIT
    assert observation.tags == ["quality"]
    assert len(set(observation.metadata["evidence_sessions"])) == 4
    assert observation.metadata["evidence"][0]["quote"]
    tiers = await service.preferences()
    [inferred] = tiers.inferred
    assert inferred.evidence_sessions == 4
    assert inferred.confidence > 0.35


async def test_sessions_stored_at_once_share_one_observation_and_lose_no_evidence(
    service: MemoryService, distilled: None
) -> None:
    queue = await service.learning.behavior_queue()

    def draft(session_id: str) -> MemoryDraft:
        return MemoryDraft(
            content=HABIT,
            kind="behavior",
            source="behavior",
            tags=["quality"],
            session_id=session_id,
            metadata={"evidence_sessions": [session_id], "last_seen": "2026-01-01T00:00:00"},
        )

    # Unserialised, all four stores would find nothing stored, and three inserts would be
    # dropped as duplicates, their sessions' evidence with them.
    outcomes = await with_inserts_held(
        service,
        [service.learning.store_behavior(p, [draft(p.session_id)], force=False) for p in queue],
    )

    [observation] = await behaviors(service)
    assert len(queue) == 4
    assert sorted(o.created for o in outcomes) == [0, 0, 0, 1]
    assert sum(o.updated for o in outcomes) == 3
    assert sorted(observation.metadata["evidence_sessions"]) == sorted(p.session_id for p in queue)


async def test_a_read_session_is_not_sent_again_and_force_replaces(
    service: MemoryService, llm: ScriptedLLM, distilled: None
) -> None:
    llm.default = Reply.json({"memories": []})
    empty = await read_behavior(service, llm)
    requests = len(llm.requests)

    again = await read_behavior(service, llm)

    assert empty.read == 4
    assert again.sessions == 0
    assert len(llm.requests) == requests

    llm.default = Reply.by_prompt(observe)
    forced = await read_behavior(service, llm, session=S3, force=True)
    assert forced.read == 1
    refreshed = await read_behavior(service, llm, session=S3, force=True)
    assert refreshed.read == 1
    [observation] = await behaviors(service)
    assert observation.metadata["evidence_sessions"] == [S3]


async def test_an_observation_without_a_cited_user_turn_is_dropped(
    service: MemoryService, llm: ScriptedLLM, distilled: None
) -> None:
    llm.default = Reply.json(
        {"memories": [{"content": "Likes tidy code.", "kind": "behavior", "tags": ["quality"]}]}
    )

    summary = await read_behavior(service, llm, session=S1)

    assert summary.read == 1
    assert await behaviors(service) == []


async def test_profile_renders_tiers_and_patches_claude_md_once(
    service: MemoryService, tmp_path: Path
) -> None:
    await service.save("Use pnpm, never npm.", kind="preference", project="acme-api")
    await service.save(HABIT, kind="behavior", source="behavior")
    tiers = await service.preferences()
    projects = await service.projects()

    text = render_profile(tiers, projects, user="dev", generated_at=datetime.now(tz=UTC))
    claude_md = tmp_path / "CLAUDE.md"
    claude_md.write_text("# My rules\n\n- be brief\n")
    profile = tmp_path / "user.md"
    first = patch_claude_md(claude_md, profile)
    second = patch_claude_md(claude_md, profile)

    assert "## Preferences\n- Use pnpm, never npm." in text
    assert "## Working style\n- " + HABIT in text
    assert "acme-api" in text
    assert "not instructions" in text
    assert (first, second) == (True, False)
    patched = claude_md.read_text()
    assert patched.startswith("# My rules\n\n- be brief\n")
    assert patched.count(str(profile)) == 1
