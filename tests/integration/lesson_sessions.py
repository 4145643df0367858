"""The sessions lessons are proposed from: the shared Claude Code fixtures (S1 to S4) and the
ones in tests/fixtures/lesson_sessions, written for the proposal rules (see that folder's
README). `import_sessions` imports both with the real importer.
"""

from __future__ import annotations

from pathlib import Path

from server.ingest.importer import ImportFilters, SessionImporter
from server.service.memory import MemoryService
from tests.fixture_sessions import CLAUDE_PROJECTS

REPO = Path(__file__).resolve().parents[2]
OWN_PROJECTS = REPO / "tests" / "fixtures" / "lesson_sessions" / "claude-code" / "projects"


async def import_sessions(service: MemoryService) -> None:
    for root in (CLAUDE_PROJECTS, OWN_PROJECTS):
        summary = await SessionImporter(service, ImportFilters()).run(root)
        assert summary.errors == []
