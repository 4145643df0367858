"""The preferences dashboard shows the server's tiers, and locks and dismisses through it."""

from __future__ import annotations

import httpx
import pytest
from playwright.async_api import expect

from server.core.percent import whole_percent
from tests.e2e.browser import SIGNALS_CONFIDENCE, Seeded, Ui

pytestmark = pytest.mark.e2e


async def test_preferences_show_the_servers_three_tiers(
    ui: Ui, api: httpx.AsyncClient, seeded: Seeded
) -> None:
    tiers = (await api.get("/api/preferences")).json()
    assert [item["confidence"] for item in tiers["signals"]] == [SIGNALS_CONFIDENCE]
    await ui.open("/ui/preferences")

    for tier, title in [("explicit", "Explicit"), ("signals", "Signals"), ("inferred", "Inferred")]:
        section = ui.page.locator(f"section.tier-{tier}")
        await expect(section.get_by_role("heading", level=2)).to_have_text(
            f"{title} {len(tiers[tier])}"
        )
        for item in tiers[tier]:
            text = ui.page.locator(".preference-text").get_by_text(
                item["memory"]["content"], exact=True
            )
            card = section.locator("li.preference").filter(has=text)
            percent = item["confidence_percent"]
            assert percent == whole_percent(item["confidence"])
            await expect(card.locator(".meter-value")).to_have_text(f"{percent}%")

    superseded = ui.page.locator("li.preference.is-superseded")
    await expect(superseded).to_have_count(1)
    await expect(superseded).to_contain_text("per IP address")
    await expect(superseded.locator(".superseded-note")).to_contain_text(
        f"Replaced by #{seeded.replacement_id}: “Rate limits for POST /invoices are per API key"
    )
    await ui.screenshot("preferences")


async def test_locking_a_learned_preference_makes_it_explicit(
    ui: Ui, api: httpx.AsyncClient, seeded: Seeded
) -> None:
    await ui.open("/ui/preferences")
    signals = ui.page.locator("section.tier-signals")
    await signals.locator("li.preference").first.get_by_role("button", name="Lock").click()

    await expect(
        ui.page.get_by_role("status").filter(has_text="it is now explicit")
    ).to_be_visible()
    explicit = ui.page.locator("section.tier-explicit")
    await expect(explicit).to_contain_text("Runs pnpm lint && pnpm test before every commit")
    tiers = (await api.get("/api/preferences")).json()
    assert seeded.signals_id in [item["memory"]["id"] for item in tiers["explicit"]]
    assert tiers["signals"] == []


async def test_dismissing_a_preference_deletes_it_after_confirmation(
    ui: Ui, api: httpx.AsyncClient, seeded: Seeded
) -> None:
    await ui.open("/ui/preferences")
    card = ui.page.locator("section.tier-inferred li.preference").first
    await card.get_by_role("button", name="Dismiss").click()
    await (
        card.get_by_role("group", name="Dismiss this preference?")
        .get_by_role("button", name="Dismiss")
        .click()
    )

    await expect(ui.page.get_by_role("status").filter(has_text="Dismissed")).to_be_visible()
    await expect(ui.page.locator("section.tier-inferred")).to_contain_text("None yet.")
    memory = (await api.get(f"/api/memories/{seeded.inferred_id}")).json()
    assert memory["deleted_at"] is not None
