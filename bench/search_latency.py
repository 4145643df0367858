"""Search latency at 10,000 and 100,000 memories, and HNSW recall; prints one JSON object.

Fills a fresh embedded database with realistic memories (sentences drawn from the LoCoMo
dialogues and the fixture transcripts, one or two per memory, spread over projects, kinds, tags
and two years), embedding every memory's own text with the real model in batches; the HNSW
indexes are built once after each bulk load, as `claude-memory reembed` does. At each size
it measures p50/p95/p99 of semantic, keyword and hybrid search through MemoryService (read
cache off) and through HTTP (`POST /api/search` on a real uvicorn; the first 100 queries),
next to the floor: the model's own time to embed one query, measured query by query between
the hybrid searches so both see the same machine. It also reports HNSW recall@10 against
exact search ranked as search ranks (each memory by its best row: its own vector, its
passages', its statements'). Each size is timed after VACUUM (ANALYZE) and a CHECKPOINT: the
state a store reaches shortly after a bulk load, with no load-time work running beside the
queries.

The read cache's cost (#18): hybrid search through a service whose cache is keyed by the
database's committed state (one query per read, as shipped) and through one whose cache
never asks (the design before, which other processes' writes left stale), query by query,
each query once as a miss and once more as a hit, the order of the two services alternating.

`--reuse-vectors` makes a size of a million fit the machine: every sentence of the vocabulary
is embedded once, and a memory's vector is the normalised mean of its sentences' vectors
(instead of the model's vector of the joined text, which would take hours to compute). The
vectors keep the model's distribution, so index build, recall and latency stay realistic;
`fill_seconds` then measures inserts and the index build only.

Usage: .venv/bin/python bench/search_latency.py [--sizes 10000,100000] [--queries 200]
           [--reuse-vectors]        e.g. --sizes 1000000 --queries 100 --reuse-vectors
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import socket
import sys
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import uvicorn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from server.app import create_app  # noqa: E402
from server.core.config import Settings  # noqa: E402
from server.core.models.memories import MEMORY_KINDS, MemoryFilter, NewMemory  # noqa: E402
from server.core.models.vectors import DocumentVectors  # noqa: E402
from server.core.validation import content_hash  # noqa: E402
from server.service.cache import ReadCache  # noqa: E402
from server.service.memory import MemoryService  # noqa: E402
from server.service.runtime import open_service  # noqa: E402
from server.store import embedding_model as model_store  # noqa: E402
from server.store import memories as memory_store  # noqa: E402
from server.store import search as search_store  # noqa: E402
from server.store.tx import transaction  # noqa: E402

LOCOMO = ROOT.parent / "shared" / "bench" / "data" / "locomo10.json"
FIXTURES = ROOT.parent / "shared" / "fixtures"
MODES = ("semantic", "keyword", "hybrid")
PROJECTS = [f"project-{i:02d}" for i in range(20)]
TAGS = ["decision", "bug", "fix", "preference", "pattern", "api", "db", "ui", "ci", "infra"]
INSERT_BATCH = 1000
# HTTP adds a near-constant overhead to the service figures; half the queries show it, and
# keep both scripts within their 15-minute budget.
HTTP_QUERIES = 100


def sentences() -> list[str]:
    """Vocabulary for synthetic memories: LoCoMo turns and fixture prose, one per entry."""
    pool: list[str] = []
    for sample in json.loads(LOCOMO.read_text()):
        for key, turns in sample["conversation"].items():
            if re.fullmatch(r"session_\d+", key):
                pool.extend(turn["text"] for turn in turns if len(turn["text"]) > 30)
    for path in FIXTURES.rglob("*.jsonl"):
        for line in path.read_text().splitlines():
            pool.extend(m for m in re.findall(r'"text":\s*"((?:[^"\\]|\\.){40,600})"', line))
    for path in FIXTURES.rglob("*.md"):
        pool.extend(p.strip() for p in path.read_text().split("\n\n") if len(p.strip()) > 40)
    # Split into sentences: a memory is one or two, as distilled memories are. (The model
    # encodes about 130 texts of 170 characters a second on 2 cores, so text length sets how
    # long 100,000 memories take to fill.)
    sentences = (s.strip() for text in pool for s in re.split(r"(?<=[.!?])\s+", text))
    return [s for s in sentences if 30 <= len(s) <= 200]


def questions(count: int, rng: random.Random) -> list[str]:
    asked = [qa["question"] for sample in json.loads(LOCOMO.read_text()) for qa in sample["qa"]]
    return rng.sample(asked, count)


def make_texts(
    pool: list[str], count: int, rng: random.Random, start: int
) -> list[tuple[str, list[int]]]:
    """Memories of one or two sentences of `pool`: (text, the sentences' places in `pool`)."""
    made = []
    for index in range(start, start + count):
        parts = rng.sample(range(len(pool)), rng.choice((1, 2, 2)))
        made.append((" ".join(pool[p] for p in parts) + f" (#{index})", parts))
    return made


def reused(sentence_vectors: np.ndarray, parts: list[list[int]]) -> list[DocumentVectors]:
    """Each memory's vector as the normalised mean of its sentences' (see --reuse-vectors)."""
    documents = []
    for places in parts:
        vector = sentence_vectors[places].mean(axis=0)
        vector /= max(float(np.linalg.norm(vector)), 1e-12)
        documents.append(DocumentVectors(vector.astype(np.float32), []))
    return documents


async def fill(
    service: MemoryService,
    made: list[tuple[str, list[int]]],
    rng: random.Random,
    sentence_vectors: np.ndarray | None = None,
) -> np.ndarray:
    """Insert the memories with batched embeddings (or reused sentence vectors); returns their
    vectors in insertion order.

    The vector indexes are dropped for the load and built once at the end: one build is much
    cheaper than maintaining the graph row by row.
    """
    texts = [text for text, _ in made]
    base = datetime(2025, 1, 1, tzinfo=UTC)
    vectors: list[np.ndarray] = []
    async with transaction(service.pool) as conn:
        await model_store.drop_vector_indexes(conn)
    for offset in range(0, len(texts), INSERT_BATCH):
        batch = texts[offset : offset + INSERT_BATCH]
        if sentence_vectors is None:
            documents = await service.embedder.embed_documents_async(batch)
        else:
            parts = [places for _, places in made[offset : offset + INSERT_BATCH]]
            documents = reused(sentence_vectors, parts)
        memories = [
            NewMemory(
                content=text,
                content_hash=content_hash(text),
                kind=rng.choice(MEMORY_KINDS),
                tags=rng.sample(TAGS, rng.randint(0, 3)),
                source="bench",
                project=rng.choice(PROJECTS),
                created_at=base + timedelta(minutes=rng.randint(0, 2 * 365 * 24 * 60)),
            )
            for text in batch
        ]
        async with transaction(service.pool) as conn:
            await memory_store.insert_many(conn, memories, documents)
        vectors.extend(document.vector for document in documents if document.vector is not None)
    async with transaction(service.pool) as conn:
        await conn.execute("SET LOCAL maintenance_work_mem = '1GB'")
        # pgvector builds HNSW in parallel: the leader and one worker use both cores.
        await conn.execute("SET LOCAL max_parallel_maintenance_workers = 1")
        await model_store.create_vector_indexes(conn)
    return np.vstack(vectors)


async def settle(service: MemoryService) -> None:
    """VACUUM (ANALYZE) the loaded tables, then CHECKPOINT: the state a store reaches soon after.

    Right after a bulk insert the full-text index still holds new rows in its pending list
    and autovacuum is about to run beside the queries, and PostgreSQL is still writing out
    the load (a checkpoint spread over minutes): timing then measures the load, not search.
    On two cores that background work slowed even the bare query embedding by half.
    """
    async with service.pool.connection() as conn:
        await conn.set_autocommit(True)
        try:
            for table in ("memories", "memory_chunks"):
                await conn.execute(f"VACUUM (ANALYZE) {table}")
            await conn.execute("CHECKPOINT")
        finally:
            await conn.set_autocommit(False)


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)

    def at(share: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))], 2)

    return {"p50": at(0.50), "p95": at(0.95), "p99": at(0.99)}


