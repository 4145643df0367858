"""The memory detail pane and page: reader, edit, delete and restore, through the real API."""

from __future__ import annotations

import httpx
import pytest
from fastmcp import Client
from playwright.async_api import expect

from tests.e2e.browser import Seeded, Ui

pytestmark = pytest.mark.e2e


async def test_reader_renders_markdown_and_runs_nothing_from_the_content(
    ui: Ui, seeded: Seeded
) -> None:
    await ui.open(f"/ui/memories/{seeded.hostile_id}")
    detail = ui.page.locator(".memory-detail")
    await expect(detail.locator(".memory-content")).to_contain_text("<script>window.__pwned = 2")

    read = detail.get_by_role("button", name="Read")
    await read.click()

    reader = ui.page.get_by_role("dialog", name=f"Memory #{seeded.hostile_id}")
    await expect(reader).to_be_visible()
    body = reader.locator(".reader-body")
    await expect(body.get_by_role("heading", level=1)).to_have_text("Release checklist")
    await expect(body.locator("strong")).to_have_text("pnpm lint")
    await expect(body.locator("li")).to_have_count(2)
    link = body.get_by_role("link", name="the handbook")
    await expect(link).to_have_attribute("rel", "noopener noreferrer")
    await expect(body).to_contain_text("<img src=x onerror=")
    await expect(body.locator("img, script")).to_have_count(0)

    # An <img onerror> would have fired by now: the broken image loads in no time.
    await ui.page.wait_for_timeout(500)
    assert ui.dialogs == []
    assert await ui.page.evaluate("window.__pwned") is None
    scripts = await ui.page.evaluate(
        "[...document.querySelectorAll('script')].map((s) => s.textContent + (s.src || ''))"
    )
    assert not [text for text in scripts if "__pwned" in text or "alert" in text]
    await ui.screenshot("reader")

    await ui.page.keyboard.press("Tab")
    assert await reader.evaluate("(dialog) => dialog.contains(document.activeElement)")
    await ui.page.keyboard.press("Escape")
    await expect(reader).to_have_count(0)
    await expect(read).to_be_focused()


async def test_edit_delete_and_restore_round_trip_through_the_api(
    ui: Ui, api: httpx.AsyncClient, seeded: Seeded
) -> None:
    memory_id = seeded.pnpm_id
    await ui.open(f"/ui/search?q=pnpm&memory={memory_id}")
    pane = ui.page.locator(".detail-pane")
    await expect(pane.get_by_role("heading", name=f"Memory #{memory_id}")).to_be_visible()

    await pane.get_by_role("button", name="Edit").click()
    edited = "This repository uses pnpm 9 with a frozen lockfile; never npm or yarn."
    await pane.get_by_label("Content").fill(edited)
    await pane.get_by_label("Tags (comma separated)").fill("tooling, decision")
    await pane.get_by_role("button", name="Save").click()
    await expect(pane.get_by_role("status").filter(has_text="Saved.")).to_be_visible()
    await expect(pane.locator(".memory-content")).to_have_text(edited)
    stored = (await api.get(f"/api/memories/{memory_id}")).json()
    assert stored["content"] == edited
    assert stored["tags"] == ["tooling", "decision"]

    await pane.get_by_role("button", name="Delete").click()
    await expect(pane.locator(".badge-danger")).to_have_text("deleted")
    assert (await api.get(f"/api/memories/{memory_id}")).json()["deleted_at"] is not None

    await pane.get_by_role("button", name="Restore").click()
    await expect(pane.get_by_role("status").filter(has_text="Restored.")).to_be_visible()
    await expect(pane.locator(".badge-danger")).to_have_count(0)
    assert (await api.get(f"/api/memories/{memory_id}")).json()["deleted_at"] is None


async def test_related_memories_navigate_to_each_other(
    ui: Ui, api: httpx.AsyncClient, seeded: Seeded
) -> None:
    related = (await api.get(f"/api/memories/{seeded.pnpm_id}/related?limit=5")).json()
    await ui.open(f"/ui/memories/{seeded.pnpm_id}")

    first = ui.page.locator(".related-item").first
    await expect(first).to_contain_text(related[0]["preview"][:40])
    await first.click()

    heading = ui.page.get_by_role("heading", name=f"Memory #{related[0]['id']}")
    await expect(heading).to_be_visible()
    assert ui.page.url.endswith(f"/ui/memories/{related[0]['id']}")


async def test_a_link_set_through_mcp_shows_in_rest_and_in_the_reader(
    ui: Ui, api: httpx.AsyncClient, seeded: Seeded
) -> None:
    older = await seeded.service.save(
        "Staging deploys go out from the release branch.", project="acme-api"
    )
    newer = await seeded.service.save("Hotfixes ship from a signed tag.", project="acme-api")
    assert newer.memory is not None and newer.memory.supersedes is None  # no rule links these

    async with Client(f"{ui.base_url}/mcp") as mcp:
        result = await mcp.call_tool(
            "update_memory", {"memory_id": newer.id, "supersedes": older.id}
        )
    assert not result.is_error, result.content

    newer_json = (await api.get(f"/api/memories/{newer.id}")).json()
    assert (newer_json["supersedes"], newer_json["supersede_reason"]) == (older.id, "set by hand")
    assert (await api.get(f"/api/memories/{older.id}")).json()["superseded_by"] == newer.id
    chain = (await api.get(f"/api/memories/{older.id}/versions")).json()
    assert [(v["id"], v["current"]) for v in chain] == [(older.id, False), (newer.id, True)]

    await ui.open(f"/ui/memories/{older.id}")
    detail = ui.page.locator(".memory-detail")
    versions = detail.get_by_role("list", name="Versions, oldest first")
    await expect(versions.locator(".version")).to_have_count(2)
    await expect(versions.locator(".version.is-this")).to_contain_text("release branch")
    current = versions.locator(".version.is-current")
    await expect(current).to_contain_text(f"#{newer.id}")
    await expect(current).to_contain_text("set by hand")
    await expect(detail.locator(".meta")).to_contain_text(f"Superseded by#{newer.id}")
    await ui.screenshot("memory-versions")

    await current.get_by_role("button", name=f"#{newer.id}").click()
    await expect(ui.page.get_by_role("heading", name=f"Memory #{newer.id}")).to_be_visible()
    await ui.page.get_by_role("button", name=f"Unlink #{older.id}").click()
    await expect(ui.page.locator(".memory-detail .notice")).to_contain_text("Link removed.")
    assert (await api.get(f"/api/memories/{newer.id}")).json()["supersedes"] is None
    await expect(
        ui.page.locator(".memory-detail").get_by_text("No other version of this fact.")
    ).to_be_visible()
