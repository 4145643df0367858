"""What hybrid ranking uses beyond the two lists, each on cases written for it (real database,
real model): score fusion that keeps a clear winner first, questions ranked below their
answers, the developer vocabulary, and a date attached to a change.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from server.core.config import ConfigError, load_settings
from server.core.models.memories import MemoryFilter
from server.domain.vocabulary import Vocabulary, load_vocabulary
from server.service.memory import MemoryService
from server.service.search import Searcher

PROJECT = "ledgerline"
PATH = "/home/dev/ledgerline"


# Other topics of the project, so the words of each test's question are not in most memories
# (a word in more than a quarter of them is dropped from keyword queries like a stop word).
OTHER_TOPICS = [
    "ledgerline uses PostgreSQL 16 with one schema per tenant.",
    "The invoice PDF renderer runs in a separate container.",
    "Feature flags live in the flags table and are cached for a minute.",
    "The admin UI is a React app built with Vite.",
    "Nightly backups go to an encrypted bucket in Frankfurt.",
    "Currency amounts are stored as integer cents.",
    "The public API is versioned in the URL path, /v1 and /v2.",
    "Tenants are created through the onboarding wizard.",
    "The release train leaves every second Tuesday.",
    "Emails are sent through the notification service.",
    "Exports to CSV are limited to 50,000 rows.",
    "The staging database is refreshed from an anonymised snapshot weekly.",
]


async def other_topics(service: MemoryService) -> None:
    for number, text in enumerate(OTHER_TOPICS, start=1):
        await remember(service, text, "note", day(number, 1))


async def remember(
    service: MemoryService,
    content: str,
    kind: str,
    at: datetime,
    session: str | None = None,
    project: str = PROJECT,
) -> int:
    outcome = await service.save(
        content,
        project=project,
        project_path=PATH if project == PROJECT else "",
        kind=kind,
        created_at=at,
        session_id=session,
        role="user" if kind == "raw" else None,
        force=True,
    )
    return outcome.id


async def reply(service: MemoryService, content: str, at: datetime, session: str) -> int:
    """The agent's turn in a session of the project: the id."""
    outcome = await service.save(
        content,
        project=PROJECT,
        project_path=PATH,
        kind="raw",
        role="assistant",
        session_id=session,
        created_at=at,
        force=True,
    )
    return outcome.id


async def linked_turns(
    service: MemoryService, older: tuple[str, int], newer: tuple[str, int]
) -> tuple[int, int]:
    """Two turns of the project (text, day of March), each its own session, the newer one
    superseding the older: the ids (older, newer)."""
    ids = [
        await remember(service, text, "raw", day(number), session=f"s-linked-{number}")
        for text, number in (older, newer)
    ]
    await service.update(ids[1], supersedes=ids[0])
    return ids[0], ids[1]


def day(number: int, month: int = 3) -> datetime:
    return datetime(2026, month, number, 10, 0, tzinfo=UTC)


async def test_a_turn_first_in_both_lists_stays_first_above_notes(service: MemoryService) -> None:
    await other_topics(service)
    # A user's turn is first by meaning and by words; saved handbook lines (which the kind
    # weight favours over raw turns) come second and third in both lists. Rank fusion gave
    # them nearly the same fused score, and the kind weight then put a saved line first.
    answer = await remember(
        service,
        "no loguru in ledgerline. the billing worker logs through structlog, configured in"
        " app/logging.py; ask me before adding any logging library.",
        "raw",
        day(2),
        session="s-logging",
    )
    for number, text in enumerate(
        [
            "ledgerline handbook: the billing worker runs every five minutes and writes its"
            " progress to the worker log.",
            "ledgerline handbook: log lines carry the request id; the worker's logging level is"
            " set in the environment.",
            "ledgerline handbook: libraries are pinned in requirements.txt and updated monthly.",
        ],
        start=10,
    ):
        await remember(service, text, "manual", day(number))

    query = "can I use loguru for logging in the billing worker?"
    where = MemoryFilter(project=PROJECT)
    semantic = await service.search_semantic(query, where=where, use_prior=False)
    keyword = await service.search_keyword(query, where=where, use_prior=False)
    result = await service.search_hybrid(query, where=where)

    # The premise: first in both lists, and a saved line second in both.
    assert semantic.hits[0].id == keyword.hits[0].id == answer
    assert semantic.hits[1].kind == keyword.hits[1].kind == "manual"
    assert result.hits[0].id == answer


