"""The preferences that say nearly the same thing, compared in numpy from their stored vectors,
are the pairs pgvector's own cosine distance finds (the self-join they replaced), on the real
model's vectors."""

from __future__ import annotations

from server.domain.preferences import same_subject_pairs
from server.service.memory import MemoryService
from server.store import search as search_store
from server.store.tx import Pool, transaction

PREFERENCES = [
    ("acme-api", "Use pnpm, never npm, in this repository."),
    ("acme-api", "Always use pnpm instead of npm for installs here."),
    ("acme-api", "Rate limit POST /invoices per API key at 30 requests per minute."),
    ("acme-api", "Rate limit POST /invoices per client IP at 30 requests per minute."),
    ("blog", "Use pnpm, never npm, in this repository."),
    ("", "Keep commit subjects in lower case."),
    ("", "Commit subjects are written in lower case."),
]
BOUND = 0.75


async def test_pairs_match_pgvectors_cosine_distance(service: MemoryService, pool: Pool) -> None:
    ids = []
    for project, text in PREFERENCES:
        outcome = await service.save(text, kind="preference", project=project, force=True)
        ids.append(outcome.id)

    async with transaction(pool) as conn:
        vectors = await search_store.project_vectors(conn, ids)
        cur = await conn.execute(
            "SELECT a.id, b.id, 1 - (a.embedding <=> b.embedding) FROM memories a"
            " JOIN memories b ON a.id < b.id AND a.project = b.project"
            " WHERE a.id = ANY(%(ids)s) AND b.id = ANY(%(ids)s)"
            " AND 1 - (a.embedding <=> b.embedding) >= %(bound)s ORDER BY a.id, b.id",
            {"ids": ids, "bound": BOUND},
        )
        expected = [(int(a), int(b), float(s)) for a, b, s in await cur.fetchall()]

    found = same_subject_pairs(vectors, BOUND)

    assert expected, "the cases hold pairs above the bound"
    assert [(a, b) for a, b, _ in found] == [(a, b) for a, b, _ in expected]
    assert all(abs(f[2] - e[2]) < 1e-5 for f, e in zip(found, expected, strict=True))
    assert {(ids[4], ids[0]), (ids[0], ids[4])}.isdisjoint({(a, b) for a, b, _ in found})
