"""Supersession end to end: the real database, the real model, saves, imports and the backfill.

A fact changed twice returns its newest version first for a question about the present and an
older one for a question about the past; a save that restates a fact links nothing; a link can
be set and cleared by hand but never form a cycle; the backfill of a store saved before links
existed links the same pairs as live saves do.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
from pgvector.psycopg import register_vector_async

from server.core.errors import InvalidInput
from server.core.validation import content_hash
from server.db.migrate import MIGRATIONS_DIR, apply_migrations
from server.service.memory import MemoryService
from server.service.supersessions import backfill
from server.store.tx import Pool, transaction
from tests.integration.processes import run_cli

START = datetime(2026, 5, 1, 9, tzinfo=UTC)

NODE = [
    "The minimum Node version for the build is 18.",
    "We bumped the minimum Node version for the build to 20.",
    "The minimum Node version for the build is now 22.",
]
OTHERS = [
    "The API listens on port 8080 in development.",
    "Webhook deliveries retry 5 times with exponential backoff.",
    "Use pnpm for installs in this repository.",
    "The staging database is refreshed from production every Sunday night.",
]


async def _save_history(service: MemoryService) -> dict[str, int]:
    ids: dict[str, int] = {}
    for day, text in enumerate(OTHERS):
        outcome = await service.save(text, project="acme", created_at=START + timedelta(days=day))
        ids[text] = outcome.id
    for step, text in enumerate(NODE):
        outcome = await service.save(
            text, project="acme", created_at=START + timedelta(days=10 * (step + 1))
        )
        assert outcome.status == "saved", outcome
        ids[f"node{step}"] = outcome.id
    return ids


async def _links(pool: Pool) -> set[tuple[int, int]]:
    async with transaction(pool) as conn:
        cur = await conn.execute("SELECT id, supersedes FROM memories WHERE supersedes IS NOT NULL")
        return {(int(a), int(b)) for a, b in await cur.fetchall()}


async def test_a_fact_changed_twice_forms_a_chain_of_versions(service: MemoryService) -> None:
    ids = await _save_history(service)

    first, second, third = [await service.get(ids[f"node{i}"]) for i in range(3)]

    assert second.supersedes == first.id and third.supersedes == second.id
    assert first.superseded_by == second.id and second.superseded_by == third.id
    assert third.superseded_by is None
    assert "18 -> 20" in second.supersede_reason
    assert (await _links(service.pool)) == {(second.id, first.id), (third.id, second.id)}


async def test_the_present_gets_the_newest_version_and_the_past_an_older_one(
    service: MemoryService,
) -> None:
    ids = await _save_history(service)

    now = await service.search_hybrid("which Node version does the build need?", limit=5)
    before = await service.search_hybrid(
        "what was the minimum Node version before we bumped it to 22?", limit=5
    )
    originally = await service.search_hybrid("what was the minimum Node version originally?")

    assert now.hits[0].id == ids["node2"]
    node_hits = [h.id for h in now.hits if h.id in {ids["node0"], ids["node1"], ids["node2"]}]
    assert node_hits[0] == ids["node2"]  # both older versions stay in the list, below it
    assert before.hits[0].id == ids["node1"]
    assert before.hits[0].superseded_by == ids["node2"]
    assert originally.hits[0].id == ids["node0"]


async def test_a_question_dated_by_an_event_gets_the_version_current_then(
    service: MemoryService,
) -> None:
    """Versions on 11, 21 and 31 May; an outage told of on the 16th, an audit on the 26th."""
    ids = await _save_history(service)
    outage = await service.save(
        "The CI outage: the shared runners were down for six hours and no build ran.",
        project="acme",
        created_at=START + timedelta(days=15),
    )
    audit = await service.save(
        "The security audit of our release process asked for signed container images.",
        project="acme",
        created_at=START + timedelta(days=25),
    )

    question = "What minimum Node version did the build have before {}?"
    before_outage = await service.search_hybrid(question.format("the CI outage"), limit=5)
    before_audit = await service.search_hybrid(question.format("the security audit"), limit=5)
    unknown = await service.search_hybrid(question.format("the office move to Leeds"), limit=5)

    assert before_outage.hits[0].id == ids["node0"]
    assert before_audit.hits[0].id == ids["node1"]
    assert before_audit.hits[0].version_note == "the version current on 2026-05-26"
    assert before_audit.hits[0].time_note is not None
    assert f"#{audit.id}" in before_audit.hits[0].time_note
    assert f"#{outage.id}" in (before_outage.hits[0].time_note or "")
    # An event no memory tells of dates nothing: the question is read as it stands.
    assert all(hit.time_note is None for hit in unknown.hits)
    assert unknown.hits[0].id == ids["node2"]


HANDBOOK = """acme-api handbook, as of 1 May