async def test_a_question_turn_ranks_below_the_turn_that_answers_it(
    service: MemoryService,
) -> None:
    asked = await remember(
        service,
        "The staging deploy is stuck on 'deploy lock held by another run' since the runner"
        " crashed. How do I clear the deploy lock safely?",
        "raw",
        day(4),
        session="s-lock",
    )
    answer = await reply(
        service,
        "Clear the stuck lock with `ledgerctl deploy unlock --env staging` once nothing is"
        " deploying: the crashed runner left it behind.",
        day(4).replace(minute=1),
        session="s-lock",
    )

    query, where = "how do I clear a stuck deploy lock?", MemoryFilter(project=PROJECT)
    prior = service.searcher.prior
    unweighted = Searcher(
        service.pool, service.embedder, replace(prior, question_weight=1.0), Vocabulary()
    )

    weighted = (await service.search_hybrid(query, where=where)).hits
    plain = (
        await unweighted.hybrid(query, where, limit=10, keyword_weight=0.5, semantic_weight=0.5)
    ).hits
    weighted_score = {hit.id: hit.score for hit in weighted}
    plain_score = {hit.id: hit.score for hit in plain}

    assert prior.question_weight < 1.0
    # Scores are rounded to 6 decimals: the product of a rounded score differs by up to 1e-6.
    assert weighted_score[asked] == pytest.approx(
        plain_score[asked] * prior.question_weight, abs=2e-6
    )
    assert weighted_score[answer] == pytest.approx(plain_score[answer], abs=2e-6)
    ranked = [hit.id for hit in weighted]
    assert ranked.index(answer) < ranked.index(asked)


async def test_a_users_turn_that_asks_mid_way_ranks_below_the_reply_that_answers_it(
    service: MemoryService,
) -> None:
    asked = await remember(
        service,
        "ok, and what does the staging cache run on these days? I need it for the upgrade"
        " ticket, the template wants the exact version.",
        "raw",
        day(6),
        session="s-redis",
    )
    answer = await reply(
        service,
        "The staging cache runs Redis 7.2.4 (the `redis:7.2.4-alpine` image in"
        " deploy/staging/cache.yaml); production runs the same version.",
        day(6).replace(minute=1),
        session="s-redis",
    )

    hits = (
        await service.search_hybrid(
            "what does the staging cache run on?", where=MemoryFilter(project=PROJECT)
        )
    ).hits

    ranked = [hit.id for hit in hits]
    assert ranked.index(answer) < ranked.index(asked)


async def test_the_vocabulary_finds_jargon_asked_in_plain_words(service: MemoryService) -> None:
    jargon = await remember(
        service,
        "The DLQ of the payout consumer is drained by replay-worker nightly.",
        "note",
        day(5),
    )
    await remember(
        service, "The payout consumer retries a failed payout three times.", "note", day(6)
    )

    plain = await service.search_keyword(
        "who empties the dead letter queue?", where=MemoryFilter(project=PROJECT)
    )
    hybrid = await service.search_hybrid(
        "who empties the dead letter queue?", where=MemoryFilter(project=PROJECT)
    )

    assert [hit.id for hit in plain.hits] == [jargon]
    assert hybrid.hits[0].id == jargon


async def test_a_users_vocabulary_file_adds_forms(service: MemoryService, tmp_path: Path) -> None:
    own = tmp_path / "vocabulary.txt"
    own.write_text("BFF = backend for frontend\n", encoding="utf-8")
    note = await remember(
        service, "The BFF caches the pricing page for 30 seconds.", "note", day(7)
    )
    searcher = Searcher(
        service.pool, service.embedder, service.searcher.prior, load_vocabulary(own)
    )

    with_file = await searcher.keyword(
        "who owns the backend for frontend?", MemoryFilter(project=PROJECT), limit=5
    )
    without = await service.search_keyword(
        "who owns the backend for frontend?", where=MemoryFilter(project=PROJECT)
    )

    assert note in [hit.id for hit in with_file.hits]
    assert note not in [hit.id for hit in without.hits]


def test_a_missing_vocabulary_file_is_named_at_start(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="CLAUDE_MEMORY_SEARCH_VOCABULARY_FILE: no such file"):
        load_settings(
            {"CLAUDE_MEMORY_SEARCH_VOCABULARY_FILE": str(tmp_path / "nope.txt")}, config_file=None
        )


