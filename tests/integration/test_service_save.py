"""MemoryService.save and .check: the write guard, restore-on-exact-match, redaction, bad input."""

from __future__ import annotations

import asyncio

import pytest

from server.core.errors import InvalidInput
from server.core.validation import content_hash
from server.service.memory import MemoryService
from tests.held_inserts import with_inserts_held
from tests.integration.save_texts import DECISION, NEAR_COPY

RELATED = "For the orders API we chose cursor pagination over offsets."
UNRELATED = "The user prefers pnpm over npm in this repository."


async def rows(service: MemoryService, sql: str) -> list[tuple[object, ...]]:
    async with service.pool.connection() as conn:
        cur = await conn.execute(sql)  # type: ignore[arg-type]
        return await cur.fetchall()


async def test_save_stores_content_vector_and_fields(service: MemoryService) -> None:
    outcome = await service.save(
        DECISION, tags=["api", "pagination", "api"], source="claude-code", project="shop"
    )

    assert outcome.status == "saved"
    assert outcome.memory.tags == ["api", "pagination"]
    stored = await rows(
        service,
        "SELECT content, content_hash, kind, project, vector_dims(embedding), deleted_at"
        " FROM memories",
    )
    assert stored == [(DECISION, content_hash(DECISION), "manual", "shop", 384, None)]


async def test_save_reports_exact_copy_as_duplicate_without_new_row(
    service: MemoryService,
) -> None:
    first = await service.save(DECISION)

    second = await service.save("  " + DECISION + "\n")

    assert second.status == "duplicate"
    assert second.id == first.id
    assert second.similar is not None and second.similar.similarity == 1.0
    assert await rows(service, "SELECT count(*) FROM memories") == [(1,)]


async def test_save_is_noop_for_near_duplicate(service: MemoryService) -> None:
    first = await service.save(DECISION)

    outcome = await service.save(NEAR_COPY)

    assert outcome.status == "noop"
    assert outcome.id == first.id
    assert outcome.similar is not None
    assert outcome.similar.similarity >= service.settings.guard_noop_threshold
    assert await rows(service, "SELECT count(*) FROM memories") == [(1,)]


async def test_save_with_force_keeps_near_duplicate(service: MemoryService) -> None:
    await service.save(DECISION)

    outcome = await service.save(NEAR_COPY, force=True)

    assert outcome.status == "saved"
    assert await rows(service, "SELECT count(*) FROM memories") == [(2,)]


async def test_save_keeps_related_but_distinct_memory(service: MemoryService) -> None:
    await service.save(DECISION)

    outcome = await service.save(RELATED)

    assert outcome.status == "saved"
    assert await rows(service, "SELECT count(*) FROM memories") == [(2,)]


async def test_save_restores_soft_deleted_exact_match(service: MemoryService) -> None:
    first = await service.save(DECISION, tags=["original"])
    await service.soft_delete(first.id)

    outcome = await service.save(DECISION, tags=["other"])

    assert outcome.status == "restored"
    assert outcome.id == first.id
    assert outcome.memory.deleted_at is None
    assert await rows(service, "SELECT id, tags, deleted_at FROM memories") == [
        (first.id, ["original"], None)
    ]


async def test_near_duplicate_of_deleted_memory_is_saved(service: MemoryService) -> None:
    first = await service.save(DECISION)
    await service.soft_delete(first.id)

    outcome = await service.save(NEAR_COPY)

    assert outcome.status == "saved"


async def test_save_redacts_secrets_before_storing(service: MemoryService) -> None:
    token = "ghp_" + "a1B2" * 9
    outcome = await service.save(f"Deploy with GITHUB_TOKEN {token} and password=hunter2xyz")

    assert outcome.redacted == 2
    [(stored,)] = await rows(service, "SELECT content FROM memories")
    assert token not in str(stored)
    assert "hunter2xyz" not in str(stored)
    assert "[REDACTED:" in str(stored)


async def test_identical_secrets_redact_to_one_memory(service: MemoryService) -> None:
    first = await service.save("api key sk-ant-" + "x" * 40 + " is in the vault")
    second = await service.save("api key sk-ant-" + "y" * 40 + " is in the vault")

    assert second.status == "duplicate"
    assert second.id == first.id


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "content is empty"),
        ("   \n\t ", "content is empty"),
        ("x" * 100_001, "limit is 100,000"),
    ],
    ids=["empty", "whitespace", "too-long"],
)
async def test_save_rejects_unusable_content_without_writing(
    service: MemoryService, content: str, message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        await service.save(content)

    assert await rows(service, "SELECT count(*) FROM memories") == [(0,)]


async def test_save_rejects_unknown_kind(service: MemoryService) -> None:
    with pytest.raises(InvalidInput, match="kind must be one of"):
        await service.save(DECISION, kind="gossip")


async def test_concurrent_saves_of_same_content_store_one_row(service: MemoryService) -> None:
    outcomes = await asyncio.gather(*(service.save(DECISION) for _ in range(6)))

    assert sorted(o.status for o in outcomes).count("saved") == 1
    assert {o.id for o in outcomes} == {outcomes[0].id}
    assert await rows(service, "SELECT count(*) FROM memories") == [(1,)]


async def test_near_copies_saved_at_once_store_one_row(service: MemoryService) -> None:
    # Both saves embed and look for a near copy while their inserts are held: without a lock
    # around the look and the insert, each finds nothing and both are stored.
    outcomes = await with_inserts_held(service, [service.save(DECISION), service.save(NEAR_COPY)])

    assert sorted(o.status for o in outcomes) == ["noop", "saved"]
    assert {o.id for o in outcomes} == {next(o.id for o in outcomes if o.status == "saved")}
    assert await rows(service, "SELECT count(*) FROM memories") == [(1,)]


async def test_check_says_add_for_new_information(service: MemoryService) -> None:
    await service.save(DECISION)

    result = await service.check(UNRELATED)

    assert result.action == "ADD"
    assert result.similarity is not None
    assert result.similarity < service.settings.guard_update_threshold


async def test_check_says_update_for_close_match(service: MemoryService) -> None:
    saved = await service.save(DECISION)

    result = await service.check(RELATED)

    assert result.action == "UPDATE"
    assert result.target_id == saved.id
    assert result.similarity is not None
    assert (
        service.settings.guard_update_threshold
        <= result.similarity
        < service.settings.guard_noop_threshold
    )


async def test_check_says_noop_for_near_duplicate_and_writes_nothing(
    service: MemoryService,
) -> None:
    saved = await service.save(DECISION)

    result = await service.check(NEAR_COPY)

    assert result.action == "NOOP"
    assert result.target_id == saved.id
    assert await rows(service, "SELECT count(*) FROM memories") == [(1,)]


async def test_check_on_empty_database_says_add(service: MemoryService) -> None:
    result = await service.check(DECISION)

    assert result.action == "ADD"
    assert result.target_id is None


async def test_guard_thresholds_come_from_settings(service: MemoryService) -> None:
    from dataclasses import replace

    strict = MemoryService(
        service.pool, service.embedder, replace(service.settings, guard_noop_threshold=0.999)
    )
    await strict.save(DECISION)

    outcome = await strict.save(NEAR_COPY)

    assert outcome.status == "saved"
