"""Statements as retrieval units: a memory that states several facts is found by its best
statement, memories stored before statements had vectors get them in batches, and an edit
made meanwhile keeps its own."""

from __future__ import annotations

import anyio
import numpy as np

from server.service.memory import MemoryService
from server.service.vector_backfill import VectorBackfill
from server.store import embedding_model as model_store
from server.store.tx import transaction

HANDBOOK = (
    "# Service handbook\n"
    "- Deploys go out on Tuesdays and Thursdays after the 10:00 stand-up.\n"
    "- The staging database is refreshed from a masked production snapshot every Sunday.\n"
    "- Feature flags live in LaunchDarkly; stale flags are removed within two sprints.\n"
    "- On-call engineers acknowledge pages within fifteen minutes, day or night.\n"
    "- Invoices are rendered to PDF by a headless Chromium worker on the billing queue.\n"
    "- The public API allows one hundred requests a minute for each API key.\n"
)
QUESTION = "how many requests per minute does the public API allow each key?"
ANSWER = "The public API allows one hundred requests a minute for each API key."


async def _chunk_rows(service: MemoryService, memory_id: int) -> list[tuple[str, str]]:
    """(unit, text) of each chunk row of a memory, in chunk order."""
    async with transaction(service.pool) as conn:
        cur = await conn.execute(
            "SELECT c.unit, substr(m.content, c.start_char + 1, c.end_char - c.start_char)"
            " FROM memory_chunks c JOIN memories m ON m.id = c.memory_id"
            " WHERE c.memory_id = %(id)s ORDER BY c.chunk_index",
            {"id": memory_id},
        )
        return [(str(unit), str(text)) for unit, text in await cur.fetchall()]


async def _forget_statement_vectors(service: MemoryService, memory_id: int) -> None:
    """Make a memory look as one stored before migration 020 does."""
    async with transaction(service.pool) as conn:
        await conn.execute(
            "DELETE FROM memory_chunks WHERE memory_id = %(id)s AND unit = 'statement'",
            {"id": memory_id},
        )
        await conn.execute(
            "UPDATE memories SET units_indexed = false WHERE id = %(id)s", {"id": memory_id}
        )


async def _similarity(service: MemoryService, memory_id: int) -> float:
    result = await service.search_semantic(QUESTION, limit=5, min_similarity=0.0)
    return next(hit.similarity for hit in result.hits if hit.id == memory_id)


async def test_a_memory_of_many_facts_is_scored_by_the_statement_that_answers(
    service: MemoryService,
) -> None:
    saved = await service.save(HANDBOOK)

    rows = await _chunk_rows(service, saved.id)
    statements = [text for unit, text in rows if unit == "statement"]
    assert statements[-1] == ANSWER
    assert len(statements) == 6  # the heading is too short to state anything
    [question] = service.embedder.encode_queries([QUESTION])
    [answer, whole] = service.embedder.encode([ANSWER, HANDBOOK])
    similarity = await _similarity(service, saved.id)
    assert abs(similarity - float(np.dot(question, answer))) < 1e-3
    assert similarity > float(np.dot(question, whole)) + 0.05


async def test_a_memory_stating_one_thing_keeps_only_its_own_vector(
    service: MemoryService,
) -> None:
    saved = await service.save("The public API allows one hundred requests a minute per key.")

    assert await _chunk_rows(service, saved.id) == []


async def test_memories_stored_before_statement_vectors_get_them_in_batches(
    service: MemoryService,
) -> None:
    first = await service.save(HANDBOOK)
    second = await service.save(HANDBOOK.replace("Tuesdays", "Wednesdays"))
    indexed_similarity = await _similarity(service, first.id)
    for memory_id in (first.id, second.id):
        await _forget_statement_vectors(service, memory_id)
    assert await _similarity(service, first.id) < indexed_similarity - 0.05

    assert await service.vectors.index_statements(batch_size=1) == 1
    assert await service.vectors.embed_waiting() == 0, "no memory waits for its own vector"
    assert await service.vectors.index_statements() == 1
    assert await service.vectors.index_statements() == 0

    for memory_id in (first.id, second.id):
        units = [unit for unit, _ in await _chunk_rows(service, memory_id)]
        assert units.count("statement") == 6
    assert await _similarity(service, first.id) == indexed_similarity


async def test_an_edit_made_while_statements_are_indexed_keeps_its_own(
    service: MemoryService,
) -> None:
    saved = await service.save(HANDBOOK)
    await _forget_statement_vectors(service, saved.id)
    async with transaction(service.pool) as conn:
        batch = await model_store.memories_without_statement_vectors(conn, 10)
    statements = service.embedder.embed_statements([m.content for m in batch])

    edited = HANDBOOK.replace("one hundred requests", "two hundred requests")
    await service.update(saved.id, content=edited, force=True)
    async with transaction(service.pool) as conn:
        marked = await model_store.add_statement_vectors(conn, batch, statements)

    assert marked == set()
    rows = await _chunk_rows(service, saved.id)
    assert [text for unit, text in rows if unit == "statement"][-1] == ANSWER.replace(
        "one hundred", "two hundred"
    )


async def test_an_edit_to_one_statement_drops_the_statement_vectors(
    service: MemoryService,
) -> None:
    saved = await service.save(HANDBOOK)

    await service.update(saved.id, content=ANSWER, force=True)

    assert await _chunk_rows(service, saved.id) == []


async def test_the_servers_background_task_catches_up(service: MemoryService) -> None:
    saved = await service.save(HANDBOOK)
    await _forget_statement_vectors(service, saved.id)
    backfill = VectorBackfill(service.vectors, idle_seconds=0.05, statement_pause_seconds=0.0)

    backfill.start()
    try:
        with anyio.fail_after(60):
            while not [u for u, _ in await _chunk_rows(service, saved.id) if u == "statement"]:
                await anyio.sleep(0.05)
    finally:
        await backfill.close()

    units = [unit for unit, _ in await _chunk_rows(service, saved.id)]
    assert units.count("statement") == 6
