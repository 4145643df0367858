"""Settings: exports, deleting a project (count first, then exactly that many), the deleted list."""

from __future__ import annotations

import httpx
import pytest
from playwright.async_api import expect

from tests.e2e.browser import Seeded, Ui

pytestmark = pytest.mark.e2e


async def test_project_delete_removes_exactly_the_shown_count(
    ui: Ui, api: httpx.AsyncClient, seeded: Seeded
) -> None:
    before = (await api.get("/api/stats")).json()
    await ui.open("/ui/settings")

    await ui.page.get_by_label("Project", exact=True).select_option("acme.web_ui")
    await ui.page.get_by_role("button", name="Count its memories").click()
    shown = int(await ui.page.get_by_test_id("matched-count").inner_text())
    assert shown == before["by_project"]["acme.web_ui"]
    await ui.screenshot("settings")

    noun = "memory" if shown == 1 else "memories"
    await ui.page.get_by_role("button", name=f"Delete {shown} {noun}").click()

    await expect(ui.page.get_by_role("status").filter(has_text=f"Deleted {shown}")).to_be_visible()
    after = (await api.get("/api/stats")).json()
    assert after["active"] == before["active"] - shown
    assert after["deleted"] == before["deleted"] + shown
    left = (await api.get("/api/memories?project=acme.web_ui&include_archived=true")).json()
    assert left["total"] == 0
    deleted = ui.page.locator("#deleted-title .count")
    await expect(deleted).to_have_text(str(after["deleted"]))


async def test_deleted_memories_can_be_restored_and_purged(
    ui: Ui, api: httpx.AsyncClient, seeded: Seeded
) -> None:
    await api.delete(f"/api/memories/{seeded.pnpm_id}")
    await api.delete(f"/api/memories/{seeded.inferred_id}")
    await ui.open("/ui/settings")

    listed = ui.page.locator(".deleted-list li")
    await expect(listed).to_have_count(2)
    await listed.filter(has_text=f"#{seeded.pnpm_id}").get_by_role("button", name="Restore").click()
    await expect(ui.page.get_by_role("status").filter(has_text="Restored")).to_be_visible()
    assert (await api.get(f"/api/memories/{seeded.pnpm_id}")).json()["deleted_at"] is None

    row = listed.filter(has_text=f"#{seeded.inferred_id}")
    await row.get_by_role("button", name="Purge").click()
    await row.get_by_role("group").get_by_role("button", name="Purge").click()
    await expect(ui.page.get_by_role("status").filter(has_text="Purged")).to_be_visible()
    assert (await api.get(f"/api/memories/{seeded.inferred_id}")).status_code == 404
    await expect(listed).to_have_count(0)


async def test_wipe_all_needs_two_steps_and_is_restorable(
    ui: Ui, api: httpx.AsyncClient, seeded: Seeded
) -> None:
    active = (await api.get("/api/stats")).json()["active"]
    await ui.open("/ui/settings")

    await ui.page.get_by_role("button", name="Wipe all memories…").click()
    wipe = ui.page.get_by_role("button", name=f"Delete {active} memories")
    await expect(wipe).to_be_disabled()
    await ui.page.get_by_label("Confirmation").fill("delete everything")
    await wipe.click()

    await expect(ui.page.get_by_role("status").filter(has_text=f"Deleted {active}")).to_be_visible()
    assert (await api.get("/api/stats")).json()["active"] == 0
    restored = (await api.post(f"/api/memories/{seeded.pnpm_id}/restore")).json()
    assert restored["deleted_at"] is None


async def test_export_links_download_the_servers_files(ui: Ui, seeded: Seeded) -> None:
    await ui.open("/ui/settings")
    for name, suffix in [("Export as JSON", ".json"), ("Export as Markdown", ".md")]:
        async with ui.page.expect_download() as waiting:
            await ui.page.get_by_role("link", name=name).click()
        download = await waiting.value
        assert download.suggested_filename.endswith(suffix)
        path = await download.path()
        assert "This repository uses pnpm, never npm." in path.read_text(encoding="utf-8")
