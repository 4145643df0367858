"""What a memory names of the code, stored with it (migration 021, server/store/anchors.py):
written in the transaction of every insert and content edit, in the order of the text; found
for memories written before the table by the background task, in batches; read by the UI's
list of a memory's anchors and by the Drifted page's filter of memories that name code."""

from __future__ import annotations

from typing import Any

from server.core.access import acting_as
from server.core.models.memories import MemoryDraft, MemoryFilter
from server.domain.anchors import Anchor
from server.service.memory import MemoryService
from server.store.tx import transaction

GO = "The Go toolchain is pinned to go 1.22 in `go.mod`; `HTTP_TIMEOUT=30s` in `.env.example`."
PROSE = "We agreed to keep the weekly planning meeting short and to write the notes down."


async def rows_of(service: MemoryService, memory_id: int) -> list[tuple[Any, ...]]:
    async with transaction(service.pool) as conn:
        cur = await conn.execute(
            "SELECT position, kind, name, value FROM memory_anchors WHERE memory_id = %(id)s"
            " ORDER BY position",
            {"id": memory_id},
        )
        return list(await cur.fetchall())


async def forget_anchors(service: MemoryService) -> None:
    """The store as it was before migration 021."""
    async with transaction(service.pool) as conn:
        await conn.execute("DELETE FROM memory_anchors")
        await conn.execute("UPDATE memories SET anchors_indexed = false")


async def test_a_saved_memory_keeps_its_anchors_in_text_order_and_an_edit_replaces_them(
    service: MemoryService,
) -> None:
    saved = await service.save(GO, project="acme-api")
    prose = await service.save(PROSE, project="acme-api")

    assert await rows_of(service, saved.id) == [
        (0, "version", "go", "1.22"),
        (1, "path", "go.mod", None),
        (2, "setting", "HTTP_TIMEOUT", "30s"),
        (3, "path", ".env.example", None),
    ]
    assert await rows_of(service, prose.id) == []
    assert await service.anchors(saved.memory) == [
        Anchor("version", "go", "1.22"),
        Anchor("path", "go.mod", None),
        Anchor("setting", "HTTP_TIMEOUT", "30s"),
        Anchor("path", ".env.example", None),
    ]

    await service.update(saved.id, content="Deploys read `deploy/config.yaml` now.", force=True)

    assert await rows_of(service, saved.id) == [(0, "path", "deploy/config.yaml", None)]
    await service.soft_delete(saved.id)
    await service.purge(saved.id)
    assert await rows_of(service, saved.id) == []


async def test_imported_batches_store_their_anchors_too(service: MemoryService) -> None:
    outcome = await service.save_many(
        [MemoryDraft(GO, project="acme-api"), MemoryDraft(PROSE, project="acme-api")]
    )
    ids = [item.id for item in outcome.items]

    assert outcome.saved == 2
    assert [len(await rows_of(service, i)) for i in ids if i is not None] == [4, 0]


async def test_memories_written_before_the_table_get_their_anchors_in_batches(
    service: MemoryService,
) -> None:
    first = await service.save(GO, project="acme-api")
    second = await service.save(GO.replace("1.22", "1.23"), project="acme-api")
    prose = await service.save(PROSE, project="acme-api")
    await forget_anchors(service)
    # Not indexed yet: found in the text, as the table would have them.
    assert (await service.anchors(first.memory))[0] == Anchor("version", "go", "1.22")
    assert len(await service.anchors(second.memory)) == 4

    assert await service.vectors.index_anchors(batch_size=2) == 2
    assert await service.vectors.index_anchors() == 1
    assert await service.vectors.index_anchors() == 0

    assert (await rows_of(service, second.id))[0] == (0, "version", "go", "1.23")
    assert len(await rows_of(service, first.id)) == 4
    assert await rows_of(service, prose.id) == []


async def test_the_filter_of_memories_naming_code_reads_the_table_and_the_unindexed(
    service: MemoryService,
) -> None:
    code = await service.save(GO, project="acme-api")
    await service.save(PROSE, project="acme-api")
    naming = MemoryFilter(project="acme-api", names_code=True)

    listed = await service.list_memories(naming)
    assert [m.id for m in listed.memories] == [code.id]

    await forget_anchors(service)
    assert (await service.list_memories(naming)).total == 2, "not indexed yet: the caller reads"
    await service.vectors.index_anchors()
    assert [m.id for m in (await service.list_memories(naming)).memories] == [code.id]


async def test_a_teammate_does_not_read_the_anchors_of_a_private_memory(
    service: MemoryService,
) -> None:
    alice, _ = await service.users.add("alice", ["team"])
    bob, _ = await service.users.add("bob", ["team"])
    with acting_as(service.users.viewer(alice.user)):
        private = await service.save(GO, project="team")
    with acting_as(service.users.viewer(bob.user)):
        assert await service.anchors(private.memory) == []
        assert (await service.list_memories(MemoryFilter(names_code=True))).total == 0