async def test_before_a_dated_change_asks_for_the_state_before_it(service: MemoryService) -> None:
    project = "harbor-ops"
    before = await remember(
        service,
        "harbor-ops deploys with Capistrano from the ops laptop.",
        "note",
        day(10, 2),
        project=project,
    )
    change = await remember(
        service,
        "Switched harbor-ops deploys from Capistrano to Kamal, run from CI.",
        "note",
        day(12, 3),
        project=project,
    )
    await remember(
        service,
        "A Kamal deploy of harbor-ops takes about four minutes.",
        "note",
        day(8, 4),
        project=project,
    )

    result = await service.search_hybrid(
        "which deploy tool did we use before we switched in March?",
        where=MemoryFilter(project=project),
    )

    assert result.hits[0].id == before
    assert change in [hit.id for hit in result.hits]
    assert result.hits[0].time_note is not None
    assert "before we switched in March" in result.hits[0].time_note


async def test_a_newer_statement_of_a_value_comes_above_an_older_one_without_a_link(
    service: MemoryService,
) -> None:
    await other_topics(service)
    handbook = await remember(
        service,
        "ledgerline handbook, March: invoice PDFs are kept in the render cache for 300 seconds;"
        " the cache lives in Redis next to the session store.",
        "note",
        day(1),
    )
    later = await remember(
        service,
        "Raised it: rendered invoice PDFs now stay cached for 900 seconds, because the mobile"
        " app re-opens the same invoice several times.",
        "raw",
        day(20),
        session="s-cache",
    )
    where = MemoryFilter(project=PROJECT)

    now = await service.search_hybrid("how long are rendered invoice PDFs cached?", where=where)
    plain = await service.search_hybrid(
        "how long are rendered invoice PDFs cached?", where=where, use_prior=False
    )

    assert now.hits[0].supersedes is None and now.hits[0].superseded_by is None  # no link
    assert [h.id for h in plain.hits[:2]] == [handbook, later]  # the handbook leads on score
    assert [h.id for h in now.hits[:2]] == [later, handbook]
    assert now.hits[0].version_note == f"newer, about the same as #{handbook}"


async def test_an_earlier_statement_of_a_value_comes_first_for_a_question_about_the_past(
    service: MemoryService,
) -> None:
    await other_topics(service)
    first = await remember(
        service,
        "Wired up exports: the job runs every 6 hours and writes statements as CSV into the"
        " reports bucket.",
        "raw",
        day(2),
        session="s-export-1",
    )
    later = await remember(
        service,
        "The statement export job fell behind the dashboards, so from today the statement"
        " export job runs every hour (`15 * * * *`); its CSV files still land in the reports"
        " bucket.",
        "raw",
        day(18),
        session="s-export-2",
    )
    where = MemoryFilter(project=PROJECT)
    question = "how often did the statement export job run originally?"

    past = await service.search_hybrid(question, where=where)
    plain = await service.search_hybrid(question, where=where, use_prior=False)
    now = await service.search_hybrid("how often does the statement export job run?", where=where)

    assert past.hits[0].supersedes is None and past.hits[0].superseded_by is None  # no link
    assert [h.id for h in plain.hits[:2]] == [later, first]  # the change leads on score
    assert [h.id for h in past.hits[:2]] == [first, later]
    assert past.hits[0].version_note == f"earlier, about the same as #{later}"
    assert now.hits[0].id == later  # asked about the present, the newer one stays first


async def test_before_an_event_ends_where_the_session_that_tells_of_it_began(
    service: MemoryService,
) -> None:
    await other_topics(service)
    before = await remember(
        service,
        "The invoice renderer runs a pool of 4 render workers, one per core.",
        "note",
        day(2),
    )
    session = "s-month-end"
    opened = datetime(2026, 3, 20, 10, 0, tzinfo=UTC)
    await remember(
        service,
        "Invoice rendering crawls on the last day of each month; look at the render workers.",
        "raw",
        opened,
        session=session,
    )
    during = await remember(
        service,
        "The render worker pool has 4 workers and each invoice takes 2 s; with 8 render workers"
        " the queue would drain in half the time.",
        "raw",
        opened.replace(minute=5),
        session=session,
    )
    event = await remember(
        service,
        "The month-end slowdown fix: go with 8 render workers and ship it today.",
        "raw",
        opened.replace(minute=10),
        session=session,
    )

    result = await service.search_hybrid(
        "how many render workers did we have before the month-end slowdown fix?",
        where=MemoryFilter(project=PROJECT),
    )

    assert result.hits[0].id == before
    assert f"#{event}" in (result.hits[0].time_note or "")
    # The session's own earlier turns are part of the change, not the state before it.
    assert next(h for h in result.hits if h.id == during).time_note is None


