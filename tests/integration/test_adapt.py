"""`claude-memory adapt`: the model is trained on the store's own pairs, saved with its manifest,
made the model in use (the store re-embedded with it, and loaded from the data directory by the
next start), and rolled back; too few pairs and a run stopped midway change nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import psycopg
import pytest

from server.cli.adapt import OFFER_AFTER_MEMORIES, adapt_offer
from server.core.config import Secret, Settings
from server.core.errors import EmbeddingModelMismatch, StartupError
from server.domain.adaptation import AdaptOptions
from server.jobs.adapt import adapt, rollback
from server.service.adapted_models import ACTIVE_FILE, MANIFEST_FILE, models_dir, set_active
from server.service.cutoffs import SimilarityCutoffs
from server.service.embeddings import Embedder
from server.service.runtime import open_service
from tests.integration.processes import run_cli

BASE = "all-MiniLM-L6-v2"
# One tiny epoch on a handful of pairs: enough to change every weight a little.
TINY = AdaptOptions(epochs=1, rate=1e-4, batch_size=8, max_pairs=64, min_pairs=4)

SESSION = [
    ("user", "Why does the payments worker retry forever when the ledger is down?"),
    (
        "assistant",
        "The worker's retry policy had no ceiling; I capped it at five attempts with "
        "exponential back-off and a dead-letter queue named payments-dlq.",
    ),
    ("user", "Which port does the ledger service listen on in the compose file?"),
    ("assistant", "The ledger listens on 7311 inside compose; the host maps it to 17311."),
    ("user", "Switch the ledger client to the gRPC transport, the REST one is going away."),
    (
        "assistant",
        "Done: the ledger client now speaks gRPC through ledger_pb2, and the REST "
        "adapter is deleted along with its tests.",
    ),
]
NOTES = [
    "# Release checklist\nTag the release from main only. Run the migration dry-run against "
    "the staging snapshot before tagging anything.",
    "# On-call rotation\nThe rotation changes every Monday at ten. Pages for the ledger go to "
    "the payments team first and to platform after fifteen minutes.",
    "# Local setup\nInstall the toolchain with mise, then run make bootstrap. The seed script "
    "loads three fake merchants and their settlement history.",
]


def settings_for(url: str, home: Path) -> Settings:
    return Settings(database_url=Secret(url), claude_memory_home=home)


async def seed(settings: Settings, embedder: Embedder) -> None:
    start = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    async with open_service(settings, embedder=embedder) as service:
        for offset, (role, text) in enumerate(SESSION):
            await service.save(
                text,
                kind="raw",
                role=role,
                session_id="session-payments",
                project="payments",
                created_at=start + timedelta(minutes=offset),
            )
        for note in NOTES:
            await service.save(note, project="payments")
        await service.save("The ledger's staging database is ledger_stage_v1.", project="payments")
        await service.save(
            "The ledger's staging database is now ledger_stage_v2.", project="payments"
        )


def vectors(url: str) -> dict[int, np.ndarray]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT id, embedding::text FROM memories ORDER BY id").fetchall()
    return {int(i): np.array(json.loads(text), dtype=np.float32) for i, text in rows}


def recorded_model(url: str) -> tuple[str, str]:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT model, state FROM embedding_model").fetchone()
    assert row is not None
    return str(row[0]), str(row[1])


def same_vectors(a: dict[int, np.ndarray], b: dict[int, np.ndarray]) -> bool:
    return a.keys() == b.keys() and all(np.allclose(a[i], b[i], atol=1e-5) for i in a)


async def test_adapt_trains_saves_reembeds_and_rolls_back(
    fresh_database: Callable[[], str], embedder: Embedder, tmp_path: Path
) -> None:
    url = fresh_database()
    settings = settings_for(url, tmp_path)
    await seed(settings, embedder)
    before = vectors(url)

    async with open_service(settings, embedder=embedder) as service:
        summary = await adapt(settings, service.pool, TINY)
    after = vectors(url)
    folder = models_dir(tmp_path) / "adapted-1"
    manifest = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
    # The next start loads the adapted model from the data directory, as `serve` does.
    async with open_service(settings) as service:
        loaded = service.embedder.name
        loaded_cutoffs = service.cutoffs
        found = await service.search_semantic("what port is the ledger on in compose?", limit=3)
    recorded_after = recorded_model(url)

    assert summary["model"] == f"{BASE}+adapted-1"
    assert summary["memories_reembedded"] == len(before)
    assert manifest["base"] == BASE and manifest["previous"] is None
    assert manifest["pairs"] == summary["pairs"] >= TINY.min_pairs
    assert manifest["pairs_by_kind"]["reply"] == 5
    assert manifest["pairs_by_kind"]["title"] == 3
    assert manifest["pairs_by_kind"]["correction"] == 1
    assert (manifest["epochs"], manifest["rate"]) == (1, 1e-4)
    assert datetime.fromisoformat(manifest["created_at"]).year >= 2026
    assert (folder / "model.safetensors").is_file()
    # The base model's cut-offs, carried over to the adapted one, are what the service uses.
    assert set(manifest["cutoffs"]) == {"semantic", "recall", "recall_with_words", "duplicates"}
    assert manifest["calibration_texts"] >= 10
    assert loaded_cutoffs == SimilarityCutoffs(**manifest["cutoffs"])
    assert loaded_cutoffs.recall_with_words <= loaded_cutoffs.recall
    assert (models_dir(tmp_path) / ACTIVE_FILE).read_text().strip() == "adapted-1"
    assert loaded == f"{BASE}+adapted-1"
    assert recorded_after == (f"{BASE}+adapted-1", "ready")
    assert after.keys() == before.keys()
    assert not any(np.allclose(before[i], after[i], atol=1e-5) for i in before)
    assert "7311" in found.hits[0].content

    # With the pointer gone the store's model cannot be named as a setting: the refusal to
    # start says how to get back (rollback) instead.
    pointer = models_dir(tmp_path) / ACTIVE_FILE
    pointer.rename(tmp_path / "active.moved")
    with pytest.raises(EmbeddingModelMismatch, match="adapt --rollback"):
        async with open_service(settings):
            pass
    (tmp_path / "active.moved").rename(pointer)

    async with open_service(settings) as service:
        back = await rollback(settings, service.pool)
    restored = vectors(url)
    async with open_service(settings) as service:
        loaded_after_rollback = service.embedder.name

    assert back["model"] == BASE and back["replaced"] == f"{BASE}+adapted-1"
    assert not (models_dir(tmp_path) / ACTIVE_FILE).exists()
    assert folder.is_dir()  # kept, to adapt again or look at
    assert loaded_after_rollback == BASE
    assert recorded_model(url) == (BASE, "ready")
    assert same_vectors(before, restored)


async def test_too_few_pairs_is_a_clear_error_and_changes_nothing(
    fresh_database: Callable[[], str], embedder: Embedder, tmp_path: Path
) -> None:
    url = fresh_database()
    settings = settings_for(url, tmp_path)
    async with open_service(settings, embedder=embedder) as service:
        await service.save(NOTES[0])
        with pytest.raises(StartupError, match=r"too few training pairs.*1 found in 1 memories"):
            await adapt(settings, service.pool, TINY)
        with pytest.raises(StartupError, match="nothing to roll back"):
            await rollback(settings, service.pool)

    assert not models_dir(tmp_path).exists()
    assert recorded_model(url) == (BASE, "ready")


async def test_training_stopped_midway_leaves_the_store_and_its_model(
    fresh_database: Callable[[], str], embedder: Embedder, tmp_path: Path
) -> None:
    url = fresh_database()
    settings = settings_for(url, tmp_path)
    await seed(settings, embedder)
    before = vectors(url)

    def stop_after_first_step(done: int, total: int) -> None:
        if done >= 1:
            raise KeyboardInterrupt

    async with open_service(settings, embedder=embedder) as service:
        with pytest.raises(KeyboardInterrupt):
            await adapt(settings, service.pool, TINY, training_progress=stop_after_first_step)
    folder = models_dir(tmp_path)
    left = sorted(p.name for p in folder.iterdir()) if folder.exists() else []
    # The store still opens with the model it had, and searches with it.
    async with open_service(settings) as service:
        loaded = service.embedder.name
        found = await service.search_semantic("what port is the ledger on in compose?", limit=3)

    assert left == []
    assert loaded == BASE
    assert recorded_model(url) == (BASE, "ready")
    assert same_vectors(before, vectors(url))
    assert "7311" in found.hits[0].content


def test_adapt_command_says_why_it_cannot_roll_back(
    fresh_database: Callable[[], str], tmp_path: Path
) -> None:
    env = {"CLAUDE_MEMORY_HOME": str(tmp_path), "CLAUDE_MEMORY_DATABASE_URL": fresh_database()}
    done = run_cli("adapt", "--rollback", env=env)

    assert done.returncode == 1
    assert "no adapted model is in use: nothing to roll back" in done.stderr


def test_a_large_import_offers_adapt_until_an_adapted_model_is_in_use(tmp_path: Path) -> None:
    settings = Settings(claude_memory_home=tmp_path)

    offered = adapt_offer(OFFER_AFTER_MEMORIES, settings)
    small = adapt_offer(OFFER_AFTER_MEMORIES - 1, settings)
    set_active(tmp_path, "adapted-1")
    adapted = adapt_offer(OFFER_AFTER_MEMORIES * 5, settings)

    assert offered is not None and "`claude-memory adapt`" in offered
    assert small is None
    assert adapted is None
