"""Many memories, fast: made-up notes and a plain-SQL insert, for the search tests that need
a large table (tests/integration/test_service_search.py, tests/reliability/).

filler       `count` notes of 8 to 20 words from WORDS, the same for the same `seed`
bulk_insert  embeds the texts in one batch and inserts them with plain SQL, skipping the
             service's write guard; the new ids by text
"""

from __future__ import annotations

import random
from datetime import UTC, datetime

from server.core.validation import content_hash
from server.service.memory import MemoryService

WORDS = [
    "deploy",
    "build",
    "cache",
    "queue",
    "worker",
    "billing",
    "invoice",
    "customer",
    "report",
    "dashboard",
    "metrics",
    "schema",
    "migration",
    "index",
    "query",
    "latency",
    "retry",
    "backoff",
    "session",
    "token",
    "route",
    "handler",
    "config",
    "feature",
    "flag",
    "release",
    "branch",
    "review",
    "lint",
    "format",
    "test",
    "fixture",
    "mock",
    "container",
    "cluster",
    "pool",
    "timeout",
    "connection",
    "transaction",
    "rollback",
    "commit",
    "webhook",
    "event",
    "stream",
    "parser",
    "export",
    "import",
    "upload",
]


def filler(count: int, seed: int = 1) -> list[str]:
    rng = random.Random(seed)
    return [
        f"Note {i}: " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 20))) + "."
        for i in range(count)
    ]


async def bulk_insert(service: MemoryService, texts: list[str], **fields: object) -> dict[str, int]:
    """Embed in one batch and insert with plain SQL: fast set-up for large fixtures."""
    documents = await service.embedder.embed_documents_async(texts)
    ids: dict[str, int] = {}
    async with service.pool.connection() as conn:
        for text, document in zip(texts, documents, strict=True):
            cur = await conn.execute(
                "INSERT INTO memories (content, content_hash, embedding, project, tags, kind,"
                " created_at) VALUES (%(c)s, %(h)s, %(e)s, %(project)s, %(tags)s, %(kind)s,"
                " %(created)s) ON CONFLICT DO NOTHING RETURNING id",
                {
                    "c": text,
                    "h": content_hash(text),
                    "e": document.vector,
                    "project": fields.get("project", ""),
                    "tags": fields.get("tags", []),
                    "kind": fields.get("kind", "manual"),
                    "created": fields.get("created_at", datetime.now(UTC)),
                },
            )
            row = await cur.fetchone()
            if row:
                ids[text] = int(row[0])
    return ids
