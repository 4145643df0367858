"""Browser tests: Debian's Chromium, driven by Playwright, against the built UI served by the
real app over a database filled from the shared fixtures with the real importer.

The app is served inside the test's own event loop (`serving` from tests/db_fixtures.py), so
the browser is driven with Playwright's async API: the sync API (pytest-playwright's `page`
fixture) would block that loop and the server with it.

pg_url, embedder, pool, settings, service       from tests/db_fixtures.py (root plugin)
Seeded, Ui and the seeded data                  from tests/e2e/browser.py
ui_dist (session)       ui/dist/index.html must exist: `cd ui && npm ci && npm run build`
chromium (session)      /usr/bin/chromium launched once, headless
seed_template (session) a database filled once: the Claude Code fixtures through
                        SessionImporter (embedded by the real model), the pnpm preference, learned
                        and superseded preferences, and a note whose content carries HTML and script
seeded_settings (function)  `settings` pointing at this test's copy of that database
                        (`CREATE DATABASE … TEMPLATE`), dropped afterwards
seeded (function)       a MemoryService over that copy, and the seeded rows' ids
ui_url (function)       the real app (create_app with ui_dist) over `seeded`, on a free port
ui (function)           a fresh page at 1280x800 that records every JS dialog and page error
api (function)          an httpx client on ui_url, to check what the server now holds
"""

from __future__ import annotations

import math
import shutil
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from playwright.async_api import Browser, Dialog, async_playwright, expect

from server.app import create_app
from server.core.config import Secret, Settings
from server.core.models.views import PreferenceTier
from server.db.embedded import EmbeddedPostgres
from server.db.migrate import apply_migrations
from server.db.pool import open_pool
from server.domain.preferences import (
    BASE_CONFIDENCE,
    FADE_FLOOR,
    FADE_HALF_LIFE_DAYS,
    SESSION_BONUS,
)
from server.ingest.importer import ImportFilters, SessionImporter
from server.service.embeddings import Embedder
from server.service.memory import MemoryService
from server.service.reembed import ensure_model_recorded
from tests.db_fixtures import create_database, database_url, drop_databases, serving
from tests.e2e.browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    HOSTILE_NOTE,
    PNPM_PREFERENCE,
    SIGNALS_CONFIDENCE,
    UI_DIST,
    VIEWPORT,
    Seeded,
    Ui,
)
from tests.fixture_sessions import CLAUDE_PROJECTS, S1, S3

expect.set_options(timeout=15_000)


@pytest.fixture(scope="session")
def ui_dist() -> Path:
    if not (UI_DIST / "index.html").is_file():
        pytest.fail(
            f"{UI_DIST / 'index.html'} is missing: build the UI first "
            "(cd ui && npm ci && npm run build)",
            pytrace=False,
        )
    return UI_DIST


@pytest.fixture(scope="session")
async def chromium() -> AsyncIterator[Browser]:
    if not CHROMIUM.is_file():
        pytest.fail(
            f"{CHROMIUM} not found: install Debian's chromium (apt-get install -y chromium)",
            pytrace=False,
        )
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS
        )
        yield browser
        await browser.close()


def last_seen_for(target: float, tier: PreferenceTier, sessions: int) -> datetime:
    """When the last evidence must have been seen for a learned preference with `sessions`
    supporting sessions to have `target` confidence now (server/domain/preferences.py's fade, solved
    for the age)."""
    supported = BASE_CONFIDENCE[tier] + SESSION_BONUS * (sessions - 1)
    fresh = (target / supported - FADE_FLOOR) / (1 - FADE_FLOOR)
    age_days = FADE_HALF_LIFE_DAYS * math.log2(1 / fresh)
    return datetime.now(UTC) - timedelta(days=age_days)


async def _save(service: MemoryService, content: str, **fields: object) -> int:
    outcome = await service.save(content, **fields)  # type: ignore[arg-type]
    assert outcome.status == "saved", (outcome.status, content)
    return outcome.id


@dataclass(frozen=True, slots=True)
class SeedTemplate:
    """A database filled once with what every browser test starts from, and its rows' ids."""

    name: str
    ids: dict[str, int]


