"""The database, model and server fixtures live in tests/db_fixtures.py, a plugin loaded by
tests/conftest.py so that every test group (integration, reliability, security, e2e) shares
one embedded Postgres and one model; so does `agent_clis` (tests/agent_clis.py). The fixtures
here are the ones the integration tests share:

imported (function)   the shared Claude Code fixtures copied to tmp_path and imported
facts (function)      the shared acme sessions imported, plus three distilled facts of
                      acme-api (tests/integration/acme_facts.py); their ids by name
"""

import shutil
from pathlib import Path

import pytest

from server.ingest.importer import ImportFilters, SessionImporter
from server.service.memory import MemoryService
from tests.fixture_sessions import CLAUDE_PROJECTS
from tests.integration.acme_facts import PAGINATION, PNPM, RATE_LIMIT, remember


@pytest.fixture
async def imported(service: MemoryService, tmp_path: Path) -> Path:
    """A copy of the shared Claude Code transcripts, imported; returns the copied folder."""
    projects = tmp_path / "projects"
    shutil.copytree(CLAUDE_PROJECTS, projects)
    await SessionImporter(service, ImportFilters()).run(projects)
    return projects


@pytest.fixture
async def facts(service: MemoryService) -> dict[str, int]:
    """The acme fixture sessions imported, plus three distilled facts of acme-api."""
    await SessionImporter(service, ImportFilters()).run(CLAUDE_PROJECTS)
    return {
        "pnpm": await remember(service, PNPM, "preference"),
        "pagination": await remember(service, PAGINATION),
        "rate_limit": await remember(service, RATE_LIMIT),
    }