async def test_a_link_does_not_lift_a_version_about_another_fact_of_the_memory(
    service: MemoryService,
) -> None:
    await other_topics(service)
    report, bump = await linked_turns(
        service,
        (
            "Changes on perf/billing-latency:\n"
            "- Pool: the billing worker's database pool now holds 24 connections.\n"
            "- Batching: invoices are rendered in batches of 50.\n"
            "- Scaling: the worker deployment keeps 2 replicas at minimum.",
            5,
        ),
        ("Keep 3 replicas of the billing worker at minimum from now on; 2 is not enough.", 6),
    )
    where = MemoryFilter(project=PROJECT)

    pool = await service.search_hybrid(
        "how many connections does the billing pool hold?", where=where
    )
    scaling = await service.search_hybrid(
        "how many billing worker replicas run at minimum?", where=where
    )

    # The question about the pool is not asked of the bump: the report keeps its place.
    assert pool.hits[0].id == report
    # The question about the replicas is: the bump comes first, the report after it.
    assert [h.id for h in scaling.hits[:2]] == [bump, report]


async def test_an_event_is_dated_by_the_session_it_happened_in_not_a_later_note(
    service: MemoryService,
) -> None:
    project = "quayline"

    async def say(text: str, at: datetime, kind: str = "raw", session: str | None = None) -> int:
        return await remember(service, text, kind, at, session=session, project=project)

    before = await say("The quayline importer runs with 4 worker threads.", day(2), session="s1")
    asked = await say(
        "Imports are too slow: speed up the importer, use 16 worker threads.", day(10), session="s2"
    )
    done = await say(
        "Done: the importer now runs with 16 worker threads.",
        day(10).replace(hour=11),
        session="s2",
    )
    # Written later, about the speed-up: closer to the event's words than the session itself.
    await say(
        "quayline runbook: the importer speed-up. Since the importer speed-up the importer runs"
        " 16 worker threads.",
        day(20),
        kind="note",
    )

    result = await service.search_hybrid(
        "how many worker threads did the importer run before the importer speed-up?",
        where=MemoryFilter(project=project),
    )

    ids = [hit.id for hit in result.hits]
    hit = result.hits[ids.index(before)]
    # Dated by the turn that asked for the speed-up, not by the runbook written ten days later
    # (whose period would hold the speed-up's own turns).
    assert hit.time_note == (
        f"before the importer speed-up (#{asked}, 2026-03-10), the time the question names"
    )
    assert ids.index(before) < min(ids.index(asked), ids.index(done))


async def test_a_note_chunk_does_not_outrank_a_later_turn_by_its_kind(
    service: MemoryService,
) -> None:
    await other_topics(service)
    handbook = await remember(
        service,
        "ledgerline handbook: release announcements go in the #releases channel.",
        "note",
        day(3),
    )
    turn = await remember(
        service,
        "From now on release announcements go to the #platform channel.",
        "raw",
        day(25),
        session="s-announce",
    )
    where = MemoryFilter(project=PROJECT)
    question = "which channel do release announcements go to?"

    plain = await service.search_hybrid(question, where=where, use_prior=False)
    ranked = await service.search_hybrid(question, where=where)

    # The premise: the two score within a few percent of each other, unlinked.
    assert [h.id for h in plain.hits[:2]] == [turn, handbook]
    assert plain.hits[1].score > 0.9 * plain.hits[0].score
    assert ranked.hits[0].supersedes is None and ranked.hits[0].superseded_by is None
    # A chunk of an imported note is raw material like a turn: it gains nothing by its kind
    # (at 1.0 against the turn's 0.9 the March handbook came first).
    assert [h.id for h in ranked.hits[:2]] == [turn, handbook]


