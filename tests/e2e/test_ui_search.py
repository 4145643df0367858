"""The search view: every mode finds the pnpm preference, with the query terms marked."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import expect

from tests.e2e.browser import PNPM_PREFERENCE, Seeded, Ui

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("mode", ["semantic", "keyword", "hybrid"])
async def test_search_in_each_mode_finds_the_pnpm_preference(
    ui: Ui, seeded: Seeded, mode: str
) -> None:
    await ui.open("/ui/search")
    await ui.page.get_by_label("Search memories").fill("pnpm")
    await ui.page.get_by_role("group", name="Mode").get_by_role("button", name=mode).click()

    result = ui.page.locator(".result", has_text=PNPM_PREFERENCE)
    await expect(result).to_have_count(1)
    await expect(result.locator("mark").first).to_have_text("pnpm")
    await expect(result.locator(".result-project")).to_have_text("acme-api")
    await expect(result.locator(".kind-badge")).to_have_text("preference")
    await expect(result.get_by_role("meter")).to_have_count(1)
    assert f"mode={mode}" in ui.page.url or mode == "hybrid"
    if mode == "hybrid":
        await ui.screenshot("search")

    await result.get_by_role("button").click()
    pane = ui.page.locator(".detail-pane")
    await expect(pane.get_by_role("heading", name=f"Memory #{seeded.pnpm_id}")).to_be_visible()


async def test_search_without_results_says_what_to_try(ui: Ui, seeded: Seeded) -> None:
    await ui.open("/ui/search?mode=keyword")
    await ui.page.get_by_label("Search memories").fill("kubernetes helm chart")

    empty = ui.page.locator(".empty-state")
    await expect(empty).to_contain_text("No memories matched")
    await expect(empty).to_contain_text("try semantic or hybrid")


async def test_search_results_show_content_markup_as_text(ui: Ui, seeded: Seeded) -> None:
    # Postgres' text parser drops HTML tags, so look the note up by a word next to them.
    await ui.open("/ui/search?mode=keyword&q=changelog")

    result = ui.page.locator(".result").first
    await expect(result).to_contain_text("<img src=x onerror=")
    await expect(ui.page.locator(".results img, .results script")).to_have_count(0)
    assert ui.dialogs == []
    assert await ui.page.evaluate("window.__pwned") is None


async def test_a_superseded_hit_says_what_replaced_it_and_opens_it(ui: Ui, seeded: Seeded) -> None:
    await ui.open("/ui/search?mode=keyword&q=rate%20limits%20invoices")

    old = ui.page.locator(".result", has_text="per IP address.").filter(has_not_text="per API key")
    current = ui.page.locator(".result", has_text="per API key")
    await expect(current).to_have_count(1)
    await expect(current.locator(".superseded-badge")).to_have_count(0)
    badge = old.get_by_role("button", name=f"replaced by #{seeded.replacement_id}")
    await expect(badge).to_be_visible()
    await expect(old).to_have_class(re.compile(r"\bis-superseded\b"))

    await badge.click()
    pane = ui.page.locator(".detail-pane")
    heading = pane.get_by_role("heading", name=f"Memory #{seeded.replacement_id}")
    await expect(heading).to_be_visible()
