"""Prompt recall's words rule (real database, real model, the real hook): a memory already
injected that still counts for a later prompt brings the version that replaced it, and a new
store's first memories are weighed by their words."""

from __future__ import annotations

from server.core.models.memories import MemoryFilter
from server.recall.cutoff import words_needed
from server.service.memory import MemoryService
from tests.integration.acme_facts import PROJECT_PATH
from tests.integration.hook_runs import context_of, payload, run_hook

OLD = "Product pages are cached in `@shop/page-cache` with a TTL of ten minutes."
NEW = "Changed it: storefront HTML now expires after two minutes instead."
OTHERS = [
    "Checkout totals are computed server side in integer cents.",
    "The admin dashboard is a React app built with Vite.",
    "Emails go out through the notification service.",
]
FIRST = "how long does the page cache keep product pages?"
LATER = "anything to know about page-cache before I touch the pricing code?"
SESSION = "cache-session"


async def remember(service: MemoryService, content: str) -> int:
    outcome = await service.save(
        content, project="acme-api", project_path=PROJECT_PATH, kind="distilled", force=True
    )
    return outcome.id


async def prompt(app_url: str, text: str) -> str:
    run = await run_hook(
        "user-prompt-submit",
        payload("UserPromptSubmit", prompt=text, cwd=PROJECT_PATH, session_id=SESSION),
        app_url,
    )
    return " ".join(context_of(run, "UserPromptSubmit").split()) if run.stdout.strip() else ""


async def test_a_memory_injected_earlier_brings_the_version_that_replaced_it(
    app_url: str, service: MemoryService
) -> None:
    for text in OTHERS:
        await remember(service, text)
    old = await remember(service, OLD)
    assert OLD in await prompt(app_url, FIRST)

    new = await remember(service, NEW)
    await service.update(new, supersedes=old)
    # The later prompt: the old memory counts by its words (below the cut-off, holding
    # enough of them), the new one, worded otherwise, would not count on its own.
    found = await service.search_hybrid(
        LATER,
        min_similarity=service.cutoffs.recall_with_words,
        where=MemoryFilter(project="acme-api", with_general=True),
    )
    similarity = {hit.id: hit.similarity or 0.0 for hit in found.hits}
    shares = (await service.recall_evidence(LATER, [old, new])).term_shares
    needed = words_needed(
        similarity[old], service.cutoffs.recall, service.cutoffs.recall_with_words
    )
    assert needed is not None and 0 < needed <= shares[old]
    assert similarity.get(new, 0.0) < service.cutoffs.recall_with_words

    context = await prompt(app_url, LATER)

    assert NEW in context
    assert OLD not in context


async def test_a_new_stores_first_memory_counts_by_its_words(
    app_url: str, service: MemoryService
) -> None:
    # One memory: every word it holds is "in all of them", which says nothing about how rare
    # the word is; the words share reads such a store as a larger one.
    correction = "Use pnpm, never npm, in acme: npm install breaks the pnpm lockfile."
    asked = "npm install fails here, which package manager should I use?"
    memory = await remember(service, correction)
    found = await service.search_hybrid(
        asked,
        min_similarity=service.cutoffs.recall_with_words,
        where=MemoryFilter(project="acme-api", with_general=True),
    )
    assert [hit.id for hit in found.hits] == [memory]
    assert (found.hits[0].similarity or 0.0) < service.cutoffs.recall

    assert correction in await prompt(app_url, asked)
