"""Fixtures for the security tests.

The embedded Postgres, the model and the function-scoped `service` / `app_url` come from the
root plugin (tests/db_fixtures.py). The module-scoped ones here let a module that only reads
(or only probes the HTTP guards) share one server and one filled database instead of starting
a server per parametrized case:

module_settings (module)   Settings over pg_url, data dir in a module temp dir
module_service (module)    a MemoryService on tables emptied once, when the module starts
module_app_url (module)    the real app on uvicorn over module_service, no token
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from server.app import create_app
from server.core.config import Secret, Settings
from server.service.embeddings import Embedder
from server.service.memory import MemoryService
from server.store.tx import Pool
from tests.db_fixtures import empty_tables, serving


@pytest.fixture(scope="module")
def module_settings(pg_url: str, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    home: Path = tmp_path_factory.mktemp("security-home")
    return Settings(database_url=Secret(pg_url), claude_memory_home=home)


@pytest.fixture(scope="module")
async def module_service(
    pool: Pool, embedder: Embedder, module_settings: Settings
) -> MemoryService:
    await empty_tables(pool)
    return MemoryService(pool, embedder, module_settings)


@pytest.fixture(scope="module")
async def module_app_url(
    module_service: MemoryService, module_settings: Settings
) -> AsyncIterator[str]:
    async with serving(create_app(module_settings, module_service)) as url:
        yield url
