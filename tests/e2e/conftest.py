"""Browser tests: Debian's Chromium, driven by Playwright, against the built UI served by the
real app over a database filled from the shared fixtures with the real importer.

The app is served inside the test's own event loop (`serving` from tests/db_fixtures.py), so
the browser is driven with Playwright's async API: the sync API (pytest-playwright's `page`
fixture) would block that loop and the server with it.

pg_url, embedder, pool, settings, service       from tests/db_fixtures.py (root plugin)
ui_dist (session)       ui/dist/index.html must exist: `cd ui && npm ci && npm run build`
chromium (session)      /usr/bin/chromium launched once, headless
seeded (function)       `service` on emptied tables, filled: the Claude Code fixtures through
                        SessionImporter, the pnpm preference, learned and superseded
                        preferences, and a note whose content carries HTML and script
ui_url (function)       the real app (create_app with ui_dist) over `seeded`, on a free port
ui (function)           a fresh page at 1280x800 that records every JS dialog and page error
api (function)          an httpx client on ui_url, to check what the server now holds
"""

from __future__ import annotations

import math
import shutil
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from playwright.async_api import Browser, Dialog, Page, async_playwright, expect

from server.app import create_app
from server.core.config import Settings
from server.core.models.views import PreferenceTier
from server.domain.preferences import (
    BASE_CONFIDENCE,
    FADE_FLOOR,
    FADE_HALF_LIFE_DAYS,
    SESSION_BONUS,
)
from server.ingest.importer import ImportFilters, SessionImporter
from server.service.memory import MemoryService
from tests.db_fixtures import serving

REPO = Path(__file__).resolve().parents[2]
UI_DIST = REPO / "ui" / "dist"
SCREENSHOTS = REPO / "docs" / "screenshots"
FIXTURES = REPO.parent / "shared" / "fixtures"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORT = {"width": 1280, "height": 800}

S1 = "3f6c2a1e-8b4d-4c9e-a1f7-2d5e9b0c7a41"
S3 = "c71e5d08-2a6f-4b1d-9e34-58f0b2c6d917"
PNPM_PREFERENCE = "This repository uses pnpm, never npm."
HOSTILE_NOTE = """# Release checklist

Run **pnpm lint** and `pnpm test` before tagging; see [the handbook](https://example.org/handbook).

- bump the version
- write the changelog

<img src=x onerror="window.__pwned = 1; alert('img onerror ran')">
<script>window.__pwned = 2; alert('script ran')</script>
"""

# The learned preference's confidence lands on half a percent (40.5%), where rounding rules
# disagree (Python's round says 40, half up says 41); its last_seen is set from today so the
# value does not drift with the date the suite runs.
SIGNALS_CONFIDENCE = 0.405

pytestmark = pytest.mark.e2e

expect.set_options(timeout=15_000)


@dataclass(frozen=True, slots=True)
class Seeded:
    service: MemoryService
    pnpm_id: int
    hostile_id: int
    signals_id: int
    inferred_id: int
    superseded_id: int
    replacement_id: int


@dataclass(slots=True)
class Ui:
    """A page of the UI plus what it did that a user would not see in the DOM."""

    page: Page
    base_url: str
    dialogs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    async def open(self, path: str) -> None:
        await self.page.goto(self.base_url + path)

    async def screenshot(self, name: str) -> None:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        await self.page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))


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


@pytest.fixture
async def seeded(service: MemoryService, tmp_path: Path) -> Seeded:
    projects = tmp_path / "projects"
    shutil.copytree(FIXTURES / "claude-code" / "projects", projects)
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
    return Seeded(
        service=service,
        pnpm_id=pnpm_id,
        hostile_id=hostile_id,
        signals_id=signals_id,
        inferred_id=inferred_id,
        superseded_id=superseded_id,
        replacement_id=replacement_id,
    )


@pytest.fixture
async def ui_url(seeded: Seeded, settings: Settings, ui_dist: Path) -> AsyncIterator[str]:
    async with serving(create_app(settings, seeded.service, ui_dist=ui_dist)) as url:
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
