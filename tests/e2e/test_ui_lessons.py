"""The Lessons page lists the server's lessons, and disables and enables them through it;
lessons proposed from the fixture sessions' journal are accepted or dismissed there."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from playwright.async_api import Locator, expect

from server.learning.lesson_proposals_job import propose_lessons
from tests.e2e.browser import Seeded, Ui

pytestmark = pytest.mark.e2e

WARN = {
    "tool": "Bash",
    "pattern": r"k6 run .*staging",
    "project": "acme-api",
    "message": "Don't run load tests against staging: use the local stack (make stack-up).",
    "strictness": "warn",
}
ASK = {
    "pattern": r"prisma migrate reset",
    "message": "Resetting the database drops the seeded invoices; ask before doing it.",
    "strictness": "ask",
    "origin": "agent",
}


async def _create(api: httpx.AsyncClient, body: dict[str, Any]) -> dict[str, Any]:
    response = await api.post("/api/lessons", json=body)
    assert response.status_code == 201, response.text
    return response.json()


async def _stored(api: httpx.AsyncClient, lesson_id: int) -> dict[str, Any]:
    response = await api.get("/api/lessons")
    assert response.status_code == 200, response.text
    (lesson,) = [item for item in response.json()["lessons"] if item["id"] == lesson_id]
    return lesson


def _card(ui: Ui, message: str) -> Locator:
    region = ui.page.get_by_role("region", name="Lessons")
    return region.locator("li.lesson").filter(
        has=ui.page.locator(".lesson-message").get_by_text(message)
    )


async def test_lessons_have_their_own_page_in_the_nav_and_left_preferences(
    ui: Ui, api: httpx.AsyncClient
) -> None:
    await _create(api, WARN)
    await ui.open("/ui/preferences")
    await expect(ui.page.get_by_role("heading", name="Preferences", exact=True)).to_be_visible()
    await expect(ui.page.get_by_role("region", name="Lessons")).to_have_count(0)

    await ui.page.get_by_role("navigation").get_by_role("link", name="Lessons").click()
    await expect(ui.page).to_have_url(f"{ui.base_url}/ui/lessons")
    await expect(ui.page.get_by_role("heading", level=1, name="Lessons")).to_be_visible()
    await expect(_card(ui, WARN["message"])).to_have_count(1)
    await expect(ui.page).to_have_title("Lessons · claude-memory")


async def test_lessons_are_listed_with_their_pattern_and_strictness(
    ui: Ui, api: httpx.AsyncClient
) -> None:
    await _create(api, WARN)
    await _create(api, ASK)
    await ui.open("/ui/lessons")

    region = ui.page.get_by_role("region", name="Lessons")
    await expect(region.get_by_role("heading", name="Lessons")).to_be_visible()
    await expect(region.locator("li.lesson")).to_have_count(2)

    warn = _card(ui, WARN["message"])
    await expect(warn.locator(".lesson-tool")).to_have_text("Bash")
    await expect(warn.locator("code.lesson-pattern")).to_have_text(WARN["pattern"])
    await expect(warn.locator(".lesson-project")).to_have_text("acme-api")
    await expect(warn.locator(".lesson-strictness")).to_have_text("warn")
    await expect(warn.locator(".lesson-origin")).to_have_text("from user")

    ask = _card(ui, ASK["message"])
    await expect(ask.locator(".lesson-tool")).to_have_text("any tool")
    await expect(ask.locator("code.lesson-pattern")).to_have_text(ASK["pattern"])
    await expect(ask.locator(".lesson-project")).to_have_text("all projects")
    await expect(ask.locator(".lesson-strictness")).to_have_text("asks first")
    await expect(ask.locator(".lesson-origin")).to_have_text("from agent")
    await region.scroll_into_view_if_needed()
    await ui.screenshot("lessons")


async def test_disabling_a_lesson_mutes_it_and_enabling_restores_it(
    ui: Ui, api: httpx.AsyncClient
) -> None:
    kept = await _create(api, WARN)
    lesson = await _create(api, ASK)
    await ui.open("/ui/lessons")
    card = _card(ui, ASK["message"])

    await card.get_by_role("button", name="Disable").click()

    await expect(
        ui.page.get_by_role("status").filter(has_text="Disabled the lesson")
    ).to_be_visible()
    await expect(card).to_have_class("lesson is-inactive")
    await expect(card.locator(".lesson-disabled")).to_have_text("disabled")
    await expect(card.get_by_role("button", name="Enable")).to_be_visible()
    assert (await _stored(api, lesson["id"]))["active"] is False
    assert (await _stored(api, kept["id"]))["active"] is True
    await expect(_card(ui, WARN["message"]).locator(".lesson-disabled")).to_have_count(0)

    await card.get_by_role("button", name="Enable").click()

    await expect(
        ui.page.get_by_role("status").filter(has_text="Enabled the lesson")
    ).to_be_visible()
    await expect(card).to_have_class("lesson")
    await expect(card.locator(".lesson-disabled")).to_have_count(0)
    await expect(card.get_by_role("button", name="Disable")).to_be_visible()
    assert (await _stored(api, lesson["id"]))["active"] is True


async def test_adding_a_lesson_from_the_form_stores_it_and_shows_a_refused_pattern(
    ui: Ui, api: httpx.AsyncClient
) -> None:
    await ui.open("/ui/lessons")
    region = ui.page.get_by_role("region", name="Lessons")
    await expect(region).to_contain_text("No lessons yet.")
    form = region.get_by_role("form", name="Add a lesson")
    await form.get_by_label("Message").fill("Deploy with make release, never by hand.")
    await form.get_by_label("Pattern").fill("kubectl apply (")
    await form.get_by_label("Tool").fill("Bash")
    await form.get_by_label("When it matches").select_option("ask")

    await form.get_by_role("button", name="Add lesson").click()

    await expect(form.get_by_role("alert")).to_contain_text("not a valid regular expression")
    assert (await api.get("/api/lessons")).json()["lessons"] == []

    await form.get_by_label("Pattern").fill("kubectl apply")
    await form.get_by_role("button", name="Add lesson").click()

    card = _card(ui, "Deploy with make release, never by hand.")
    await expect(card.locator(".lesson-strictness")).to_have_text("asks first")
    await expect(form.get_by_label("Pattern")).to_have_value("")
    (stored,) = (await api.get("/api/lessons")).json()["lessons"]
    assert {key: stored[key] for key in ("tool", "pattern", "project", "strictness", "origin")} == {
        "tool": "Bash",
        "pattern": "kubectl apply",
        "project": "",
        "strictness": "ask",
        "origin": "user",
    }


async def test_a_proposed_lesson_is_accepted_or_dismissed_from_its_card(
    ui: Ui, api: httpx.AsyncClient, seeded: Seeded
) -> None:
    summary = await propose_lessons(seeded.service, project="acme-api")
    by_pattern = {lesson["pattern"]: lesson for lesson in summary.lessons}
    npm, staging = by_pattern[r"\bnpm\b"], by_pattern[r"\bstaging\b"]
    await ui.open("/ui/lessons?project=acme-api")
    npm_card = _card(ui, npm["message"])
    staging_card = _card(ui, staging["message"])

    await expect(npm_card.locator(".lesson-proposed")).to_have_text("proposed")
    await expect(npm_card).to_have_class("lesson is-inactive")
    await expect(npm_card.locator(".lesson-origin")).to_have_text(
        "from a failed call corrected in session 3f6c2a1e"
    )
    await expect(staging_card.locator(".lesson-origin")).to_have_text(
        "from a correction in session 9b2d7e40"
    )
    await npm_card.scroll_into_view_if_needed()
    await ui.screenshot("lessons-proposed")

    await npm_card.get_by_role("button", name="Accept").click()

    await expect(
        ui.page.get_by_role("status").filter(has_text="Accepted the lesson")
    ).to_be_visible()
    await expect(npm_card).to_have_class("lesson")
    await expect(npm_card.locator(".lesson-proposed")).to_have_count(0)
    await expect(npm_card.get_by_role("button", name="Disable")).to_be_visible()
    accepted = await _stored(api, npm["id"])
    assert (accepted["active"], accepted["proposed"]) == (True, False)

    await staging_card.get_by_role("button", name="Dismiss").click()

    await expect(
        ui.page.get_by_role("status").filter(has_text="Dismissed the proposed lesson")
    ).to_be_visible()
    await expect(staging_card.locator(".lesson-disabled")).to_have_text("disabled")
    await expect(staging_card.get_by_role("button", name="Enable")).to_be_visible()
    dismissed = await _stored(api, staging["id"])
    assert (dismissed["active"], dismissed["proposed"]) == (False, False)
