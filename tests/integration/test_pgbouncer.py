"""The product through a real PgBouncer in transaction mode (`DB_TRANSACTION_POOLING=true`).

A team runs several server processes against a managed PostgreSQL behind PgBouncer; in
transaction mode nothing may rest on session state. Migrations started twice at once apply
once, every transaction carries the search settings, and repeated statements (which psycopg
would otherwise prepare) keep working across the pooler's shared server connections.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from server.app import create_app
from server.core.config import Secret, Settings
from server.db.embedded import EmbeddedPostgres
from server.db.migrate import VECTOR_TABLES, apply_migrations, discover_migrations
from server.service.embeddings import Embedder
from server.service.runtime import open_service
from server.store.tx import transaction
from tests.db_fixtures import serving
from tests.pgbouncer import PgBouncer

NOTES = [
    "The orders API pages with an opaque cursor, not offsets.",
    "Staging deploys need the VPN; production deploys run from CI only.",
    "This repository uses pnpm, never npm.",
    "The flaky checkout test came from a shared Redis database between workers.",
]


@pytest.fixture
def bouncer(pg_server: EmbeddedPostgres) -> Iterator[PgBouncer]:
    with PgBouncer(pg_server.pgdata, server_pool=2) as running:
        yield running


def database_name(url: str) -> str:
    return url.split("?", 1)[0].rsplit("/", 1)[1]


async def test_the_server_works_through_pgbouncer_in_transaction_mode(
    bouncer: PgBouncer,
    fresh_database: Callable[[], str],
    embedder: Embedder,
    tmp_path: Path,
) -> None:
    url = bouncer.url(database_name(fresh_database()))
    first, second = await asyncio.gather(apply_migrations(url), apply_migrations(url))
    settings = Settings(
        database_url=Secret(url),
        claude_memory_home=tmp_path,
        db_transaction_pooling=True,
        db_pool_max_size=6,
        cache_max_size=0,
    )
    async with open_service(settings, embedder=embedder) as service:
        async with transaction(service.pool) as conn:
            cur = await conn.execute(
                "SELECT current_setting('hnsw.ef_search'), current_setting('statement_timeout')"
            )
            in_effect = await cur.fetchone()
        saved = await asyncio.gather(*(service.save(note) for note in NOTES))
        async with (
            serving(create_app(settings, service)) as base,
            httpx.AsyncClient(base_url=base, timeout=30) as http,
        ):
            # More repeats of each statement than psycopg's prepare threshold (5), at once.
            answers = await asyncio.gather(
                *(
                    http.post("/api/search", json={"query": "which package manager?", "limit": 3})
                    for _ in range(24)
                ),
                *(http.get("/api/memories", params={"limit": 5}) for _ in range(12)),
            )

        # A large import's index build, behind the pooler: in one transaction, not CONCURRENTLY.
        async with service.vector_indexes_after(10_000) as deferred:
            await service.save("The bouncer keeps two server connections for every client.")
        async with transaction(service.pool) as conn:
            cur = await conn.execute(
                "SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
                " WHERE c.relname = ANY(%(names)s) AND i.indisvalid",
                {"names": [index for _, index in VECTOR_TABLES]},
            )
            valid_indexes = await cur.fetchone()

    assert deferred is True
    assert valid_indexes == (len(VECTOR_TABLES),)
    versions = sorted(m.version for m in [*first, *second])
    assert versions == [m.version for m in discover_migrations()], "each migration once"
    assert in_effect == ("100", "30s")
    assert [s.status for s in saved] == ["saved"] * len(NOTES)
    assert {a.status_code for a in answers} == {200}
    assert all(a.json()["hits"][0]["content"] == NOTES[2] for a in answers[:24])
    assert "prepared statement" not in bouncer.log