- Runtime: Node.js 20 or newer, Fastify 4, PostgreSQL 16.
- Webhook deliveries: `WEBHOOK_MAX_ATTEMPTS=8`, exponential backoff from 30 s.
- Pull requests target `main`; squash merges only.
- The acquirer client times out after `ACQUIRER_TIMEOUT_MS=30000`.
- Logs are JSON lines with a request id; never log a card number.
"""


async def test_a_newer_memory_changing_one_line_of_a_handbook_comes_first(
    service: MemoryService,
) -> None:
    """No link joins a dozen-fact handbook and the turn that changed one of its lines; a
    question about that line still gets the turn first, and other lines the handbook."""
    handbook = await service.save(HANDBOOK, project="acme", created_at=START)
    turn = await service.save(
        "Webhook deliveries: `WEBHOOK_MAX_ATTEMPTS=3` now, exponential backoff from 30 s.",
        project="acme",
        created_at=START + timedelta(days=20),
    )
    assert turn.memory is not None and turn.memory.supersedes is None

    question = "On Node with Fastify and PostgreSQL, what is WEBHOOK_MAX_ATTEMPTS for webhooks?"
    unordered = await service.search_hybrid(question, use_prior=False)
    retries = await service.search_hybrid(question)
    branch = await service.search_hybrid("Which branch do pull requests target?")

    assert unordered.hits[0].id == handbook.id  # what the similarity alone puts first
    assert [h.id for h in retries.hits[:2]] == [turn.id, handbook.id]
    assert retries.hits[0].version_note == f"states a newer value than #{handbook.id}"
    assert branch.hits[0].id == handbook.id


async def test_restating_a_fact_links_nothing(service: MemoryService) -> None:
    ids = await _save_history(service)

    again = await service.save(
        "The build needs Node 22 at least; CI uses the same version.",
        project="acme",
        created_at=START + timedelta(days=40),
    )

    assert again.status == "saved"
    assert again.memory is not None and again.memory.supersedes is None
    assert (await service.get(ids["node2"])).superseded_by is None


async def test_a_near_copy_with_a_changed_value_is_saved_not_a_noop(
    service: MemoryService,
) -> None:
    first = await service.save("Session tokens expire after 24 hours.", project="acme")
    second = await service.save("Session tokens expire after 12 hours.", project="acme")

    assert second.status == "saved"
    assert second.memory is not None and second.memory.supersedes == first.id


async def test_another_project_is_never_superseded(service: MemoryService) -> None:
    await service.save("The minimum Node version for the build is 18.", project="acme")
    other = await service.save("The minimum Node version for the build is 22.", project="shop")

    assert other.memory is not None and other.memory.supersedes is None


async def test_a_link_set_by_hand_shows_both_ways_and_cannot_form_a_cycle(
    service: MemoryService,
) -> None:
    older = await service.save("Releases are cut from the develop branch.", project="acme")
    newer = await service.save("Ship hotfixes straight from a tag.", project="acme")

    outcome = await service.update(newer.id, supersedes=older.id)

    assert outcome.memory.supersedes == older.id
    assert outcome.memory.supersede_reason == "set by hand"
    assert (await service.get(older.id)).superseded_by == newer.id
    with pytest.raises(InvalidInput, match="cycle"):
        await service.update(older.id, supersedes=newer.id)
    with pytest.raises(InvalidInput, match="itself"):
        await service.update(newer.id, supersedes=newer.id)


async def test_a_cleared_link_is_not_made_again_by_the_backfill(service: MemoryService) -> None:
    ids = await _save_history(service)
    await service.update(ids["node1"], supersedes=0)
    await _forget_links_but(service.pool, keep_rejections=True)

    await backfill(service.pool)

    assert (await service.get(ids["node1"])).supersedes is None
    assert (ids["node1"], ids["node0"]) not in await _links(service.pool)


async def test_the_backfill_links_what_live_saves_link(service: MemoryService) -> None:
    await _save_history(service)
    await service.save(
        "Moved the Terraform state lock from DynamoDB to a lockfile.",
        project="acme",
        created_at=START + timedelta(days=50),
    )
    live = await _links(service.pool)
    assert len(live) >= 2
    await _forget_links_but(service.pool, keep_rejections=False)
    assert await _links(service.pool) == set()

    made = await backfill(service.pool, batch_size=3)  # several batches, each committed

    assert made == len(live)
    assert await _links(service.pool) == live
    assert await backfill(service.pool) == 0  # done: a second run has nothing left


async def test_an_interrupted_backfill_goes_on_where_it_stopped(service: MemoryService) -> None:
    ids = await _save_history(service)
    live = await _links(service.pool)
    stopped_at = ids["node1"]  # a run committed its batches up to node1, then died
    async with transaction(service.pool) as conn:
        await conn.execute(
            "UPDATE memories SET supersedes = NULL WHERE id > %(id)s", {"id": stopped_at}
        )
        await conn.execute(
            "UPDATE supersession_backfill SET done_id = %(id)s,"
            " up_to_id = (SELECT max(id) FROM memories)",
            {"id": stopped_at},
        )
    assert (ids["node2"], ids["node1"]) not in await _links(service.pool)

    assert await backfill(service.pool) == 1

    assert await _links(service.pool) == live


async def _forget_links_but(pool: Pool, *, keep_rejections: bool) -> None:
    """Make the store look as if it was saved before migration 008, then due for the backfill."""
    async with transaction(pool) as conn:
        await conn.execute(
            "UPDATE memories SET supersedes = NULL, supersede_reason = ''"
            + ("" if keep_rejections else ", supersede_rejected = '{}'")
        )
        await conn.execute(
            "UPDATE supersession_backfill"
            " SET up_to_id = (SELECT coalesce(max(id), 0) FROM memories), done_id = 0"
        )


async def test_migrating_a_store_saved_before_links_existed_links_what_live_saves_link(
    service: MemoryService, fresh_database: Callable[[], str], tmp_path: Path
) -> None:
    """A database at migration 007 with memories in it, then `claude-memory migrate`."""
    texts = [*OTHERS, *NODE]
    times = [START + timedelta(days=day) for day in range(len(OTHERS))]
    times += [START + timedelta(days=10 * (step + 1)) for step in range(len(NODE))]
    for text, at in zip(texts, times, strict=True):
        await service.save(text, project="acme", created_at=at)
    live = await _links_by_content(service.pool)
    assert len(live) == 2

    old_migrations = tmp_path / "migrations"
    old_migrations.mkdir()
    for path in sorted(MIGRATIONS_DIR.glob("00[1-7]_*.sql")):
        shutil.copy(path, old_migrations / path.name)
    url = fresh_database()
    await apply_migrations(url, old_migrations)
    vectors = service.embedder.embed_documents(texts)
    async with await psycopg.AsyncConnection.connect(url) as conn:
        await register_vector_async(conn)
        for text, at, vector in zip(texts, times, vectors, strict=True):
            await conn.execute(
                "INSERT INTO memories (content, content_hash, project, created_at, embedding)"
                " VALUES (%s, %s, 'acme', %s, %s)",
                (text, content_hash(text), at, vector.vector),
            )

    migrated = await asyncio.to_thread(run_cli, "migrate", env={"CLAUDE_MEMORY_DATABASE_URL": url})

    assert migrated.returncode == 0, migrated.stderr
    report = json.loads(migrated.stdout)
    assert report["applied"][0] == "008_supersession_links.sql"  # then any later migrations
    assert report["supersession_links_backfilled"] == len(live)
    async with await psycopg.AsyncConnection.connect(url) as conn:
        cur = await conn.execute(
            "SELECT n.content, o.content FROM memories n JOIN memories o ON o.id = n.supersedes"
        )
        assert {(str(a), str(b)) for a, b in await cur.fetchall()} == live


async def _links_by_content(pool: Pool) -> set[tuple[str, str]]:
    async with transaction(pool) as conn:
        cur = await conn.execute(
            "SELECT n.content, o.content FROM memories n JOIN memories o ON o.id = n.supersedes"
        )
        return {(str(a), str(b)) for a, b in await cur.fetchall()}
