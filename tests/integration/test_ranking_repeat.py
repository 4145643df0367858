"""Same data, same question, same order (#55 part 4): a corpus of sessions and notes whose facts
change, imported into two separate stores in opposite orders, ranks every question identically
in every mode (compared by content, since ids follow the import order)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from server.core.config import Secret, Settings
from server.core.models.memories import MemoryFilter
from server.db.migrate import apply_migrations
from server.db.pool import open_pool
from server.ingest.documents import import_text
from server.ingest.importer import ImportFilters, SessionImporter
from server.service.embeddings import Embedder
from server.service.memory import MemoryService
from server.service.reembed import ensure_model_recorded
from tests.transcripts import SessionWriter

pytestmark = pytest.mark.integration

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)

# (session id, days after START, [(prompt, reply)]): the facts change from session to session.
SESSIONS = [
    (
        "a1000000-0000-4000-8000-000000000001",
        0,
        [
            ("Which database does the orders service use?", "The orders service uses MySQL 5.7."),
            ("How do we deploy it?", "We deploy the orders service with Jenkins to the VM."),
            ("What port does it listen on?", "The orders service listens on port 8080."),
        ],
    ),
    (
        "a1000000-0000-4000-8000-000000000002",
        9,
        [
            (
                "We moved the orders service to Postgres, right?",
                "Yes: the orders service now uses PostgreSQL 16 instead of MySQL 5.7.",
            ),
            ("And the port?", "The orders service listens on port 8080 still."),
        ],
    ),
    (
        "a1000000-0000-4000-8000-000000000003",
        20,
        [
            (
                "Switch the deploy to GitHub Actions.",
                "Done: the orders service deploys with GitHub Actions now, Jenkins is retired.",
            ),
            (
                "Change the port to 9090 for the mesh.",
                "The orders service listens on port 9090 from now on.",
            ),
        ],
    ),
    (
        "a1000000-0000-4000-8000-000000000004",
        31,
        [
            (
                "What did we decide about caching?",
                "We cache order totals in Redis for 60 seconds.",
            ),
            ("Which database does the orders service use?", "PostgreSQL 16, since the move."),
        ],
    ),
]

NOTES = {
    "orders-runbook.md": (
        "---\ndate: 2026-03-05\nproject: orders\n---\n# Orders runbook\n\n"
        "The orders service runs on MySQL 5.7 and deploys with Jenkins. Port 8080.\n"
    ),
    "orders-handbook.md": (
        "---\ndate: 2026-03-28\nproject: orders\n---\n# Orders handbook\n\n"
        "Deploys go through GitHub Actions. The database is PostgreSQL 16; order totals are"
        " cached in Redis for 60 seconds. The service listens on port 9090.\n"
    ),
}

QUESTIONS = [
    "Which database does the orders service use?",
    "How is the orders service deployed?",
    "What port does the orders service listen on?",
    "What did the orders service use before PostgreSQL?",
    "How long are order totals cached?",
    "Jenkins",
    "port",
]


def write_corpus(root: Path) -> tuple[Path, Path]:
    projects, notes = root / "projects", root / "notes"
    for session_id, days, exchanges in SESSIONS:
        writer = SessionWriter(session_id, "/home/dev/orders", start=START + timedelta(days=days))
        for prompt, reply in exchanges:
            writer.prompt(prompt).say(reply)
        writer.write(projects, "-home-dev-orders")
    notes.mkdir(parents=True)
    for name, text in NOTES.items():
        (notes / name).write_text(text, encoding="utf-8")
    return projects, notes


@asynccontextmanager
async def store(
    make_database: Callable[[], str], embedder: Embedder, home: Path
) -> AsyncIterator[MemoryService]:
    url = make_database()
    await apply_migrations(url)
    pool = await open_pool(url, min_size=1, max_size=4)
    try:
        await ensure_model_recorded(pool, embedder)
        settings = Settings(database_url=Secret(url), claude_memory_home=home, cache_max_size=0)
        yield MemoryService(pool, embedder, settings)
    finally:
        await pool.close()


async def links(service: MemoryService) -> set[tuple[str, str]]:
    """(newer content, older content) of every supersession link."""
    async with service.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT n.content, o.content FROM memories n JOIN memories o ON o.id = n.supersedes"
        )
        return {(str(row[0]), str(row[1])) for row in await cur.fetchall()}


async def rankings(service: MemoryService) -> dict[tuple[str, str], list[str]]:
    """Every question's hits, by content, in every mode, asked in the project and without."""
    found: dict[tuple[str, str], list[str]] = {}
    for question in QUESTIONS:
        for project in ("orders", None):
            where = MemoryFilter(project=project)
            for mode, search in (
                ("hybrid", service.search_hybrid),
                ("keyword", service.search_keyword),
                ("semantic", service.search_semantic),
            ):
                result = await search(question, limit=10, where=where)
                found[(f"{mode} in {project}", question)] = [hit.content for hit in result.hits]
    return found


async def test_two_imports_in_opposite_orders_rank_every_question_alike(
    fresh_database: Callable[[], str], embedder: Embedder, tmp_path: Path
) -> None:
    projects, notes = write_corpus(tmp_path / "corpus")

    async with store(fresh_database, embedder, tmp_path / "a") as first:
        await SessionImporter(first, ImportFilters()).run(projects)
        await import_text(first, [notes])
        in_order = await rankings(first)
        first_links = await links(first)

    async with store(fresh_database, embedder, tmp_path / "b") as second:
        for note in sorted(notes.iterdir(), reverse=True):
            await import_text(second, [note])
        importer = SessionImporter(second, ImportFilters())
        await importer.run_files(list(reversed(importer.agent.discover(projects))))
        reversed_order = await rankings(second)
        second_links = await links(second)

    assert first_links == second_links
    assert any(hits for hits in in_order.values())
    differing = {key for key in in_order if in_order[key] != reversed_order[key]}
    assert not differing, {key: (in_order[key], reversed_order[key]) for key in differing}