async def service_latency(
    service: MemoryService, mode: str, queries: list[str], floor: list[float] | None = None
) -> list[float]:
    """Each query's time through the service; with `floor`, also the model's own time to
    embed the query alone, taken right before each search (this machine's speed drifts from
    minute to minute, so a floor measured apart from the searches skews their ratio)."""
    samples = []
    for query in queries:
        if floor is not None:
            started = time.perf_counter()
            service.embedder.encode_queries([query])
            floor.append((time.perf_counter() - started) * 1000.0)
        started = time.perf_counter()
        if mode == "semantic":
            await service.search_semantic(query, limit=10, min_similarity=0.0)
        elif mode == "keyword":
            await service.search_keyword(query, limit=10)
        else:
            await service.search_hybrid(query, limit=10)
        samples.append((time.perf_counter() - started) * 1000.0)
    return samples


async def cache_cost(
    service: MemoryService, settings: Settings, queries: list[str]
) -> dict[str, dict[str, float]]:
    """Hybrid p50/p95/p99 through a state-keyed cache and an unkeyed one, misses and hits."""
    cached = replace(settings, cache_max_size=10_000, cache_ttl_seconds=3_600.0)
    keyed = MemoryService(service.pool, service.embedder, cached)
    unkeyed = MemoryService(service.pool, service.embedder, cached)

    async def never_changes() -> str:
        return ""

    unkeyed.cache = ReadCache(cached.cache_max_size, cached.cache_ttl_seconds, never_changes)
    samples: dict[str, list[float]] = {
        f"{name}_{kind}": [] for name in ("keyed", "unkeyed") for kind in ("miss", "hit")
    }
    for index, query in enumerate(queries):
        order = [("keyed", keyed), ("unkeyed", unkeyed)]
        for name, each in order if index % 2 == 0 else order[::-1]:
            for kind in ("miss", "hit"):
                started = time.perf_counter()
                await each.search_hybrid(query, limit=10)
                samples[f"{name}_{kind}"].append((time.perf_counter() - started) * 1000.0)
    return {name: percentiles(values) for name, values in samples.items()}