async def _seed(service: MemoryService, projects: Path) -> dict[str, int]:
    shutil.copytree(CLAUDE_PROJECTS, projects)
    summary = await SessionImporter(service, ImportFilters()).run(projects)
    assert summary.turns_imported > 0 and not summary.errors, summary

    pnpm_id = await _save(service, PNPM_PREFERENCE, kind="preference", project="acme-api")
    signals_id = await _save(
        service,
        "Runs pnpm lint && pnpm test before every commit instead of relying on the husky hook.",
        kind="preference",
        project="acme-api",
        source="signals",
        metadata={
            "evidence_sessions": [S1, S3],
            "last_seen": last_seen_for(SIGNALS_CONFIDENCE, "signals", 2).isoformat(),
        },
        force=True,
    )
    inferred_id = await _save(
        service,
        "Prefers named exports; avoids default exports in TypeScript modules.",
        kind="preference",
        source="distill",
        metadata={"evidence_sessions": [S1]},
        force=True,
    )
    superseded_id = await _save(
        service,
        "Rate limits for POST /invoices are per IP address.",
        kind="preference",
        project="acme-api",
        created_at=datetime(2026, 4, 21, 14, 0, tzinfo=UTC),
        force=True,
    )
    replacement_id = await _save(
        service,
        "Rate limits for POST /invoices are per API key, not per IP address.",
        kind="preference",
        project="acme-api",
        created_at=datetime(2026, 4, 21, 14, 5, tzinfo=UTC),
        force=True,
    )
    hostile_id = await _save(
        service, HOSTILE_NOTE, kind="note", project="acme-api", tags=["release"], force=True
    )
    return {
        "pnpm_id": pnpm_id,
        "hostile_id": hostile_id,
        "signals_id": signals_id,
        "inferred_id": inferred_id,
        "superseded_id": superseded_id,
        "replacement_id": replacement_id,
    }


@pytest.fixture(scope="session")
async def seed_template(
    pg_server: EmbeddedPostgres, embedder: Embedder, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[SeedTemplate]:
    """The seed imported (and embedded) once per run; each test gets a copy of it, since
    importing the fixtures took most of every browser test's time."""
    name = create_database(pg_server)
    url = database_url(pg_server, name)
    await apply_migrations(url)
    folder = tmp_path_factory.mktemp("seed")
    pool = await open_pool(url, min_size=1, max_size=4)
    try:
        await ensure_model_recorded(pool, embedder)
        settings = Settings(database_url=Secret(url), claude_memory_home=folder / "data")
        ids = await _seed(MemoryService(pool, embedder, settings), folder / "projects")
    finally:
        await pool.close()
    yield SeedTemplate(name, ids)
    drop_databases(pg_server, [name])


@pytest.fixture
async def seeded_settings(
    pg_server: EmbeddedPostgres, seed_template: SeedTemplate, settings: Settings
) -> AsyncIterator[Settings]:
    """`settings` pointing at this test's own copy of the seeded database."""
    name = create_database(pg_server, template=seed_template.name)
    yield replace(settings, database_url=Secret(database_url(pg_server, name)))
    drop_databases(pg_server, [name])


@pytest.fixture
async def seeded(
    seeded_settings: Settings, seed_template: SeedTemplate, embedder: Embedder
) -> AsyncIterator[Seeded]:
    pool = await open_pool(seeded_settings.database_url.reveal(), min_size=1, max_size=8)
    try:
        service = MemoryService(pool, embedder, seeded_settings)
        yield Seeded(service=service, **seed_template.ids)
    finally:
        await pool.close()


@pytest.fixture
async def ui_url(seeded: Seeded, seeded_settings: Settings, ui_dist: Path) -> AsyncIterator[str]:
    async with serving(create_app(seeded_settings, seeded.service, ui_dist=ui_dist)) as url:
        yield url


@pytest.fixture
async def ui(chromium: Browser, ui_url: str) -> AsyncIterator[Ui]:
    context = await chromium.new_context(viewport=VIEWPORT, color_scheme="light")
    page = await context.new_page()
    recorded = Ui(page=page, base_url=ui_url)

    async def on_dialog(dialog: Dialog) -> None:
        recorded.dialogs.append(dialog.message)
        await dialog.dismiss()

    page.on("dialog", on_dialog)
    page.on("pageerror", lambda error: recorded.errors.append(str(error)))
    yield recorded
    await context.close()
    assert not recorded.errors, f"script errors in the page: {recorded.errors}"


@pytest.fixture
async def api(ui_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=ui_url, timeout=30) as client:
        yield client
