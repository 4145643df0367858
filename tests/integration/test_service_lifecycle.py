"""MemoryService.get / update / soft_delete / restore / purge / bulk_soft_delete."""

from __future__ import annotations

import contextlib
import os

import pytest

from server.core.errors import Conflict, InvalidInput, NotFound
from server.core.validation import content_hash
from server.db.embedded import shared_buffers_mb
from server.service.memory import MemoryService
from server.store.tx import Pool
from tests.held_inserts import with_inserts_held
from tests.integration.save_texts import DECISION, NEAR_COPY

ROOT_CAUSE = "The flaky checkout test was caused by a shared Redis database between workers."
PNPM = "This repository uses pnpm, never npm; run pnpm install --frozen-lockfile in CI."


async def one(service: MemoryService, sql: str, params: dict[str, object]) -> tuple[object, ...]:
    async with service.pool.connection() as conn:
        cur = await conn.execute(sql, params)  # type: ignore[arg-type]
        row = await cur.fetchone()
        assert row is not None
        return row


async def vector_of(service: MemoryService, memory_id: int) -> str:
    row = await one(
        service, "SELECT embedding::text FROM memories WHERE id = %(id)s", {"id": memory_id}
    )
    return str(row[0])


async def test_get_returns_memory_including_deleted_at(service: MemoryService) -> None:
    saved = await service.save(DECISION)
    await service.soft_delete(saved.id)

    memory = await service.get(saved.id)

    assert memory.content == DECISION
    assert memory.deleted_at is not None


@pytest.mark.parametrize("bad_id", [0, -5])
async def test_get_rejects_non_positive_ids(service: MemoryService, bad_id: int) -> None:
    with pytest.raises(InvalidInput, match="positive whole number"):
        await service.get(bad_id)


async def test_get_unknown_id_is_not_found(service: MemoryService) -> None:
    with pytest.raises(NotFound, match="no memory with id 999"):
        await service.get(999)


async def test_update_content_re_embeds_and_rehashes(service: MemoryService) -> None:
    saved = await service.save(DECISION)
    before = await vector_of(service, saved.id)

    outcome = await service.update(saved.id, content=ROOT_CAUSE)

    assert outcome.status == "updated"
    assert outcome.memory.content == ROOT_CAUSE
    assert outcome.memory.content_hash == content_hash(ROOT_CAUSE)
    assert await vector_of(service, saved.id) != before


async def test_update_tags_only_keeps_vector(service: MemoryService) -> None:
    saved = await service.save(DECISION)
    before = await vector_of(service, saved.id)

    outcome = await service.update(saved.id, tags=["api"], project="shop", kind="note")

    assert outcome.status == "updated"
    assert (outcome.memory.tags, outcome.memory.project, outcome.memory.kind) == (
        ["api"],
        "shop",
        "note",
    )
    assert await vector_of(service, saved.id) == before


async def test_update_with_same_content_is_unchanged(service: MemoryService) -> None:
    saved = await service.save(DECISION)

    outcome = await service.update(saved.id, content=DECISION)

    assert outcome.status == "unchanged"


async def test_update_into_near_duplicate_of_other_memory_is_noop(
    service: MemoryService,
) -> None:
    target = await service.save(DECISION)
    other = await service.save(ROOT_CAUSE)

    outcome = await service.update(other.id, content=NEAR_COPY)

    assert outcome.status == "noop"
    assert outcome.similar is not None and outcome.similar.id == target.id
    assert (await service.get(other.id)).content == ROOT_CAUSE


async def test_a_save_and_an_update_into_near_copies_at_once_keep_one(
    service: MemoryService,
) -> None:
    # Both look for a near copy while their writes are held: without one lock around each
    # look and its write, neither finds the other and both are stored.
    other = await service.save(ROOT_CAUSE)

    saved, updated = await with_inserts_held(
        service, [service.save(DECISION), service.update(other.id, content=NEAR_COPY)]
    )

    assert sorted([saved.status, updated.status]) in (["noop", "saved"], ["noop", "updated"])
    contents = [m.content for m in (await service.list_memories(limit=10)).memories]
    assert sorted(contents) in (sorted([DECISION, ROOT_CAUSE]), sorted([NEAR_COPY]))


async def test_update_with_force_accepts_near_duplicate(service: MemoryService) -> None:
    await service.save(DECISION)
    other = await service.save(ROOT_CAUSE)

    outcome = await service.update(other.id, content=NEAR_COPY, force=True)

    assert outcome.status == "updated"
    assert (await service.get(other.id)).content == NEAR_COPY


async def test_update_into_exact_copy_of_other_memory_is_duplicate(
    service: MemoryService,
) -> None:
    target = await service.save(DECISION)
    other = await service.save(ROOT_CAUSE)

    outcome = await service.update(other.id, content=DECISION, force=True)

    assert outcome.status == "duplicate"
    assert outcome.similar is not None and outcome.similar.id == target.id
    assert (await service.get(other.id)).content == ROOT_CAUSE


async def test_update_of_deleted_memory_is_conflict(service: MemoryService) -> None:
    saved = await service.save(DECISION)
    await service.soft_delete(saved.id)

    with pytest.raises(Conflict, match=rf"call restore_memory\({saved.id}\) first"):
        await service.update(saved.id, content=ROOT_CAUSE)


async def test_update_redacts_new_content(service: MemoryService) -> None:
    saved = await service.save(DECISION)
    key = "AKIA" + "ABCDEFGHIJKLMNOP"

    outcome = await service.update(saved.id, content=f"The deploy key is {key} for staging.")

    assert outcome.redacted == 1
    assert key not in (await service.get(saved.id)).content


