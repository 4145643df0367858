"""With CLAUDE_MEMORY_TOKEN set, the UI asks for the token once and sends it on every request."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, Request, expect

from server.app import create_app
from server.core.config import Secret, Settings
from tests.db_fixtures import serving
from tests.e2e.browser import VIEWPORT, Seeded

pytestmark = pytest.mark.e2e

TOKEN = "e2e-token-0123456789abcdef"


@pytest.fixture
async def guarded_url(seeded: Seeded, settings: Settings, ui_dist: Path) -> AsyncIterator[str]:
    guarded = dataclasses.replace(settings, claude_memory_token=Secret(TOKEN))
    async with serving(create_app(guarded, seeded.service, ui_dist=ui_dist)) as url:
        yield url


async def test_ui_asks_for_the_token_once_and_sends_it_everywhere(
    chromium: Browser, guarded_url: str, seeded: Seeded
) -> None:
    context = await chromium.new_context(viewport=VIEWPORT)
    page = await context.new_page()
    sent: list[tuple[str, str | None]] = []

    def record(request: Request) -> None:
        path = request.url.removeprefix(guarded_url)
        if path.startswith(("/api/", "/health")):
            sent.append((path, request.headers.get("authorization")))

    page.on("request", record)
    try:
        await page.goto(f"{guarded_url}/ui/search?q=pnpm")
        dialog = page.get_by_role("dialog", name="Access token needed")
        await expect(dialog).to_be_visible()
        await dialog.get_by_label("Token").fill("wrong-token-0123456789")
        await dialog.get_by_role("button", name="Connect").click()
        await expect(dialog).to_contain_text("The server refused that token")

        await dialog.get_by_label("Token").fill(TOKEN)
        await dialog.get_by_role("button", name="Connect").click()

        await expect(dialog).to_have_count(0)
        await expect(page.locator(".result").first).to_be_visible()
        stored = await page.evaluate("sessionStorage.getItem('claude-memory.token')")
        assert stored == TOKEN

        sent.clear()
        await page.get_by_role("link", name="Preferences").click()
        await expect(page.locator("section.tier-explicit")).to_be_visible()
        await page.reload()
        await expect(page.locator("section.tier-explicit")).to_be_visible()
        await expect(page.get_by_role("dialog")).to_have_count(0)
        assert sent, "no API request was seen"
        assert {path.split("?")[0] for path, _ in sent} >= {"/health", "/api/preferences"}
        assert all(header == f"Bearer {TOKEN}" for _, header in sent), sent
    finally:
        await context.close()
