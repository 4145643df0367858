"""A large import into a small store writes without the vector indexes and builds them once,
after (server/service/bulk_indexes.py); a small one grows them as it goes.

The thresholds are lowered for the test (a real one needs thousands of turns): the decision,
the drop, the writes and the build all run on the real database and model.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import psycopg
import pytest

from server.core.config import Secret, Settings
from server.core.models.memories import MemoryDraft
from server.ingest import importer
from server.ingest.documents import import_text
from server.ingest.importer import ImportFilters, ImportSummary, SessionImporter
from server.service import bulk_indexes
from server.service.embeddings import Embedder
from server.service.memory import MemoryService
from server.service.runtime import open_service
from tests.transcripts import SessionWriter
from tests.vector_index_state import CURRENT, INDEXES, index_options, indexes_by_validity

TOPICS = ["billing", "search", "deploys", "caching", "auth", "exports"]
ALL = set(INDEXES)


def write_sessions(projects: Path, count: int) -> None:
    """`count` sessions of four distinct turns each, about one topic apiece."""
    for number in range(count):
        topic = TOPICS[number % len(TOPICS)]
        SessionWriter(f"{number:08d}-aaaa-4bbb-8ccc-000000000000").prompt(
            f"Session {number}: can you look at why the {topic} worker retries forever?"
        ).say(
            f"The {topic} worker (session {number}) retries because its backoff is never reset."
        ).prompt(
            f"Session {number}: please reset the {topic} backoff after a successful attempt."
        ).say(
            f"Done in session {number}: the {topic} backoff now resets after every success."
        ).write(projects)


async def import_watching(
    service: MemoryService, url: str, projects: Path, *, dry_run: bool = False
) -> tuple[ImportSummary, list[set[str]]]:
    """Import `projects`, noting after each file which vector indexes exist."""
    seen: list[set[str]] = []
    run = SessionImporter(
        service,
        ImportFilters(),
        dry_run=dry_run,
        progress=lambda done, total: seen.append(set(index_options(url))),
    )
    return await run.run(projects), seen


@pytest.fixture
def small_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importer, "BATCH_TURNS", 8)
    monkeypatch.setattr(bulk_indexes, "MIN_DEFERRED_TURNS", 12)


@pytest.fixture
async def fresh_service(
    fresh_database: Callable[[], str], embedder: Embedder, tmp_path: Path
) -> AsyncIterator[tuple[MemoryService, str]]:
    url = fresh_database()
    settings = Settings(database_url=Secret(url), claude_memory_home=tmp_path, cache_max_size=0)
    async with open_service(settings, embedder=embedder) as service:
        yield service, url


@pytest.mark.usefixtures("small_thresholds")
async def test_a_large_first_import_builds_the_indexes_once_after(
    fresh_service: tuple[MemoryService, str], tmp_path: Path
) -> None:
    service, url = fresh_service
    projects = tmp_path / "projects"
    write_sessions(projects, 12)
    summary, seen = await import_watching(service, url, projects)

    assert summary.turns_imported == 48
    assert summary.indexes_built_after is True
    assert summary.as_json()["indexes_built_after"] is True
    # Before the first batch of 8 turns was written the indexes stood; once the run knew how
    # large it was they were gone for the rest of it, and built again when it ended.
    assert seen[0] == ALL
    assert seen[-1] == set()
    assert index_options(url) == dict.fromkeys(INDEXES, CURRENT)
    found = await service.search_semantic("why does the caching worker retry forever?", limit=3)
    assert any("caching worker" in hit.content for hit in found.hits)


@pytest.mark.usefixtures("small_thresholds")
async def test_an_import_smaller_than_the_store_grows_the_indexes_as_it_goes(
    fresh_service: tuple[MemoryService, str], tmp_path: Path
) -> None:
    service, url = fresh_service
    notes = [
        MemoryDraft(content=f"Team note {n}: the on-call rota for week {n} is posted on Monday.")
        for n in range(60)
    ]
    await service.save_many(notes, force=True)
    projects = tmp_path / "projects"
    write_sessions(projects, 12)
    summary, seen = await import_watching(service, url, projects)

    assert summary.turns_imported == 48
    assert summary.indexes_built_after is False
    assert all(present == ALL for present in seen)


async def test_the_indexes_are_built_again_when_the_import_fails(
    fresh_service: tuple[MemoryService, str],
) -> None:
    service, url = fresh_service
    with pytest.raises(RuntimeError, match="the disk went away"):
        async with service.vector_indexes_after(50_000) as deferred:
            assert deferred is True
            assert index_options(url) == {}
            await service.save("The nightly export job writes to the analytics bucket first.")
            raise RuntimeError("the disk went away")

    assert index_options(url) == dict.fromkeys(INDEXES, CURRENT)
    found = await service.search_semantic("where does the nightly export write?", limit=1)
    assert [hit.content for hit in found.hits] == [
        "The nightly export job writes to the analytics bucket first."
    ]


async def test_a_dry_run_never_drops_the_indexes(
    fresh_service: tuple[MemoryService, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(importer, "BATCH_TURNS", 8)
    monkeypatch.setattr(bulk_indexes, "MIN_DEFERRED_TURNS", 1)
    service, url = fresh_service
    projects = tmp_path / "projects"
    write_sessions(projects, 6)
    summary, seen = await import_watching(service, url, projects, dry_run=True)

    assert summary.turns_imported == 24
    assert summary.indexes_built_after is False
    assert all(present == ALL for present in seen)


async def test_notes_imported_into_an_empty_store_build_after_and_again_change_nothing(
    fresh_service: tuple[MemoryService, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bulk_indexes, "MIN_DEFERRED_TURNS", 12)
    service, url = fresh_service
    notes = tmp_path / "notes"
    notes.mkdir()
    for number in range(16):
        topic = TOPICS[number % len(TOPICS)]
        (notes / f"note-{number}.md").write_text(
            f"# Runbook {number}\n\nThe {topic} runbook {number} says to page the owner"
            f" after three failed retries of the {topic} job.\n",
            encoding="utf-8",
        )

    first = await import_text(service, [notes])
    again = await import_text(service, [notes])

    assert first.turns_imported == 16
    assert first.indexes_built_after is True
    assert again.turns_imported == 0
    assert again.indexes_built_after is False  # 16 drafts into a store of 16: nothing to gain
    assert index_options(url) == dict.fromkeys(INDEXES, CURRENT)
    found = await service.search_semantic("when do we page the auth owner?", limit=3)
    assert any("auth runbook" in hit.content for hit in found.hits)


def leave_invalid(url: str, index: str) -> None:
    """What a CREATE INDEX CONCURRENTLY that failed half-way leaves behind."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "UPDATE pg_index SET indisvalid = false WHERE indexrelid = %s::regclass", (index,)
        )


async def test_an_index_a_failed_concurrent_build_left_invalid_is_built_again(
    fresh_database: Callable[[], str], embedder: Embedder, tmp_path: Path
) -> None:
    url = fresh_database()
    settings = Settings(database_url=Secret(url), claude_memory_home=tmp_path, cache_max_size=0)
    async with open_service(settings, embedder=embedder) as service:
        await service.save("The canary stage holds each release for forty minutes.")
        leave_invalid(url, "memory_chunks_hnsw")
        assert indexes_by_validity(url, valid=False) == {"memory_chunks_hnsw"}

        await bulk_indexes.build_vector_indexes(service.pool)  # what an import ends with

        assert indexes_by_validity(url, valid=False) == set()
        assert index_options(url) == dict.fromkeys(INDEXES, CURRENT)
        leave_invalid(url, "memories_embedding_hnsw")

    async with open_service(settings, embedder=embedder) as service:  # the next start
        found = await service.search_semantic("how long does the canary hold a release?")

    assert indexes_by_validity(url, valid=False) == set()
    assert index_options(url) == dict.fromkeys(INDEXES, CURRENT)
    assert found.hits[0].content == "The canary stage holds each release for forty minutes."