async def http_latency(url: str, mode: str, queries: list[str]) -> list[float]:
    samples = []
    async with httpx.AsyncClient(timeout=30) as client:
        for query in queries:
            started = time.perf_counter()
            response = await client.post(
                f"{url}/api/search",
                json={"query": query, "mode": mode, "limit": 10, "min_similarity": 0.0},
            )
            response.raise_for_status()
            samples.append((time.perf_counter() - started) * 1000.0)
    return samples


TIE_EPSILON = 1e-5  # float32 dot products against pgvector's cosine distance


async def hnsw_recall(service: MemoryService, queries: list[str]) -> float:
    """Share of the exact top 10 that the HNSW look-up returns.

    Exact as search ranks: each memory by its best row (its own vector, its passages' and its
    statements'), computed with numpy over every stored row. Before session 18 the reference
    used the memories' own vectors only, which stopped matching search once statements had
    rows of their own (docs/benchmarks-history.md)."""
    async with transaction(service.pool) as conn:
        cur = await conn.execute(
            "SELECT id, embedding FROM memories WHERE embedding IS NOT NULL"
            " AND deleted_at IS NULL UNION ALL SELECT c.memory_id, c.embedding"
            " FROM memory_chunks AS c JOIN memories AS m ON m.id = c.memory_id"
            " WHERE m.deleted_at IS NULL"
        )
        rows = await cur.fetchall()
    owners = np.array([int(row[0]) for row in rows])
    vectors = np.vstack([np.asarray(_floats(row[1]), dtype=np.float32) for row in rows])
    memory_ids, slot = np.unique(owners, return_inverse=True)
    query_vectors = service.embedder.encode_queries(queries)
    found = 0
    for vector in query_vectors:
        best = np.full(len(memory_ids), -np.inf, dtype=np.float32)
        np.maximum.at(best, slot, vectors @ vector)
        tenth = float(np.sort(best)[-10])
        async with transaction(service.pool) as conn:
            approximate = await search_store.semantic_candidates(conn, vector, MemoryFilter(), 10)
        # A memory as close as the exact tenth counts: with --reuse-vectors many memories
        # share a statement's vector, and which of the tied ones make "the" top 10 is chance.
        found += sum(1 for _, similarity in approximate if similarity >= tenth - TIE_EPSILON)
    return round(found / (10 * len(query_vectors)), 4)


