"""EMBEDDING_PROVIDER=openai against a real local `/v1/embeddings` server (embeddings_stub.py).

The stand-in serves the bundled model's real vectors, so a store built through the endpoint
must rank exactly like one built in-process. Switching provider is refused until `reembed`; an
endpoint that goes down loses no write, and what waited gets its vector when it is back.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import numpy as np
import psycopg
import pytest

from server.app import create_app
from server.core.config import Secret, Settings
from server.core.errors import EmbeddingModelMismatch, EmbeddingUnavailable
from server.core.models.memories import MemoryFilter
from server.ingest.importer import ImportFilters, SessionImporter
from server.service.embedding_profiles import EmbeddingProfile
from server.service.embeddings import Embedder
from server.service.memory import MemoryService
from server.service.reembed import reembed
from server.service.remote_embedder import RemoteEmbedder
from server.service.runtime import open_service
from server.service.vector_backfill import VectorBackfill
from tests.db_fixtures import free_port, serving
from tests.embeddings_stub import SERVED_MODEL, EmbeddingServer
from tests.fixture_sessions import CLAUDE_PROJECTS
from tests.integration.processes import run_cli

NOTES = [
    "We decided to use cursor-based pagination for the orders API.",
    "The flaky checkout test came from a shared Redis database between workers.",
    "This repository uses pnpm, never npm.",
    "Deploys go out through the staging cluster first, then production after a smoke test.",
]
QUESTION = "why did the checkout test fail sometimes?"


@pytest.fixture
def endpoint(embedder: Embedder) -> Iterator[EmbeddingServer]:
    # Sent at another length than 1, as some servers do: the client scales them back.
    with EmbeddingServer(embedder, scale=3.0) as server:
        yield server


def endpoint_settings(url: str, home: Path, server: EmbeddingServer) -> Settings:
    return Settings(
        database_url=Secret(url),
        claude_memory_home=home,
        embedding_provider="openai",
        embedding_base_url=server.base_url,
        embedding_model=SERVED_MODEL,
        embedding_batch_size=3,
    )


def quick(
    server: EmbeddingServer, *, retries: int = 1, profile: EmbeddingProfile | None = None
) -> RemoteEmbedder:
    """A client that gives up fast and asks again soon, for tests of outages."""
    return RemoteEmbedder(
        server.base_url,
        SERVED_MODEL,
        batch_size=3,
        retries=retries,
        quiet_seconds=0.2,
        profile=profile,
    )


def null_vectors(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM memories WHERE embedding IS NULL").fetchone()
        return int(row[0]) if row else -1


async def test_the_endpoint_saves_and_searches_as_the_local_model_does(
    fresh_database: Callable[[], str], embedder: Embedder, endpoint: EmbeddingServer, tmp_path: Path
) -> None:
    remote_settings = endpoint_settings(fresh_database(), tmp_path / "remote", endpoint)
    local_settings = Settings(database_url=Secret(fresh_database()), claude_memory_home=tmp_path)

    results = {}
    async with open_service(remote_settings) as remote:
        assert isinstance(remote.embedder, RemoteEmbedder)
        assert remote.embedder.dimension == embedder.dimension
        for note in NOTES:
            await remote.save(note)
        results["remote"] = await remote.search_semantic(QUESTION, limit=4, min_similarity=0)
        stats = await remote.stats()
    async with open_service(local_settings, embedder=embedder) as local:
        for note in NOTES:
            await local.save(note)
        results["local"] = await local.search_semantic(QUESTION, limit=4, min_similarity=0)

    remote_hits = [(h.content, h.similarity) for h in results["remote"].hits]
    local_hits = [(h.content, h.similarity) for h in results["local"].hits]
    assert [c for c, _ in remote_hits] == [c for c, _ in local_hits]
    assert remote_hits[0][0] == NOTES[1]
    for (_, far), (_, near) in zip(remote_hits, local_hits, strict=True):
        assert far == pytest.approx(near, abs=1e-4)
    assert (stats.embedding_provider, stats.embedding_model) == ("openai", SERVED_MODEL)
    assert stats.vectors_waiting == 0
    assert endpoint.requests and max(endpoint.requests) <= 3, (
        "batches of CLAUDE_MEMORY_EMBEDDING_BATCH_SIZE"
    )


async def test_switching_to_the_endpoint_is_refused_until_reembed(
    fresh_database: Callable[[], str], embedder: Embedder, endpoint: EmbeddingServer, tmp_path: Path
) -> None:
    url = fresh_database()
    local = Settings(database_url=Secret(url), claude_memory_home=tmp_path)
    remote = endpoint_settings(url, tmp_path, endpoint)
    async with open_service(local, embedder=embedder) as service:
        for note in NOTES:
            await service.save(note)

    with pytest.raises(EmbeddingModelMismatch, match="claude-memory reembed") as refused:
        async with open_service(remote):
            pass
    assert "via openai" in str(refused.value) and "CLAUDE_MEMORY_EMBEDDING_PROVIDER=local" in str(
        refused.value
    )
    async with open_service(remote, check_model=False) as service:
        result = await reembed(service.pool, service.embedder, batch_size=2)
    async with open_service(remote) as service:
        found = await service.search_semantic(QUESTION, limit=1)

    assert (result.memories, result.dimension) == (len(NOTES), embedder.dimension)
    assert found.hits[0].content == NOTES[1]
    assert null_vectors(url) == 0


def test_the_cli_refuses_a_switched_provider_and_reembed_fixes_it(
    fresh_database: Callable[[], str], endpoint: EmbeddingServer, tmp_path: Path
) -> None:
    url = fresh_database()
    local_env = {"CLAUDE_MEMORY_DATABASE_URL": url, "CLAUDE_MEMORY_HOME": str(tmp_path)}
    remote_env = {
        **local_env,
        "CLAUDE_MEMORY_EMBEDDING_PROVIDER": "openai",
        "CLAUDE_MEMORY_EMBEDDING_BASE_URL": endpoint.base_url,
        "CLAUDE_MEMORY_EMBEDDING_MODEL": SERVED_MODEL,
    }
    notes = tmp_path / "notes"
    notes.mkdir()
    for number, note in enumerate(NOTES):
        (notes / f"note-{number}.md").write_text(note + "\n", encoding="utf-8")
    imported = run_cli("import", "--text", str(notes), "--json", env=local_env)
    assert imported.returncode == 0, imported.stderr

    refused = run_cli("import", "--text", str(notes), "--json", env=remote_env)
    converted = run_cli("reembed", env=remote_env)
    accepted = run_cli("import", "--text", str(notes), "--json", env=remote_env)

    assert refused.returncode == 1 and "claude-memory reembed" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert converted.returncode == 0, converted.stderr
    assert accepted.returncode == 0, accepted.stderr
    assert null_vectors(url) == 0


async def test_an_outage_mid_import_loses_nothing_and_the_waiting_memories_get_vectors(
    fresh_database: Callable[[], str], endpoint: EmbeddingServer, tmp_path: Path
) -> None:
    url = fresh_database()
    settings = endpoint_settings(url, tmp_path, endpoint)
    projects = Path(shutil.copytree(CLAUDE_PROJECTS, tmp_path / "projects"))
    async with open_service(settings) as opened:
        service = MemoryService(opened.pool, quick(endpoint), settings)
        service.embedder.dimension = opened.embedder.dimension

        endpoint.fail_after(2, 503)  # down in the middle of the import's embedding
        summary = await SessionImporter(service, ImportFilters()).run(projects)
        waiting = await service.vectors_waiting()
        stored = await service.list_memories(MemoryFilter(kind="raw"), limit=1)
        keyword = await service.search_keyword("Redis", limit=5)
        hybrid = await service.search_hybrid("Redis", limit=5)
        with pytest.raises(EmbeddingUnavailable) as unavailable:
            await service.search_semantic(QUESTION)
        saved = await service.save("The staging database is reset every Sunday night.")

        endpoint.recover()
        backfill = VectorBackfill(service.vectors, idle_seconds=0.1)
        backfill.start()
        try:
            async with asyncio.timeout(60):
                while await service.vectors_waiting():
                    await asyncio.sleep(0.1)
        finally:
            await backfill.close()
        found = await service.search_semantic("when is the staging database reset?", limit=1)

    assert not summary.errors and summary.files_found >= 2
    assert 0 < waiting <= summary.turns_imported
    assert stored.total == summary.turns_imported, "no turn lost"
    assert keyword.hits and hybrid.hits, "keyword search works while vectors wait"
    assert [h.id for h in hybrid.hits] == [h.id for h in keyword.hits]
    assert endpoint.base_url in unavailable.value.message
    assert SERVED_MODEL in unavailable.value.message
    assert saved.status == "saved" and saved.memory is not None
    assert found.hits[0].id == saved.id
    assert null_vectors(url) == 0


async def test_errors_name_the_url_and_the_model_and_busy_answers_are_retried(
    endpoint: EmbeddingServer,
) -> None:
    missing = RemoteEmbedder(endpoint.base_url, "nomic-embed-text", retries=0)
    with pytest.raises(EmbeddingUnavailable, match="ollama pull nomic-embed-text") as no_model:
        missing.probe()
    port = free_port()
    nowhere = RemoteEmbedder(f"http://127.0.0.1:{port}/v1", SERVED_MODEL, retries=0)
    with pytest.raises(EmbeddingUnavailable, match="cannot reach") as unreachable:
        nowhere.probe()

    endpoint.fail_next(2, 429)
    retried = quick(endpoint, retries=2).probe()
    endpoint.fail_next(3, 503)
    with pytest.raises(EmbeddingUnavailable, match="HTTP 503"):
        quick(endpoint, retries=2).probe()

    assert endpoint.base_url in no_model.value.message
    assert f"127.0.0.1:{port}" in unreachable.value.message
    assert SERVED_MODEL in unreachable.value.message
    assert retried == 384


def test_query_and_document_prefixes_reach_the_model(
    embedder: Embedder, endpoint: EmbeddingServer
) -> None:
    nomic_style = quick(endpoint, profile=EmbeddingProfile("search_query: ", "search_document: "))
    query = nomic_style.encode_queries(["pnpm or npm?"])[0]
    document = nomic_style.encode(["This repository uses pnpm."])[0]

    np.testing.assert_allclose(query, embedder.encode(["search_query: pnpm or npm?"])[0], atol=1e-5)
    np.testing.assert_allclose(
        document, embedder.encode(["search_document: This repository uses pnpm."])[0], atol=1e-5
    )


async def test_a_server_starts_while_the_endpoint_is_down_and_says_so(
    fresh_database: Callable[[], str], endpoint: EmbeddingServer, tmp_path: Path
) -> None:
    url = fresh_database()
    settings = endpoint_settings(url, tmp_path, endpoint)
    async with open_service(settings):
        pass  # the store is made with the endpoint's model
    endpoint.stop_listening()
    never_made = replace(settings, database_url=Secret(fresh_database()))

    with pytest.raises(EmbeddingModelMismatch, match="cannot reach"):
        async with open_service(never_made):
            pass
    async with open_service(settings) as service:
        saved = await service.save("The release branch is cut on Thursdays.")
        async with (
            serving(create_app(settings, service)) as base,
            httpx.AsyncClient(base_url=base) as http,
        ):
            health = (await http.get("/health")).json()

    assert saved.status == "saved"
    assert health["embeddings"] == "unavailable" and health["vectors_waiting"] == 1
    assert health["embedding_provider"] == "openai" and health["status"] == "ok"
    assert null_vectors(url) == 1


async def test_an_edit_while_the_endpoint_is_down_waits_and_no_other_process_fills_a_reembed(
    fresh_database: Callable[[], str], endpoint: EmbeddingServer, tmp_path: Path
) -> None:
    url = fresh_database()
    settings = endpoint_settings(url, tmp_path, endpoint)
    async with open_service(settings) as opened:
        service = MemoryService(opened.pool, quick(endpoint), settings)
        service.embedder.dimension = opened.embedder.dimension
        saved = await service.save("The nightly backup runs at 02:00 UTC.")
        assert saved.memory is not None
        endpoint.fail_after(0, 503)
        edited = await service.update(saved.id, content="The nightly backup runs at 03:00 UTC.")
        assert edited.memory is not None and edited.memory.content.endswith("03:00 UTC.")
        assert await service.vectors_waiting() == 1
        endpoint.recover()
        await asyncio.sleep(0.3)  # past the client's quiet time
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("UPDATE embedding_model SET state = 'reembedding'")
        skipped = await service.vectors.embed_waiting()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("UPDATE embedding_model SET state = 'ready'")
        filled = await service.vectors.embed_waiting()
        found = await service.search_semantic("when does the backup run?", limit=1)

    assert (skipped, filled) == (0, 1), "a reembed under way elsewhere owns the empty vectors"
    assert found.hits[0].content.endswith("03:00 UTC.")


def test_reembed_through_an_unreachable_endpoint_says_so(
    fresh_database: Callable[[], str], tmp_path: Path
) -> None:
    env = {
        "CLAUDE_MEMORY_DATABASE_URL": fresh_database(),
        "CLAUDE_MEMORY_HOME": str(tmp_path),
        "CLAUDE_MEMORY_EMBEDDING_PROVIDER": "openai",
        "CLAUDE_MEMORY_EMBEDDING_BASE_URL": f"http://127.0.0.1:{free_port()}/v1",
        "CLAUDE_MEMORY_EMBEDDING_MODEL": "nomic-embed-text",
    }
    result = run_cli("reembed", env=env)

    assert result.returncode == 1
    assert "cannot reach" in result.stderr and "nomic-embed-text" in result.stderr
    assert "Traceback" not in result.stderr


def test_texts_sent_in_batches_of_similar_length_come_back_in_their_order(
    embedder: Embedder, endpoint: EmbeddingServer
) -> None:
    texts = [("word " * n).strip() + f" {n}" for n in (40, 1, 17, 3, 60, 2, 9, 33)]
    remote = quick(endpoint)

    vectors = remote.encode(texts)

    assert endpoint.requests[-3:] == [3, 3, 2], "batch size 3, shortest texts first"
    for text, vector in zip(texts, vectors, strict=True):
        np.testing.assert_allclose(vector, embedder.encode([text])[0], atol=1e-5)
