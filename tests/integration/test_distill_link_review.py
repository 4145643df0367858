"""Distillation asks the model to confirm or reject supersession links: the real database, the
real model and the scripted OpenAI-compatible server.

The stub tells the review request from distill requests by its system prompt, reads the
numbered OLD / NEW pairs from the prompt the way a model would, and answers each through a
`judge` the test gives it; distill requests get the test's memories.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from server.core.models.learning import LinkReviewOutcome, LinkVerdict
from server.core.models.memories import Memory, MemoryFilter
from server.learning.distill import Distiller, DistillSummary
from server.learning.link_review import SYSTEM_PROMPT
from server.learning.llm import ChatClient
from server.service.memory import MemoryService
from server.service.supersessions import CONFIRMED_NOTE, backfill, model_reason
from server.store.tx import Pool, transaction
from tests.fixture_sessions import S1
from tests.llm_stub import Reply, ScriptedLLM, ScriptedReply

PROJECT = "acme-api"
BEFORE_S1 = datetime(2026, 1, 5, 10, tzinfo=UTC)
PAIR = re.compile(r"^Pair (\d+)\nOLD \([\d-]+\): (.*)\nNEW \([\d-]+\): (.*)$", re.M)

NODE_18 = "The minimum Node version for acme-api builds is 18."
NODE_20 = "The minimum Node version for acme-api builds is 20."
NODE_REASON = "number 18 -> 20"  # what the rules say of NODE_20 after NODE_18
# Close in meaning (0.82) but below the near-copy guard (0.92), and the rules do not link them.
JENKINS = "acme-api deploys to production with the Jenkins pipeline on build-01."
ACTIONS = "acme-api deploys to production through GitHub Actions."

Judge = Callable[[list[tuple[int, str, str]]], ScriptedReply]


def model(distilled: list[str], review: Judge) -> ScriptedReply:
    """A model that distills S1 into `distilled` and answers a review through `review`."""

    def respond(messages: list[dict[str, Any]]) -> ScriptedReply:
        if messages[0]["content"] == SYSTEM_PROMPT:
            pairs = [(int(n), old, new) for n, old, new in PAIR.findall(messages[-1]["content"])]
            return review(pairs)
        items = [{"content": c, "kind": "fact", "tags": ["acme"], "turns": [1]} for c in distilled]
        return Reply.json({"memories": items})

    return Reply.by_prompt(respond)


def verdicts(replaces: Callable[[str, str], bool]) -> Judge:
    """A review answer giving every pair the verdict `replaces(old, new)`."""
    return lambda pairs: Reply.json(
        {"verdicts": [{"pair": n, "replaces": replaces(old, new)} for n, old, new in pairs]}
    )


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    with ScriptedLLM() as server:
        yield server


async def distill_s1(
    service: MemoryService, llm: ScriptedLLM, *, timeout: float = 5, dry_run: bool = False
) -> DistillSummary:
    async with ChatClient(llm.base_url, timeout=timeout) as client:
        distiller = Distiller(service, client, model="qwen2.5:7b", workers=1, dry_run=dry_run)
        return await distiller.run(session=S1)


async def save_before_s1(service: MemoryService, text: str, project: str = PROJECT) -> int:
    outcome = await service.save(text, project=project, created_at=BEFORE_S1)
    assert outcome.status == "saved", outcome
    return outcome.id


async def distilled(service: MemoryService, text: str) -> Memory:
    page = await service.list_memories(MemoryFilter(project=PROJECT, source="distill"), limit=50)
    [memory] = [m for m in page.memories if m.content == text]
    return memory


def review_requests(llm: ScriptedLLM) -> list[dict[str, Any]]:
    return [r for r in llm.requests if r["messages"][0]["content"] == SYSTEM_PROMPT]


async def rejected_of(pool: Pool, memory_id: int) -> list[int]:
    async with transaction(pool) as conn:
        cur = await conn.execute(
            "SELECT supersede_rejected FROM memories WHERE id = %(id)s", {"id": memory_id}
        )
        row = await cur.fetchone()
    assert row is not None
    return [int(i) for i in row[0]]


async def session_state(service: MemoryService) -> tuple[str, int]:
    sessions = {s.session_id: s for s in (await service.sessions()).sessions}
    return sessions[S1].distill_state, sessions[S1].distill_failures


async def test_a_rule_link_the_model_rejects_is_cleared_and_not_made_again_by_the_backfill(
    service: MemoryService, llm: ScriptedLLM, imported: Path
) -> None:
    old = await save_before_s1(service, NODE_18)
    llm.default = model([NODE_20], verdicts(lambda old, new: False))

    summary = await distill_s1(service, llm)

    new = await distilled(service, NODE_20)
    assert (summary.links_reviewed, summary.links_rejected) == (1, 1)
    assert new.supersedes is None and new.supersede_reason == ""
    assert (await service.get(old)).superseded_by is None
    assert await rejected_of(service.pool, new.id) == [old]
    async with transaction(service.pool) as conn:  # as if saved before links existed
        await conn.execute(
            "UPDATE supersession_backfill"
            " SET done_id = 0, up_to_id = (SELECT max(id) FROM memories)"
        )

    assert await backfill(service.pool) == 0

    assert (await service.get(new.id)).supersedes is None


async def test_a_rule_link_the_model_confirms_is_kept_and_its_reason_says_so(
    service: MemoryService, llm: ScriptedLLM, imported: Path
) -> None:
    old = await save_before_s1(service, NODE_18)
    llm.default = model([NODE_20], verdicts(lambda old, new: True))

    summary = await distill_s1(service, llm)

    new = await distilled(service, NODE_20)
    assert new.supersedes == old
    assert new.supersede_reason == NODE_REASON + CONFIRMED_NOTE
    assert summary.as_json() | {"seconds": 0} == summary.as_json() | {
        "links_reviewed": 1,
        "links_confirmed": 1,
        "links_rejected": 0,
        "links_added": 0,
        "link_reviews_failed": 0,
        "seconds": 0,
    }


async def test_one_review_request_asks_about_the_rule_link_and_the_pair_the_rules_missed(
    service: MemoryService, llm: ScriptedLLM, imported: Path
) -> None:
    node = await save_before_s1(service, NODE_18)
    jenkins = await save_before_s1(service, JENKINS)
    await save_before_s1(
        service, "shop deploys to production with the Jenkins pipeline.", project="shop"
    )
    asked: list[tuple[str, str]] = []

    def judge(pairs: list[tuple[int, str, str]]) -> ScriptedReply:
        asked.extend((old, new) for _, old, new in pairs)
        return verdicts(lambda old, new: True)(pairs)

    llm.default = model([NODE_20, ACTIONS], judge)

    summary = await distill_s1(service, llm)

    assert len(review_requests(llm)) == 1
    assert sorted(asked) == sorted([(NODE_18, NODE_20), (JENKINS, ACTIONS)])
    actions = await distilled(service, ACTIONS)
    assert actions.supersedes == jenkins
    assert actions.supersede_reason == model_reason(jenkins)
    assert (await service.get(jenkins)).superseded_by == actions.id
    assert (await distilled(service, NODE_20)).supersedes == node
    assert (summary.links_reviewed, summary.links_confirmed, summary.links_added) == (2, 1, 1)


async def test_a_pair_the_model_says_is_two_facts_stays_apart(
    service: MemoryService, llm: ScriptedLLM, imported: Path
) -> None:
    jenkins = await save_before_s1(service, JENKINS)
    llm.default = model([ACTIONS], verdicts(lambda old, new: False))

    summary = await distill_s1(service, llm)

    assert len(review_requests(llm)) == 1
    assert (await distilled(service, ACTIONS)).supersedes is None
    assert (await service.get(jenkins)).superseded_by is None
    assert (summary.links_reviewed, summary.links_added, summary.links_rejected) == (1, 0, 0)


@pytest.mark.reliability  # LLM faults (issue #10)
@pytest.mark.parametrize(
    "review",
    [
        Reply.text("Pair 1: yes, it replaces the old note."),
        Reply.json({"verdicts": [{"pair": 1, "replaces": "yes"}]}),
        Reply.status(500, {"error": {"message": "model crashed"}}),
        Reply.delay(3, Reply.json({"verdicts": [{"pair": 1, "replaces": False}]})),
    ],
    ids=["prose", "non-boolean", "http-500", "timeout"],
)
async def test_a_failed_review_keeps_the_rule_links_and_the_session_distilled(
    service: MemoryService, llm: ScriptedLLM, imported: Path, review: ScriptedReply
) -> None:
    old = await save_before_s1(service, NODE_18)
    llm.default = model([NODE_20], lambda pairs: review)

    summary = await distill_s1(service, llm, timeout=1)

    assert len(review_requests(llm)) == 1  # no retry
    assert (summary.stopped, summary.distilled, summary.failed) == (None, 1, 0)
    assert (summary.link_reviews_failed, summary.links_reviewed) == (1, 0)
    new = await distilled(service, NODE_20)
    assert (new.supersedes, new.supersede_reason) == (old, NODE_REASON)
    assert await session_state(service) == ("done", 0)


async def test_memories_with_no_close_earlier_memory_make_no_review_request(
    service: MemoryService, llm: ScriptedLLM, imported: Path
) -> None:
    await save_before_s1(service, "The acme-api office plants are watered on Fridays.")
    await save_before_s1(service, JENKINS, project="shop")
    llm.default = model([ACTIONS], verdicts(lambda old, new: True))

    summary = await distill_s1(service, llm)

    assert summary.memories_saved == 1
    assert review_requests(llm) == []
    assert len(llm.requests) == summary.windows
    assert (await distilled(service, ACTIONS)).supersedes is None
    assert (summary.links_reviewed, summary.link_reviews_failed) == (0, 0)


async def test_a_dry_run_makes_no_review_request(
    service: MemoryService, llm: ScriptedLLM, imported: Path
) -> None:
    await save_before_s1(service, NODE_18)
    llm.default = model([NODE_20], verdicts(lambda old, new: True))

    summary = await distill_s1(service, llm, dry_run=True)

    assert summary.windows >= 1
    assert llm.requests == []
    assert summary.link_reviews_failed == 0


async def test_a_verdict_on_a_rule_link_changed_by_hand_meanwhile_is_skipped(
    service: MemoryService,
) -> None:
    old = await save_before_s1(service, NODE_18)
    new = await service.save(NODE_20, project=PROJECT)
    [pair] = await service.learning.link_review_pairs([new.id], [(new.id, old, NODE_REASON)])
    assert (pair.older_id, pair.rule_reason) == (old, NODE_REASON)
    await service.update(new.id, supersedes=0)  # the user unlinks, then links it again by hand
    await service.update(new.id, supersedes=old)

    outcome = await service.learning.apply_link_verdicts([LinkVerdict(pair, False)])

    assert outcome == LinkReviewOutcome(skipped=1)
    kept = await service.get(new.id)
    assert (kept.supersedes, kept.supersede_reason) == (old, "set by hand")


@pytest.mark.parametrize("change", ["older-superseded", "cycle"])
async def test_a_proposed_link_that_no_longer_fits_is_skipped(
    service: MemoryService, change: str
) -> None:
    older = await save_before_s1(service, JENKINS)
    newer = await service.save(ACTIONS, project=PROJECT)
    [pair] = await service.learning.link_review_pairs([newer.id], [])
    assert (pair.older_id, pair.rule_reason) == (older, None)
    if change == "older-superseded":
        other = await service.save(
            "acme-api deploys are paused during the December freeze.", project=PROJECT
        )
        await service.update(other.id, supersedes=older)
    else:
        await service.update(older, supersedes=newer.id)

    outcome = await service.learning.apply_link_verdicts([LinkVerdict(pair, True)])

    assert outcome == LinkReviewOutcome(skipped=1)
    assert (await service.get(newer.id)).supersedes is None
