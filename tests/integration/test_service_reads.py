"""MemoryService.list / tags / stats / export, and a read cache that no commit leaves stale."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from server.core.errors import InvalidInput
from server.core.models.memories import MemoryFilter
from server.service.memory import MemoryService
from server.store.tx import committed_state, transaction

NOTES = {
    "pagination": "We use cursor-based pagination for the orders API.",
    "redis": "The flaky checkout test came from a shared Redis database between workers.",
    "pnpm": "This repository uses pnpm, never npm.",
    "lint": "Always run the linter before committing.",
}


async def fill(service: MemoryService) -> dict[str, int]:
    base = datetime(2026, 3, 1, tzinfo=UTC)
    layout = [
        ("pagination", "shop", ["api", "decision"], "note", base),
        ("redis", "shop", ["tests"], "distilled", base + timedelta(days=1)),
        ("pnpm", "tools", ["tooling", "decision"], "preference", base + timedelta(days=2)),
        ("lint", "tools", ["tooling"], "preference", base + timedelta(days=3)),
    ]
    ids = {}
    for key, project, tags, kind, created in layout:
        outcome = await service.save(
            NOTES[key], project=project, tags=tags, kind=kind, source="test", created_at=created
        )
        ids[key] = outcome.id
    return ids


async def test_list_returns_newest_first_with_total(service: MemoryService) -> None:
    ids = await fill(service)

    page = await service.list_memories(limit=2, offset=0)

    assert page.total == 4
    assert [m.id for m in page.memories] == [ids["lint"], ids["pnpm"]]


async def test_list_pages_do_not_overlap(service: MemoryService) -> None:
    await fill(service)

    first = await service.list_memories(limit=3, offset=0)
    second = await service.list_memories(limit=3, offset=3)

    assert len(second.memories) == 1
    assert {m.id for m in first.memories}.isdisjoint({m.id for m in second.memories})


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        (MemoryFilter(project="shop"), {"pagination", "redis"}),
        (MemoryFilter(tag="decision"), {"pagination", "pnpm"}),
        (MemoryFilter(kind="preference"), {"pnpm", "lint"}),
        (MemoryFilter(since=datetime(2026, 3, 2, tzinfo=UTC)), {"redis", "pnpm", "lint"}),
        (MemoryFilter(before=datetime(2026, 3, 2, tzinfo=UTC)), {"pagination"}),
        (MemoryFilter(project="tools", tag="tooling", kind="preference"), {"pnpm", "lint"}),
    ],
    ids=["project", "tag", "kind", "since", "before", "combined"],
)
async def test_list_filters(
    service: MemoryService, where: MemoryFilter, expected: set[str]
) -> None:
    ids = await fill(service)

    page = await service.list_memories(where, limit=50)

    assert {m.id for m in page.memories} == {ids[k] for k in expected}
    assert page.total == len(expected)


async def test_list_hides_deleted_unless_asked(service: MemoryService) -> None:
    ids = await fill(service)
    await service.soft_delete(ids["redis"])

    live = await service.list_memories(limit=50)
    everything = await service.list_memories(MemoryFilter(include_deleted=True), limit=50)

    assert ids["redis"] not in {m.id for m in live.memories}
    assert everything.total == 4


@pytest.mark.parametrize(
    ("limit", "offset", "message"),
    [(0, 0, "limit must be between 1 and 500"), (501, 0, "limit"), (10, -1, "offset")],
    ids=["zero-limit", "huge-limit", "negative-offset"],
)
async def test_list_rejects_bad_paging(
    service: MemoryService, limit: int, offset: int, message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        await service.list_memories(limit=limit, offset=offset)


async def test_list_rejects_inverted_date_range(service: MemoryService) -> None:
    where = MemoryFilter(
        since=datetime(2026, 3, 5, tzinfo=UTC), before=datetime(2026, 3, 1, tzinfo=UTC)
    )
    with pytest.raises(InvalidInput, match="since must be earlier than before"):
        await service.list_memories(where)


async def test_tags_counts_live_memories(service: MemoryService) -> None:
    ids = await fill(service)
    await service.soft_delete(ids["lint"])

    tags = {t.tag: t.count for t in await service.tags()}

    assert tags == {"decision": 2, "api": 1, "tests": 1, "tooling": 1}


async def test_stats_counts_by_project_source_kind_and_sizes(service: MemoryService) -> None:
    ids = await fill(service)
    await service.soft_delete(ids["lint"])

    stats = await service.stats()

    assert (stats.total, stats.active, stats.deleted) == (4, 3, 1)
    assert stats.by_project == {"shop": 2, "tools": 1}
    assert stats.by_source == {"test": 3}
    assert stats.by_kind == {"note": 1, "distilled": 1, "preference": 1}
    assert stats.storage.table_bytes > 0
    assert stats.storage.index_bytes > 0
    assert stats.storage.vector_bytes == 4 * (8 + 4 * 384)
    assert stats.embedding_dimension == 384


async def test_every_write_is_seen_by_the_next_cached_read(service: MemoryService) -> None:
    ids = await fill(service)
    assert (await service.list_memories(limit=50)).total == 4
    assert (await service.stats()).active == 4

    await service.soft_delete(ids["pnpm"])
    assert (await service.list_memories(limit=50)).total == 3
    assert (await service.stats()).active == 3

    await service.restore(ids["pnpm"])
    assert (await service.list_memories(limit=50)).total == 4

    await service.update(ids["pnpm"], tags=["changed"])
    assert "changed" in {t.tag for t in await service.tags()}

    await service.save("A completely new memory about Kubernetes liveness probes.")
    assert (await service.list_memories(limit=50)).total == 5


async def database_state(service: MemoryService) -> str:
    async with transaction(service.pool) as conn:
        return await committed_state(conn)


async def test_repeated_read_with_no_commit_between_is_served_from_cache(
    service: MemoryService,
) -> None:
    await fill(service)
    await service.list_memories(limit=10)
    # Autovacuum's ANALYZE commits too; a pair of reads it falls between is tried again.
    for _ in range(5):
        state, hits_before = await database_state(service), service.cache.stats().hits
        await service.list_memories(limit=10)
        if await database_state(service) == state:
            assert service.cache.stats().hits == hits_before + 1
            return
    pytest.fail("the database changed between every pair of reads")


async def test_a_write_made_outside_the_service_is_seen_by_the_next_read(
    service: MemoryService,
) -> None:
    await fill(service)
    assert (await service.list_memories(limit=50)).total == 4
    assert (await service.list_memories(limit=50)).total == 4
    async with service.pool.connection() as conn:
        await conn.execute("UPDATE memories SET deleted_at = now()")

    assert (await service.list_memories(limit=50)).total == 0
    assert (await service.stats()).active == 0


async def collect(service: MemoryService, where: MemoryFilter, fmt: str) -> str:
    return "".join([chunk async for chunk in await service.export(where, fmt)])


async def test_export_json_carries_every_field(service: MemoryService) -> None:
    ids = await fill(service)

    records = json.loads(await collect(service, MemoryFilter(project="shop"), "json"))

    assert [r["id"] for r in records] == [ids["pagination"], ids["redis"]]
    assert records[0]["content"] == NOTES["pagination"]
    assert records[0]["tags"] == ["api", "decision"]
    assert records[0]["created_at"] == "2026-03-01T00:00:00+00:00"


async def test_export_jsonl_has_one_object_per_line(service: MemoryService) -> None:
    await fill(service)

    lines = (await collect(service, MemoryFilter(), "jsonl")).splitlines()

    assert len(lines) == 4
    assert {json.loads(line)["content"] for line in lines} == set(NOTES.values())


async def test_export_markdown_lists_each_memory(service: MemoryService) -> None:
    ids = await fill(service)

    text = await collect(service, MemoryFilter(tag="tooling"), "markdown")

    assert text.startswith("# claude-memory export")
    assert f"## Memory {ids['pnpm']}" in text
    assert NOTES["lint"] in text
    assert NOTES["redis"] not in text


async def test_export_of_empty_selection_is_valid_json(service: MemoryService) -> None:
    assert json.loads(await collect(service, MemoryFilter(tag="none"), "json")) == []


async def test_export_pages_through_more_rows_than_one_page(service: MemoryService) -> None:
    contents = [f"Memory number {i} about topic {i * 7919 % 1000}" for i in range(1, 1203)]
    await service_bulk_insert(service, contents)

    records = json.loads(await collect(service, MemoryFilter(), "json"))

    assert len(records) == len(contents)
    assert len({r["id"] for r in records}) == len(contents)


async def test_export_rejects_unknown_format(service: MemoryService) -> None:
    with pytest.raises(InvalidInput, match="output_format must be one of"):
        await service.export(MemoryFilter(), "xml")


async def service_bulk_insert(service: MemoryService, contents: list[str]) -> None:
    """Insert many rows fast with plain SQL (the export test only needs rows, not vectors)."""
    from server.core.validation import content_hash

    async with service.pool.connection() as conn, conn.cursor() as cur:
        await cur.executemany(
            "INSERT INTO memories (content, content_hash) VALUES (%(c)s, %(h)s)",
            [{"c": c, "h": content_hash(c)} for c in contents],
        )
