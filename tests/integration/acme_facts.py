"""The acme-api world the hook, recall and lesson tests share: where the shared fixtures are,
the project they describe, three facts about it, and the two lessons the agents' hook tests
install.

PROJECT_PATH        the cwd of every hook payload in shared/fixtures/hooks (their session is
                    S3 of tests/fixture_sessions.py)
PNPM, PAGINATION, RATE_LIMIT   distilled facts of acme-api, saved with `remember`
STAGING, FORCE_PUSH            a `warn` and an `ask` lesson for Bash
import_acme         the fixtures imported as a user imports them: sessions, claude.ai, notes
"""

from __future__ import annotations

from server.core.models.lessons import LessonDraft
from server.ingest.documents import import_claude_ai, import_text
from server.ingest.importer import ImportFilters, SessionImporter
from server.service.memory import MemoryService
from tests.fixture_sessions import CLAUDE_PROJECTS, SHARED_FIXTURES

PROJECT_PATH = "/home/dev/acme-api"  # the cwd of every fixture payload

PNPM = "Use pnpm, never npm, in acme-api: npm install breaks the pnpm lockfile."
PAGINATION = (
    "Decision: keyset pagination on GET /orders: limit 1-100 (default 20), cursor is base64url "
    "of {createdAt, id}, ordered by (created_at DESC, id DESC)."
)
RATE_LIMIT = (
    "Rate limit POST /invoices per API key (x-api-key) at 30/min; anonymous requests without a "
    "key are limited per IP at 10/min."
)

STAGING = LessonDraft(
    pattern=r"\bstaging\b",
    message="Never run load tests against staging: use the local stack (pnpm db:up).",
    tool="Bash",
)
FORCE_PUSH = LessonDraft(
    pattern=r"git push .*(--force|-f\b)",
    message="Force-pushing rewrote main twice; open a PR instead.",
    tool="Bash",
    strictness="ask",
)


async def remember(service: MemoryService, content: str, kind: str = "distilled") -> int:
    """Save `content` as a memory of acme-api; its id."""
    outcome = await service.save(
        content, project="acme-api", project_path=PROJECT_PATH, kind=kind, force=True
    )
    return outcome.id


async def import_acme(service: MemoryService) -> None:
    await SessionImporter(service, ImportFilters()).run(CLAUDE_PROJECTS)
    await import_claude_ai(service, SHARED_FIXTURES / "claude-ai" / "conversations.json")
    await import_text(service, [SHARED_FIXTURES / "notes"])
