"""The shared fixtures' rate-limit story, asked as a user would (#33): the correction first.

Imported as a user imports them (Claude Code sessions, the claude.ai export, the notes), the
acme-api sessions hold the user's request (per IP, 30 a minute), the agent's plan repeating
it, and the user's correction (per API key; the IP bucket only for anonymous calls), which the
import links to the plan it corrects. The request is not linked, yet it states what was
replaced: asked now, the correction must come above it, and the recall hook must bring the
decision to a prompt about rate limiting.
"""

from __future__ import annotations

import json

import pytest

from server.core.models.memories import MemoryFilter
from server.core.models.search import SearchHit
from server.domain.context import INDEX_HEADING
from server.recall.cutoff import words_needed
from server.service.memory import MemoryService
from tests.integration.acme_facts import PROJECT_PATH, import_acme
from tests.integration.hook_runs import context_of, payload, run_hook

CORRECTION = "per API key (`x-api-key`), not per IP"
REQUEST = "30 req/min per IP"


@pytest.fixture
async def acme(service: MemoryService) -> None:
    await import_acme(service)


def place(contents: list[str], fragment: str) -> int:
    return next(i for i, content in enumerate(contents) if fragment in content)


async def test_the_per_api_key_decision_comes_above_the_per_ip_request(
    service: MemoryService, acme: None
) -> None:
    result = await service.search_hybrid(
        "how is POST /invoices rate limited?",
        where=MemoryFilter(project="acme-api", with_general=True),
    )
    contents = [hit.content for hit in result.hits]

    assert place(contents, CORRECTION) < place(contents, REQUEST)
    corrected = result.hits[place(contents, CORRECTION)]
    assert corrected.version_note is not None


async def test_prompt_recall_brings_the_decision_to_a_rate_limiting_prompt(
    app_url: str, acme: None
) -> None:
    run = await run_hook(
        "user-prompt-submit",
        payload(
            "UserPromptSubmit",
            prompt="add rate limiting to the public endpoints",
            cwd=PROJECT_PATH,
            session_id="rate-limit-prompt",
        ),
        app_url,
    )

    context = context_of(run, "UserPromptSubmit")
    assert CORRECTION in " ".join(context.split())


async def test_prompt_recall_holds_back_when_the_prompt_names_what_memory_never_saw(
    app_url: str, acme: None
) -> None:
    async def injected(prompt: str) -> str:
        """What the hook shows in full (the index beneath lists less close candidates)."""
        run = await run_hook(
            "user-prompt-submit",
            payload("UserPromptSubmit", prompt=prompt, cwd=PROJECT_PATH, session_id=prompt),
            app_url,
        )
        return shown_in_full(run.stdout)

    # Nothing was ever said about Sentry: the error-handling memories are near, not answers.
    assert await injected("which Sentry project does acme-api report its errors to?") == ""
    # The same question about a tool the sessions do mention is answered from memory.
    known = await injected("how does Fastify report acme-api errors?")
    assert "sendProblem" in known


DECISION = "Key it by API key, with an IP-based fallback only for unauthenticated"


async def near_hits(
    service: MemoryService, prompt: str
) -> tuple[list[SearchHit], dict[int, float]]:
    """What prompt recall weighs in acme-api: the hits down to the words rule's cut-off, and
    the share of the prompt's words each holds."""
    found = await service.search_hybrid(
        prompt,
        min_similarity=service.cutoffs.recall_with_words,
        where=MemoryFilter(project="acme-api", with_general=True),
    )
    return found.hits, (
        await service.recall_evidence(prompt, [hit.id for hit in found.hits])
    ).term_shares


def needed(service: MemoryService, similarity: float) -> float:
    """The share of the prompt's words prompt recall asks of a hit this similar (infinite
    below the floor, where none is enough)."""
    share = words_needed(similarity, service.cutoffs.recall, service.cutoffs.recall_with_words)
    return float("inf") if share is None else share


async def test_prompt_recall_takes_a_hit_below_the_cut_off_that_names_the_prompts_words(
    app_url: str, service: MemoryService, acme: None
) -> None:
    prompt = "which store backs the rate limiter in prod?"
    hits, shares = await near_hits(service, prompt)
    decision = next(hit for hit in hits if DECISION in hit.content)
    # Below the cut-off on similarity alone, but it names most of what the prompt asks.
    assert decision.similarity is not None
    assert service.cutoffs.recall_with_words <= decision.similarity < service.cutoffs.recall
    assert shares[decision.id] >= needed(service, decision.similarity)

    run = await run_hook(
        "user-prompt-submit",
        payload("UserPromptSubmit", prompt=prompt, cwd=PROJECT_PATH, session_id="store-prompt"),
        app_url,
    )

    assert DECISION in " ".join(context_of(run, "UserPromptSubmit").split())


async def test_prompt_recall_leaves_out_near_hits_that_do_not_name_the_prompts_words(
    app_url: str, service: MemoryService, acme: None
) -> None:
    # The web UI's data fetching is told in the other repository: asked in the API's, its
    # near hits are handbook chunks that hold few of the prompt's words.
    prompt = "how do dashboard pages fetch server data?"
    hits, shares = await near_hits(service, prompt)
    assert hits
    assert all((hit.similarity or 0.0) < service.cutoffs.recall for hit in hits)
    assert all(shares[hit.id] < needed(service, hit.similarity or 0.0) for hit in hits)

    run = await run_hook(
        "user-prompt-submit",
        payload("UserPromptSubmit", prompt=prompt, cwd=PROJECT_PATH, session_id="fetch-prompt"),
        app_url,
    )

    assert shown_in_full(run.stdout) == ""


def shown_in_full(stdout: str) -> str:
    """The memories the prompt hook shows in full: its lines above the index of less close
    candidates (#67), which the agent judges; "" when it answered nothing."""
    if not stdout.strip():
        return ""
    context = json.loads(stdout)["hookSpecificOutput"]["additionalContext"]
    shown = context.split(INDEX_HEADING)[0]
    return "\n".join(line for line in shown.splitlines() if line.startswith("- "))
