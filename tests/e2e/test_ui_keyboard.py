"""Keyboard use: Ctrl+K / Cmd+K focuses the search box from anywhere."""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from tests.e2e.browser import Seeded, Ui

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("shortcut", ["Control+k", "Meta+k"])
async def test_shortcut_focuses_search_from_another_view(
    ui: Ui, seeded: Seeded, shortcut: str
) -> None:
    await ui.open("/ui/preferences")
    await expect(ui.page.locator("section.tier-explicit")).to_be_visible()

    await ui.page.keyboard.press(shortcut)

    await expect(ui.page.get_by_label("Search memories")).to_be_focused()
    assert ui.page.url.endswith("/ui/search")


async def test_shortcut_brings_focus_back_to_the_search_box(ui: Ui, seeded: Seeded) -> None:
    await ui.open("/ui/search?q=pnpm")
    box = ui.page.get_by_label("Search memories")
    await expect(ui.page.locator(".result").first).to_be_visible()
    await ui.page.locator(".result-open").first.focus()

    await ui.page.keyboard.press("Control+k")

    await expect(box).to_be_focused()
    assert await box.evaluate("(input) => input.selectionEnd - input.selectionStart") == 4