def _floats(vector: Any) -> Any:
    """A stored vector as numbers: pgvector gives a `Vector` for a UNION's column."""
    return vector.to_numpy() if hasattr(vector, "to_numpy") else vector


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def run(
    sizes: list[int], query_count: int, home: Path, reuse_vectors: bool = False
) -> dict[str, Any]:
    rng = random.Random(42)
    pool = sentences()
    queries = questions(query_count, rng)
    settings = Settings(claude_memory_home=home, cache_max_size=0)
    report: dict[str, Any] = {
        "benchmark": "search-latency",
        "queries": len(queries),
        "reused_sentence_vectors": reuse_vectors,
        "sizes": {},
    }
    started = time.monotonic()
    async with open_service(settings) as service:
        service.embedder.encode_queries(queries[:5])
        sentence_vectors = None
        if reuse_vectors:
            embedded = time.monotonic()
            sentence_vectors = await service.embedder.encode_async(pool)
            report["sentences_embedded"] = len(pool)
            report["sentence_embedding_seconds"] = round(time.monotonic() - embedded, 1)
        port = free_port()
        config = uvicorn.Config(
            create_app(settings, service), host="127.0.0.1", port=port, log_config=None
        )
        server = uvicorn.Server(config)
        serving = asyncio.create_task(server.serve())
        while not server.started:
            await asyncio.sleep(0.05)
        url = f"http://127.0.0.1:{port}"

        stored = 0
        for size in sorted(sizes):
            fill_started = time.monotonic()
            made = make_texts(pool, size - stored, rng, stored)
            await fill(service, made, rng, sentence_vectors)
            stored = size
            fill_seconds = time.monotonic() - fill_started
            await settle(service)
            async with transaction(service.pool) as conn:
                cur = await conn.execute("SELECT id FROM memories ORDER BY id")
                ids = [int(row[0]) for row in await cur.fetchall()]
            floor: list[float] = []
            figures: dict[str, Any] = {
                "memories": len(ids),
                "fill_seconds": round(fill_seconds, 1),
                "query_embedding_floor_ms": {},
                "service_ms": {},
                "http_ms": {},
            }
            for mode in MODES:
                await service_latency(service, mode, queries[:10])
                figures["service_ms"][mode] = percentiles(
                    await service_latency(
                        service, mode, queries, floor if mode == "hybrid" else None
                    )
                )
                figures["http_ms"][mode] = percentiles(
                    await http_latency(url, mode, queries[:HTTP_QUERIES])
                )
            figures["query_embedding_floor_ms"] = percentiles(floor)
            floor_p50 = figures["query_embedding_floor_ms"]["p50"]
            figures["hybrid_p95_over_floor_p50"] = round(
                figures["service_ms"]["hybrid"]["p95"] / floor_p50, 2
            )
            figures["hybrid_read_cache_ms"] = await cache_cost(service, settings, queries)
            figures["hnsw_recall_at_10"] = await hnsw_recall(service, queries[:100])
            report["sizes"][str(size)] = figures
        server.should_exit = True
        await serving
    report["seconds_total"] = round(time.monotonic() - started, 1)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--reuse-vectors",
        action="store_true",
        help="embed each vocabulary sentence once and build memory vectors from them",
    )
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    # The database (about 1 GB at 100,000 memories) goes when the run ends.
    with tempfile.TemporaryDirectory(prefix="latency-", ignore_cleanup_errors=True) as home:
        report = asyncio.run(run(sizes, args.queries, Path(home), args.reuse_vectors))
    print(json.dumps(report, indent=2))  # noqa: T201


if __name__ == "__main__":
    main()
