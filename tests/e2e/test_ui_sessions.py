"""The sessions view lists imported sessions with their state, and shows a session's turns."""

from __future__ import annotations

import httpx
import pytest
from playwright.async_api import expect

from tests.e2e.conftest import S1, Seeded, Ui

pytestmark = pytest.mark.e2e


async def test_sessions_show_import_and_distill_state_and_turns(
    ui: Ui, api: httpx.AsyncClient, seeded: Seeded
) -> None:
    page = (await api.get("/api/sessions?limit=50")).json()
    await ui.open("/ui/sessions")

    rows = ui.page.locator("table.sessions tbody tr")
    await expect(rows).to_have_count(page["total"])
    for session in page["sessions"]:
        row = rows.filter(has_text=session["session_id"])
        await expect(row.locator(".session-open")).to_have_text(session["title"])
        await expect(row.locator("td.numeric")).to_have_text(str(session["message_count"]))
        await expect(row.locator(".badge")).to_have_text(session["distill_state"])

    turns = (await api.get(f"/api/memories?session_id={S1}&include_archived=true&limit=500")).json()
    await ui.page.get_by_role("button", name="Add cursor pagination to orders endpoint").click()
    listed = ui.page.locator(".turn")
    await expect(listed).to_have_count(turns["total"])
    await expect(listed.first).to_contain_text("Add cursor-based pagination to GET /orders")
    await ui.screenshot("sessions")

    await ui.page.get_by_role("button", name="Reset all failures").click()
    await expect(
        ui.page.get_by_role("status").filter(has_text="No failed sessions")
    ).to_be_visible()


async def test_a_session_shows_its_prompts_with_the_tool_calls_under_them(
    ui: Ui, api: httpx.AsyncClient, seeded: Seeded
) -> None:
    journal = (await api.get(f"/api/journal?session_id={S1}&limit=500")).json()
    calls = sum(len(entry["calls"]) for entry in journal["entries"])
    failed = [c for e in journal["entries"] for c in e["calls"] if c["success"] is False]

    await ui.open("/ui/sessions")
    await ui.page.get_by_role("button", name="Add cursor pagination to orders endpoint").click()
    shown = ui.page.get_by_role("region", name="What was done")

    await expect(shown.locator(".journal-call")).to_have_count(calls)
    first = shown.locator(".journal-list > li").first
    await expect(first.locator(".journal-prompt")).to_contain_text(
        "Add cursor-based pagination to GET /orders"
    )
    await expect(first.locator(".journal-call").first).to_contain_text("src/routes/orders.ts")
    await expect(shown.locator(".journal-call-failed")).to_have_count(len(failed))
    assert failed, "the fixture session has a call the user rejected"
    await ui.screenshot("session-journal")
