"""The timeline view: the river of memories, the stat strip, and opening a memory from a dot."""

from __future__ import annotations

import httpx
import pytest
from playwright.async_api import expect

from tests.e2e.browser import Seeded, Ui

pytestmark = pytest.mark.e2e

# The dot whose centre is on top there (dots of one session can overlap), so a real click hits it.
TOPMOST_DOT = """() => {
  for (const dot of document.querySelectorAll('.river circle.dot')) {
    const box = dot.getBoundingClientRect();
    const hit = document.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2);
    if (hit === dot || hit?.parentElement === dot) return Number(dot.dataset.id);
  }
  return null;
}"""


async def test_stat_strip_and_lanes_show_the_servers_figures(
    ui: Ui, api: httpx.AsyncClient, seeded: Seeded
) -> None:
    stats = (await api.get("/api/stats")).json()
    await ui.open("/ui/")

    memories = ui.page.locator(".stat", has_text="memories").first.locator("dd")
    await expect(memories).to_have_text(str(stats["active"]))
    pending = ui.page.locator(".stat", has_text="pending distillation").locator("dd")
    await expect(pending).to_have_text(str(stats["sessions"]["pending"]))
    await expect(ui.page.locator(".river circle.dot")).to_have_count(stats["active"])
    lanes = sorted(stats["by_project"].items(), key=lambda item: (-item[1], item[0]))
    await expect(ui.page.locator(".lane-label")).to_have_text(
        [f"{project or '(no project)'} · {count}" for project, count in lanes]
    )
    await expect(ui.page.locator(".health")).to_contain_text("DB ok")
    await ui.screenshot("timeline")


async def test_clicking_a_timeline_dot_opens_its_detail(
    ui: Ui, api: httpx.AsyncClient, seeded: Seeded
) -> None:
    await ui.open("/ui/")
    await expect(ui.page.locator(".river circle.dot").first).to_be_visible()
    memory_id = await ui.page.evaluate(TOPMOST_DOT)
    assert memory_id is not None

    await ui.page.locator(f'circle.dot[data-id="{memory_id}"]').click()

    pane = ui.page.locator(".detail-pane")
    await expect(pane.get_by_role("heading", name=f"Memory #{memory_id}")).to_be_visible()
    stored = (await api.get(f"/api/memories/{memory_id}")).json()
    await expect(pane.locator(".memory-content")).to_have_text(stored["content"])
    await expect(pane.locator(".related-item").first).to_be_visible()
    assert ui.page.url.endswith(f"?memory={memory_id}")
    await ui.screenshot("detail")


async def test_a_dot_opens_from_the_keyboard(ui: Ui, seeded: Seeded) -> None:
    await ui.open("/ui/")
    newest = ui.page.locator('circle.dot[tabindex="0"]')
    await expect(newest).to_have_count(1)
    await newest.focus()
    await ui.page.keyboard.press("ArrowLeft")
    focused = await ui.page.evaluate("document.activeElement.dataset.id")

    await ui.page.keyboard.press("Enter")

    pane = ui.page.locator(".detail-pane")
    await expect(pane.get_by_role("heading", name=f"Memory #{focused}")).to_be_visible()
    await ui.page.keyboard.press("Escape")
    await expect(pane).to_have_count(0)
