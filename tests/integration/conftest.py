"""The database, model and server fixtures live in tests/db_fixtures.py, a plugin loaded by
tests/conftest.py so that every test group (integration, reliability, security, e2e) shares
one embedded Postgres and one model. The helpers are re-exported for older imports; the
fixture here is the one the learning-job tests share: the shared Claude Code fixtures imported.
"""

import shutil
from pathlib import Path

import pytest

from server.ingest.importer import ImportFilters, SessionImporter
from server.service.memory import MemoryService
from tests.agent_clis import agent_clis  # noqa: F401 (the fixture, for the agents' CLI tests)
from tests.db_fixtures import free_port, serving

__all__ = ["free_port", "serving"]

SHARED_FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures"


@pytest.fixture
async def imported(service: MemoryService, tmp_path: Path) -> Path:
    """A copy of the shared Claude Code transcripts, imported; returns the copied folder."""
    projects = tmp_path / "projects"
    shutil.copytree(SHARED_FIXTURES / "claude-code" / "projects", projects)
    await SessionImporter(service, ImportFilters()).run(projects)
    return projects