async def test_the_very_first_asks_for_the_first_version(service: MemoryService) -> None:
    await other_topics(service)
    first, later = await linked_turns(
        service,
        ("Jobs for the importer come from a Redis list, importer-jobs.", 2),
        (
            "The invoice importer now reads its jobs from the SQS queue importer-jobs-v2"
            " instead of the Redis list.",
            20,
        ),
    )
    where = MemoryFilter(project=PROJECT)

    now = await service.search_hybrid(
        "where does the invoice importer read its jobs from?", where=where
    )
    then = await service.search_hybrid(
        "where did the very first invoice importer read its jobs from?", where=where
    )

    assert now.hits[0].id == later
    assert then.hits[0].id == first
    assert then.hits[0].version_note == f"the version before #{later}"


async def test_an_event_the_model_cannot_place_is_dated_by_the_first_turn_naming_it(
    service: MemoryService,
) -> None:
    """A one-word event ("the cutover") is too short for its vector to reach a turn, so it is
    dated by the first conversation turn holding its words."""
    project = "tallyhook"

    async def say(text: str, at: datetime, session: str) -> int:
        return await remember(service, text, "raw", at, session=session, project=project)

    await other_topics(service)
    before = await say("Failed webhooks are retried from the SQS queue tally-retries.", day(2), "1")
    cutover = await say(
        "Cutover is done: retries now run from the Redis stream tally:retries, SQS is drained.",
        day(12),
        "2",
    )
    await say("Failed webhooks are retried from the Redis stream tally:retries.", day(15), "3")
    where = MemoryFilter(project=project)
    # The premise: by meaning alone nothing is close enough to be the event.
    close = await service.search_semantic("the cutover", where=where, min_similarity=0.45)
    assert close.hits == []

    result = await service.search_hybrid(
        "which queue handled the webhook retries before the cutover?", where=where
    )

    assert result.hits[0].id == before
    assert result.hits[0].time_note == (
        f"before the cutover (#{cutover}, 2026-03-12), the time the question names"
    )


async def test_a_question_that_asks_why_favours_the_turn_that_gives_the_reason(
    service: MemoryService,
) -> None:
    await other_topics(service)
    symptom = await remember(
        service,
        "The invoice export job timed out again on the first of the month.",
        "raw",
        day(3),
        session="s-export",
    )
    reason = await remember(
        service,
        "The export times out because it loads every tenant's invoices into memory at once.",
        "raw",
        day(3).replace(minute=20),
        session="s-export",
    )
    question = "why did the invoice export job time out?"
    where = MemoryFilter(project=PROJECT)
    # The premise: on the two lists alone the symptom, in the question's own words, comes first
    # (fused 1.0 against 0.95).
    plain = await service.search_hybrid(question, where=where, use_prior=False)
    assert [h.id for h in plain.hits[:2]] == [symptom, reason]

    result = await service.search_hybrid(question, where=where)

    assert [h.id for h in result.hits[:2]] == [reason, symptom]


async def test_a_users_correction_minutes_later_comes_above_the_request_it_changes(
    service: MemoryService,
) -> None:
    await other_topics(service)
    session = "s-webhooks"
    at = day(4)
    request = await remember(
        service, "Set the webhook retry limit to 5 attempts.", "raw", at, session=session
    )
    correction = await remember(
        service,
        "No, 8 attempts for webhooks: the partner API flaps for minutes at a time.",
        "raw",
        at.replace(minute=3),
        session=session,
    )
    # Without a link between them, as most such pairs are on sessions the rules were not
    # written beside.
    await service.update(correction, supersedes=0)
    question = "what is the webhook retry limit?"
    where = MemoryFilter(project=PROJECT)
    plain = await service.search_hybrid(question, where=where, use_prior=False)
    assert [h.id for h in plain.hits[:2]] == [request, correction]

    result = await service.search_hybrid(question, where=where)

    assert [h.id for h in result.hits[:2]] == [correction, request]
    assert result.hits[0].version_note == f"newer, about the same as #{request}"


async def test_words_inside_a_package_name_count_as_the_prompts_words(
    service: MemoryService,
) -> None:
    # The word index keeps `@ledgerline/retry-queue` whole; prompt recall's words share reads
    # "retry" and "queue" in it, as a reader does.
    await other_topics(service)
    registered = await remember(
        service, "Registered `@ledgerline/retry-queue` for failed deliveries.", "note", day(20)
    )
    plain = await remember(service, "Failed deliveries are kept for a week.", "note", day(21))

    shares = (
        await service.recall_evidence("set up a retry queue", [registered, plain])
    ).term_shares

    assert shares[registered] > 0.5
    assert shares[plain] == 0.0