async def test_soft_delete_marks_row_and_keeps_it(service: MemoryService) -> None:
    saved = await service.save(DECISION)

    deleted = await service.soft_delete(saved.id)

    assert deleted.deleted_at is not None
    row = await one(
        service, "SELECT deleted_at IS NOT NULL FROM memories WHERE id = %(id)s", {"id": saved.id}
    )
    assert row == (True,)


async def test_soft_delete_twice_is_conflict(service: MemoryService) -> None:
    saved = await service.save(DECISION)
    await service.soft_delete(saved.id)

    with pytest.raises(Conflict, match="already deleted"):
        await service.soft_delete(saved.id)


async def test_restore_undoes_soft_delete(service: MemoryService) -> None:
    saved = await service.save(DECISION)
    await service.soft_delete(saved.id)

    restored = await service.restore(saved.id)

    assert restored.deleted_at is None


async def test_restore_of_live_memory_is_conflict(service: MemoryService) -> None:
    saved = await service.save(DECISION)

    with pytest.raises(Conflict, match="not deleted"):
        await service.restore(saved.id)


async def test_purge_refuses_live_memory(service: MemoryService) -> None:
    saved = await service.save(DECISION)

    with pytest.raises(Conflict, match=rf"call delete_memory\({saved.id}\) first"):
        await service.purge(saved.id)

    assert (await service.get(saved.id)).deleted_at is None


async def test_purge_removes_soft_deleted_memory(service: MemoryService) -> None:
    saved = await service.save(DECISION)
    await service.soft_delete(saved.id)

    await service.purge(saved.id)

    row = await one(service, "SELECT count(*) FROM memories WHERE id = %(id)s", {"id": saved.id})
    assert row == (0,)
    with pytest.raises(NotFound):
        await service.get(saved.id)


async def test_purged_content_can_be_saved_again(service: MemoryService) -> None:
    saved = await service.save(DECISION)
    await service.soft_delete(saved.id)
    await service.purge(saved.id)

    outcome = await service.save(DECISION)

    assert outcome.status == "saved"
    assert outcome.id != saved.id


async def test_bulk_delete_dry_run_counts_without_deleting(service: MemoryService) -> None:
    await service.save(DECISION, project="shop")
    await service.save(ROOT_CAUSE, project="shop")
    await service.save(PNPM, project="tools")

    result = await service.bulk_soft_delete(project="shop")

    assert (result.dry_run, result.matched, result.deleted) == (True, 2, 0)
    assert len(result.preview) == 2
    row = await one(service, "SELECT count(*) FROM memories WHERE deleted_at IS NULL", {})
    assert row == (3,)


async def test_bulk_delete_soft_deletes_exactly_the_matches(service: MemoryService) -> None:
    await service.save(DECISION, project="shop", tags=["api"])
    await service.save(ROOT_CAUSE, project="shop", tags=["tests"])
    await service.save(PNPM, project="tools", tags=["api"])

    result = await service.bulk_soft_delete(project="shop", tag="api", dry_run=False)

    assert (result.matched, result.deleted) == (1, 1)
    row = await one(
        service, "SELECT array_agg(content ORDER BY id) FROM memories WHERE deleted_at IS NULL", {}
    )
    assert row == ([ROOT_CAUSE, PNPM],)


async def test_bulk_delete_reports_real_count_when_some_already_deleted(
    service: MemoryService,
) -> None:
    first = await service.save(DECISION, source="import")
    await service.save(ROOT_CAUSE, source="import")
    await service.soft_delete(first.id)

    result = await service.bulk_soft_delete(source="import", dry_run=False)

    assert (result.matched, result.deleted) == (1, 1)


async def test_bulk_delete_requires_a_filter(service: MemoryService) -> None:
    await service.save(DECISION)

    with pytest.raises(InvalidInput, match="at least one of tag, project or source"):
        await service.bulk_soft_delete(project="  ", dry_run=False)

    row = await one(service, "SELECT count(*) FROM memories WHERE deleted_at IS NULL", {})
    assert row == (1,)


async def test_connections_dropped_by_the_server_are_replaced(service: MemoryService) -> None:
    # A full pool whose every idle connection the server has dropped (a restart, a proxy's idle
    # timeout): the pool used to check them one at a time with a growing pause after each dead
    # one (1 + 2 + 4 + 8 s for seven), past its 10 s wait, and the request failed.
    saved = await service.save(DECISION)
    pool = service.pool
    async with contextlib.AsyncExitStack() as held:
        for _ in range(pool.max_size):
            await held.enter_async_context(pool.connection())
    assert pool.get_stats()["pool_size"] == pool.max_size
    async with pool.connection() as admin:
        await admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )

    memory = await service.get(saved.id)

    assert memory.content == DECISION


async def test_the_embedded_server_gets_a_buffer_cache_sized_to_the_machine(pool: Pool) -> None:
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT setting::bigint * pg_size_bytes(unit) / (1024 * 1024) FROM pg_settings"
            " WHERE name = 'shared_buffers'"
        )
        row = await cur.fetchone()

    assert row is not None and int(row[0]) == shared_buffers_mb(memory)


@pytest.mark.parametrize(
    ("gib", "megabytes"), [(0.5, 128), (2, 256), (4, 512), (8, 1024), (64, 1024)]
)
def test_buffer_cache_is_an_eighth_of_memory_between_128_mb_and_1_gb(
    gib: float, megabytes: int
) -> None:
    assert shared_buffers_mb(int(gib * 1024**3)) == megabytes
