"""Fixtures for tests against the real embedded Postgres, the real model and the real app.

pg_server (session)     one embedded PostgreSQL + pgvector in a temp dir
pg_url (session)        our database on it, built from migrations/ and nothing else
embedder (session)      the bundled all-MiniLM-L6-v2, loaded once
pool (session)          the async pool, with the model recorded in the database
settings (function)     Settings pointing at pg_url, data dir in tmp_path
service (function)      a MemoryService over `pool`, on emptied tables
app_url (function)      the real app served by uvicorn on a free port, over `service`
guarded_url (function)  the same, requiring the bearer token TOKEN (CLAUDE_MEMORY_TOKEN)
fresh_database          a factory for extra, empty databases on pg_server
create_database         an extra database, empty or a copy of another (a template), for a
                        module that fills one database once and gives each test its own copy
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import tempfile
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path

import psycopg
import pytest
import uvicorn
from psycopg import sql
from starlette.applications import Starlette

from server.adapters.header_deadline import HeaderDeadlineProtocol
from server.app import create_app
from server.core.config import Secret, Settings
from server.db.embedded import EmbeddedPostgres, start_embedded
from server.db.migrate import apply_migrations
from server.db.pool import open_pool
from server.service.embeddings import Embedder, LocalEmbedder
from server.service.memory import MemoryService
from server.service.reembed import ensure_model_recorded
from server.store.tx import Pool

TOKEN = "test-bearer-token-0123456789abcdef"  # the one guarded_url requires


@pytest.fixture(scope="session")
def pg_server() -> Iterator[EmbeddedPostgres]:
    """The session's database server, its data outside pytest's base temp dir: run as root,
    the server runs as another user that must reach its data dir, and every pytest session
    that starts resets /tmp/pytest-of-root to mode 0700, which would cut off the server of a
    session already running beside it."""
    home = Path(tempfile.mkdtemp(prefix="claude-memory-test-pg-"))
    embedded = start_embedded(home / "pgdata")
    yield embedded
    embedded.release()
    shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="session")
async def pg_url(pg_server: EmbeddedPostgres) -> str:
    await apply_migrations(pg_server.url)
    return pg_server.url


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    return LocalEmbedder.load("all-MiniLM-L6-v2")


@pytest.fixture(scope="session")
async def pool(pg_url: str, embedder: Embedder) -> AsyncIterator[Pool]:
    opened = await open_pool(pg_url, min_size=1, max_size=8)
    await ensure_model_recorded(opened, embedder)
    yield opened
    await opened.close()


@pytest.fixture
def settings(pg_url: str, tmp_path: Path) -> Settings:
    from server.core.config import Secret

    return Settings(database_url=Secret(pg_url), claude_memory_home=tmp_path / "data")


async def empty_tables(pool: Pool) -> None:
    async with pool.connection() as conn:
        await conn.execute(
            "TRUNCATE memories, imported_sessions, imported_files, session_events, journal_prompts,"
            " lessons, lesson_proposal_sessions, job_leases, injections, promoted_lines,"
            " project_folders, users RESTART IDENTITY CASCADE"
        )


@pytest.fixture
async def service(pool: Pool, embedder: Embedder, settings: Settings) -> MemoryService:
    await empty_tables(pool)
    return MemoryService(pool, embedder, settings)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@asynccontextmanager
async def serving(app: Starlette) -> AsyncIterator[str]:
    """Serve `app` with uvicorn on a free loopback port until the block ends."""
    port = free_port()
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        http=HeaderDeadlineProtocol,
        log_config=None,
        lifespan="on",
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    deadline = asyncio.get_running_loop().time() + 30
    while not server.started:
        if task.done() or asyncio.get_running_loop().time() > deadline:
            raise RuntimeError("test server did not start")
        await asyncio.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task


@pytest.fixture
async def app_url(service: MemoryService, settings: Settings) -> AsyncIterator[str]:
    async with serving(create_app(settings, service)) as url:
        yield url


@pytest.fixture
async def guarded_url(service: MemoryService, settings: Settings) -> AsyncIterator[str]:
    guarded = replace(settings, claude_memory_token=Secret(TOKEN))
    async with serving(create_app(guarded, service)) as url:
        yield url


def create_database(pg_server: EmbeddedPostgres, template: str | None = None) -> str:
    """A new database on the test server, empty or a copy of `template` (a database nobody is
    connected to: `CREATE DATABASE … TEMPLATE`, a file copy, far cheaper than filling it
    again); its name."""
    name = f"test_{uuid.uuid4().hex[:12]}"
    statement = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
    if template is not None:
        statement += sql.SQL(" TEMPLATE {}").format(sql.Identifier(template))
    with psycopg.connect(admin_url(pg_server), autocommit=True) as conn:
        conn.execute(statement)
    return name


def database_url(pg_server: EmbeddedPostgres, name: str) -> str:
    return pg_server.url.replace("/claude_memory?", f"/{name}?")


def drop_databases(pg_server: EmbeddedPostgres, names: list[str]) -> None:
    with psycopg.connect(admin_url(pg_server), autocommit=True) as conn:
        for name in names:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


def admin_url(pg_server: EmbeddedPostgres) -> str:
    return pg_server.url.replace("/claude_memory?", "/postgres?")


@pytest.fixture
def fresh_database(pg_server: EmbeddedPostgres) -> Iterator[Callable[[], str]]:
    """Make empty databases on the test server (no migrations applied); dropped afterwards."""
    created: list[str] = []

    def make() -> str:
        created.append(create_database(pg_server))
        return database_url(pg_server, created[-1])

    yield make
    drop_databases(pg_server, created)
