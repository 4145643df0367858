"""A prompt about another project's things (real database, real model, the real hook): its
words lend this project's near misses no support, so the hook injects only what is close on
meaning alone; the same prompt from the other project's folder finds its memory there, and
a near miss holding the words still counts when no other project holds them better."""

from __future__ import annotations

from server.core.models.memories import MemoryFilter
from server.recall.cutoff import ELSEWHERE_MARGIN, words_needed
from server.service.memory import MemoryService
from tests.integration.acme_facts import PROJECT_PATH
from tests.integration.hook_runs import context_of, payload, run_hook

FIRMWARE_PATH = "/home/dev/wren-fw"
# acme-api's near miss holds the prompt's everyday words ("retries", "download", "gives up"),
# not its subject; the firmware's memory holds nearly all of them.
ACME_NEAR_MISS = "The mobile app retries a failed update download five times before it gives up."
FIRMWARE_FACT = (
    "How many times the firmware retries an OTA download before it gives up: five, then it"
    " keeps the old image."
)
ASKED = "how many times does the firmware retry the OTA download before it gives up?"


async def remember(service: MemoryService, content: str, project: str, path: str) -> int:
    outcome = await service.save(
        content, project=project, project_path=path, kind="distilled", force=True
    )
    return outcome.id


async def prompt(app_url: str, text: str, cwd: str) -> str:
    run = await run_hook(
        "user-prompt-submit",
        payload("UserPromptSubmit", prompt=text, cwd=cwd, session_id=f"elsewhere-{cwd}"),
        app_url,
    )
    return " ".join(context_of(run, "UserPromptSubmit").split()) if run.stdout.strip() else ""


async def near_miss_counts_by_its_words(service: MemoryService, memory: int) -> bool:
    """Whether acme-api's memory is below the cut-off yet holds the words it would need."""
    found = await service.search_hybrid(
        ASKED,
        min_similarity=service.cutoffs.recall_with_words,
        where=MemoryFilter(project="acme-api", with_general=True),
    )
    similarity = {hit.id: hit.similarity or 0.0 for hit in found.hits}.get(memory, 0.0)
    share = (await service.recall_evidence(ASKED, [memory])).term_shares[memory]
    needed = words_needed(similarity, service.cutoffs.recall, service.cutoffs.recall_with_words)
    return similarity < service.cutoffs.recall and needed is not None and share >= needed


async def test_a_prompt_about_another_project_gets_no_near_miss_of_this_one(
    app_url: str, service: MemoryService
) -> None:
    near_miss = await remember(service, ACME_NEAR_MISS, "acme-api", PROJECT_PATH)
    fact = await remember(service, FIRMWARE_FACT, "wren-fw", FIRMWARE_PATH)
    # Every name the prompt gives is known (to the firmware's memory), so the rule for
    # prompts about unknown things does not apply; acme-api's memory is below the cut-off
    # but holds enough of the prompt's words to count by them, were they acme-api's.
    assert await service.unknown_names(ASKED) == []
    assert await near_miss_counts_by_its_words(service, near_miss)
    evidence = await service.recall_evidence(ASKED, [near_miss, fact], "acme-api")
    assert evidence.words_elsewhere - evidence.words_here > ELSEWHERE_MARGIN
    assert evidence.words_here <= evidence.term_shares[near_miss] + 1e-9

    assert await prompt(app_url, ASKED, PROJECT_PATH) == ""
    assert FIRMWARE_FACT in await prompt(app_url, ASKED, FIRMWARE_PATH)


async def test_a_prompt_whose_words_this_project_holds_as_well_still_counts_them(
    app_url: str, service: MemoryService
) -> None:
    near_miss = await remember(service, ACME_NEAR_MISS, "acme-api", PROJECT_PATH)
    await remember(service, FIRMWARE_FACT, "wren-fw", FIRMWARE_PATH)
    asked = "how many times does the mobile app retry an update download before it gives up?"
    evidence = await service.recall_evidence(asked, [near_miss], "acme-api")
    assert evidence.term_shares[near_miss] > 0.5
    assert evidence.words_here >= evidence.words_elsewhere

    assert ACME_NEAR_MISS in await prompt(app_url, asked, PROJECT_PATH)


async def test_when_a_prompt_asks_about_is_no_evidence_of_which_project_it_is(
    app_url: str, service: MemoryService
) -> None:
    # The firmware's memory holds the prompt's date words ("early March", "started") and
    # little else; acme-api's holds what the prompt is about.
    export = await remember(
        service,
        "The nightly export had a 30 s timeout at first.",
        "acme-api",
        PROJECT_PATH,
    )
    dated = await remember(
        service,
        "In early March the OTA rollout started on the first devices; by late March all had it.",
        "wren-fw",
        FIRMWARE_PATH,
    )
    asked = "what did the export start out with in early March?"

    evidence = await service.recall_evidence(asked, [export, dated], "acme-api")

    assert evidence.words_elsewhere - evidence.words_here <= ELSEWHERE_MARGIN
    assert "30 s timeout" in await prompt(app_url, asked, PROJECT_PATH)
