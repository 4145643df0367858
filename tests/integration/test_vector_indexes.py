"""The HNSW graph: built with the current settings, and a graph built with older ones rebuilt
once, at the next start (server/store/embedding_model.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import psycopg

from server.core.config import Secret, Settings
from server.db.migrate import VECTOR_TABLES
from server.service.embeddings import Embedder
from server.service.runtime import open_service
from tests.vector_index_state import CURRENT, index_options


async def test_a_new_store_gets_the_graph_and_an_older_graph_is_rebuilt_at_start(
    fresh_database: Callable[[], str], embedder: Embedder, tmp_path: Path
) -> None:
    url = fresh_database()
    settings = Settings(database_url=Secret(url), claude_memory_home=tmp_path, cache_max_size=0)
    async with open_service(settings, embedder=embedder) as service:
        await service.save("The staging cluster drains its nodes before every kernel upgrade.")
    assert index_options(url) == {index: CURRENT for _, index in VECTOR_TABLES}

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP INDEX memories_embedding_hnsw")
        conn.execute(
            "CREATE INDEX memories_embedding_hnsw ON memories USING hnsw"
            " (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)"
        )
    assert index_options(url)["memories_embedding_hnsw"] == ["ef_construction=64", "m=16"]

    async with open_service(settings, embedder=embedder) as service:
        found = await service.search_semantic("kernel upgrades on staging", limit=1)

    assert index_options(url) == {index: CURRENT for _, index in VECTOR_TABLES}
    assert [hit.content for hit in found.hits] == [
        "The staging cluster drains its nodes before every kernel upgrade."
    ]


async def test_indexes_an_interrupted_import_left_dropped_are_built_at_the_next_start(
    fresh_database: Callable[[], str], embedder: Embedder, tmp_path: Path
) -> None:
    url = fresh_database()
    settings = Settings(database_url=Secret(url), claude_memory_home=tmp_path, cache_max_size=0)
    async with open_service(settings, embedder=embedder) as service:
        await service.save("The release train leaves every second Tuesday at noon UTC.")
    with psycopg.connect(url, autocommit=True) as conn:  # what a killed bulk import leaves
        for _, index in VECTOR_TABLES:
            conn.execute(f"DROP INDEX {index}")
    assert index_options(url) == {}

    async with open_service(settings, embedder=embedder) as service:
        found = await service.search_semantic("when does the release train leave?", limit=1)

    assert index_options(url) == {index: CURRENT for _, index in VECTOR_TABLES}
    assert [hit.content for hit in found.hits] == [
        "The release train leaves every second Tuesday at noon UTC."
    ]
