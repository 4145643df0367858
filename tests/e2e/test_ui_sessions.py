"""The sessions view lists imported sessions with their state, and shows a session's turns."""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx
import pytest
from playwright.async_api import expect

from server.ingest.codex import CODEX
from server.ingest.importer import ImportFilters, SessionImporter
from tests.e2e.browser import Seeded, Ui
from tests.fixture_sessions import S1

CODEX_SESSIONS = Path(__file__).resolve().parents[1] / "fixtures" / "codex" / "sessions"

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


async def test_reset_all_failures_is_offered_only_while_a_session_has_failed(
    ui: Ui, seeded: Seeded
) -> None:
    reset_all = ui.page.get_by_role("button", name="Reset all failures")
    await ui.open("/ui/sessions")
    await expect(ui.page.locator("table.sessions tbody tr").first).to_be_visible()
    await expect(reset_all).to_have_count(0)

    await seeded.service.learning.record_distill_failure(S1, "the model timed out")
    await ui.open("/ui/sessions")
    await reset_all.click()
    await expect(
        ui.page.get_by_role("status").filter(has_text="1 session set back to pending")
    ).to_be_visible()
    await expect(reset_all).to_have_count(0)


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


async def test_sessions_and_search_narrow_to_one_agent(
    ui: Ui, api: httpx.AsyncClient, seeded: Seeded, tmp_path: Path
) -> None:
    """Claude Code and Codex sessions side by side: the "From" filter keeps one agent's."""
    codex_root = shutil.copytree(CODEX_SESSIONS, tmp_path / "codex-sessions")
    imported = await SessionImporter(seeded.service, ImportFilters(), agent=CODEX).run(codex_root)
    assert imported.sessions >= 2 and not imported.errors
    codex = (await api.get("/api/sessions", params={"source": "codex"})).json()

    await ui.open("/ui/sessions")
    await ui.page.get_by_label("From").select_option("codex")
    rows = ui.page.locator("table.sessions tbody tr")
    await expect(rows).to_have_count(codex["total"])
    for session in codex["sessions"]:
        await expect(rows.filter(has_text=session["session_id"])).to_contain_text("Codex CLI")
    assert "source=codex" in ui.page.url

    question = "how are invoice numbers assigned per tenant?"
    await ui.open(f"/ui/search?q={question}")
    results = ui.page.locator(".result")
    await expect(results.locator(".result-source", has_text="Claude Code").first).to_be_visible()
    await ui.page.get_by_label("From").select_option("codex")
    await expect(results.locator(".result-source", has_text="Claude Code")).to_have_count(0)
    # The page's own request: hybrid, 30 hits, its default similarity floor.
    body = {"query": question, "source": "codex", "limit": 30, "min_similarity": 0.15}
    wanted = len((await api.post("/api/search", json=body)).json()["hits"])
    assert wanted >= 1
    await expect(results).to_have_count(wanted)
    await expect(results.locator(".result-source", has_text="Codex CLI")).to_have_count(wanted)
