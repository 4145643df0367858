"""What the browser tests share besides fixtures (tests/e2e/conftest.py makes those):

Ui          a page of the UI, with the dialogs and page errors it recorded; `screenshot`
            writes docs/screenshots/<name>.png
Seeded      the service over the seeded database and the ids of the rows seeded for the tests
PNPM_PREFERENCE, HOSTILE_NOTE, SIGNALS_CONFIDENCE   what the seeding puts in (besides the
            shared sessions of tests/fixture_sessions.py)
UI_DIST, CHROMIUM, CHROMIUM_ARGS, VIEWPORT                  the built UI and the browser
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from playwright.async_api import Page, expect

from server.service.memory import MemoryService

REPO = Path(__file__).resolve().parents[2]
UI_DIST = REPO / "ui" / "dist"
SCREENSHOTS = REPO / "docs" / "screenshots"
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
        """Go to `path` and wait until the statistics strip above every page has its answer.

        Until /api/stats answers, the strip is one line ("Loading statistics…"); the figures
        that replace it are taller and push the page down (23 px at 1280x800). A click aimed
        before that lands where the target was: on a loaded machine the Export link's click
        hit the paragraph above it, and no download began. Waiting for the answer, not a
        time, makes the layout final before any action."""
        await self.page.goto(self.base_url + path)
        strip = self.page.get_by_role("region", name="Statistics")
        await expect(strip).to_be_visible()  # rendered, so its loading line can be seen
        await expect(strip.get_by_text("Loading statistics…")).to_have_count(0)

    async def screenshot(self, name: str) -> None:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        await self.page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))
