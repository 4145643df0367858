"""Many memories, fast: made-up notes and a plain-SQL insert, for the search tests that need
a large table (tests/integration/test_service_search.py, tests/reliability/).

filler       `count` notes of 8 to 20 words from WORDS, the same for the same `seed`
bulk_insert  embeds the texts in one batch and inserts them with plain SQL in one pipelined
             round, skipping the service's write guard; the new ids by text. A text's
             vector is kept for the worker's next test: the same filler is embedded once,
             not once per test (the model is deterministic; embedding is most of the cost)
"""

from __future__ import annotations

import random
from datetime import UTC, datetime

import numpy as np

from server.core.validation import content_hash
from server.service.memory import MemoryService
from server.store.tx import returned_ids

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


_VECTORS: dict[tuple[str, str], np.ndarray | None] = {}  # (model, text) -> its vector


async def vectors_of(service: MemoryService, texts: list[str]) -> list[np.ndarray | None]:
    """Each text's vector, embedding in one batch only those this process has not seen."""
    model = service.embedder.name
    missing = [text for text in dict.fromkeys(texts) if (model, text) not in _VECTORS]
    if missing:
        documents = await service.embedder.embed_documents_async(missing)
        for text, document in zip(missing, documents, strict=True):
            _VECTORS[model, text] = document.vector
    return [_VECTORS[model, text] for text in texts]


async def bulk_insert(service: MemoryService, texts: list[str], **fields: object) -> dict[str, int]:
    """Insert `texts` as memories with plain SQL: fast set-up for large fixtures."""
    vectors = await vectors_of(service, texts)
    rows = [
        {
            "c": text,
            "h": content_hash(text),
            "e": vector,
            "project": fields.get("project", ""),
            "tags": fields.get("tags", []),
            "kind": fields.get("kind", "manual"),
            "created": fields.get("created_at", datetime.now(UTC)),
        }
        for text, vector in zip(texts, vectors, strict=True)
    ]
    async with service.pool.connection() as conn:
        ids = await returned_ids(
            conn,
            "INSERT INTO memories (content, content_hash, embedding, project, tags, kind,"
            " created_at) VALUES (%(c)s, %(h)s, %(e)s, %(project)s, %(tags)s, %(kind)s,"
            " %(created)s) ON CONFLICT DO NOTHING RETURNING id",
            rows,
        )
    return {text: id_ for text, id_ in zip(texts, ids, strict=True) if id_ is not None}
