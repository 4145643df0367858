"""The web UI's Context page (#38): what the hooks injected, how much of it the agent used, and
the memories to retire (never used) or review (used, then corrected).

Receipts are recorded through the service the way the hooks record them, and their verdicts
stored the way a session's import stores them; tests/integration/test_memory_use.py covers
how a real session replayed through the hooks and imported comes to those verdicts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

import httpx
import pytest
from playwright.async_api import expect

from server.core.models.receipts import Injection, ReceiptFilter, UseJudgement, Verdict
from server.service.memory import MemoryService
from server.store.receipts import save_uses
from server.store.tx import transaction
from tests.e2e.browser import Seeded, Ui

pytestmark = pytest.mark.e2e

PROJECT = "ledger"
SESSION = "s-context"
NEVER = "Ledger exports are rendered as <b>html</b> tables under reports/monthly."
USED = "Ledger amounts are stored as integer cents, never as floats."
CORRECTED = "Ledger invoices are numbered per year, starting again at 1 each January."


@dataclass(frozen=True, slots=True)
class Injected:
    never_id: int
    used_id: int
    corrected_id: int


async def _injected(service: MemoryService) -> Injected:
    """Two prompt injections into one session (100 and 200 estimated tokens), then judged:
    USED used both times, NEVER unused both times, CORRECTED used and then corrected."""
    ids = {}
    for fact in (NEVER, USED, CORRECTED):
        saved = await service.save(fact, project=PROJECT, kind="note", force=True)
        assert saved.status == "saved", saved
        ids[fact] = saved.id
    shown = {"p1": [ids[USED], ids[NEVER]], "p2": [ids[USED], ids[NEVER], ids[CORRECTED]]}
    for prompt_id, chars in (("p1", 400), ("p2", 800)):
        injection = Injection(
            "prompt", SESSION, PROJECT, chars, memory_ids=shown[prompt_id], prompt_id=prompt_id
        )
        assert await service.record_injection(injection)
    page = await service.receipts(ReceiptFilter(session_id=SESSION))
    verdict: dict[int, Verdict] = {
        ids[USED]: "used",
        ids[NEVER]: "unused",
        ids[CORRECTED]: "contradicted",
    }
    judgements = [
        UseJudgement(receipt.id, memory_id, receipt.at, verdict[memory_id], "")
        for receipt in page.receipts
        for memory_id in receipt.memory_ids
    ]
    async with transaction(service.pool) as conn:
        await save_uses(conn, judgements)
    return Injected(ids[NEVER], ids[USED], ids[CORRECTED])


async def test_the_context_page_shows_totals_days_and_what_was_used(ui: Ui, seeded: Seeded) -> None:
    injected = await _injected(seeded.service)

    await ui.open("/ui/")
    await ui.page.get_by_role("link", name="Context").click()
    await expect(ui.page.get_by_role("heading", level=1, name="Context")).to_be_visible()
    totals = ui.page.get_by_role("region", name="Totals")
    await expect(totals.locator(".stat").filter(has_text="injections")).to_contain_text("2")
    await expect(totals.locator(".stat").filter(has_text="estimated tokens")).to_contain_text("300")
    await expect(totals.locator(".stat").filter(has_text="memories injected")).to_contain_text("5")
    await expect(totals.locator(".stat").filter(has_text="share used")).to_contain_text("40%")
    await expect(totals.locator(".stat").filter(has_text="used, then corrected")).to_contain_text(
        "1"
    )

    today = datetime.now(UTC).date().isoformat()
    rows = ui.page.get_by_role("table").locator("tbody tr")
    await expect(rows).to_have_count(1)
    await expect(rows.locator(f'time[datetime="{today}"]')).to_have_count(1)
    day = re.compile(r"^\d{1,2} \w+ \d{4}$")
    await expect(rows.first.locator("td")).to_have_text([day, PROJECT, "2", "300", "40%"])

    never = ui.page.get_by_role("list", name="Never used")
    never_item = never.get_by_role("listitem").filter(has_text=f"#{injected.never_id}")
    await expect(never_item).to_contain_text(NEVER)
    await expect(never_item).to_contain_text("judged 2 times, never used")
    await expect(never_item.locator("b")).to_have_count(0)
    await expect(never_item.get_by_role("link")).to_have_attribute(
        "href", f"/ui/memories/{injected.never_id}"
    )
    used = ui.page.get_by_role("list", name="Used most")
    await expect(used.get_by_role("listitem").first).to_contain_text(USED)
    await expect(used.get_by_role("listitem").first).to_contain_text("used 2 of 2 times")
    review = ui.page.get_by_role("list", name="Used, then corrected — review")
    await expect(review.get_by_role("listitem")).to_have_count(1)
    await expect(review.get_by_role("listitem")).to_contain_text(CORRECTED)
    await expect(review.get_by_role("link")).to_have_attribute(
        "href", f"/ui/memories/{injected.corrected_id}"
    )
    injected_most = ui.page.get_by_role("list", name="Injected most often")
    await expect(injected_most.get_by_role("listitem")).to_have_count(3)
    await ui.screenshot("context-page")
    assert ui.dialogs == [] and ui.errors == []


async def test_retiring_a_never_used_memory_soft_deletes_it_after_confirming(
    ui: Ui, api: httpx.AsyncClient, seeded: Seeded
) -> None:
    injected = await _injected(seeded.service)

    await ui.open("/ui/context")
    never = ui.page.get_by_role("list", name="Never used")
    item = never.get_by_role("listitem").filter(has_text=f"#{injected.never_id}")
    await item.get_by_role("button", name=f"Retire #{injected.never_id}").click()
    confirm = item.get_by_role(
        "group", name=f"Retire #{injected.never_id}? It moves to Deleted memories."
    )
    await expect(confirm).to_be_visible()
    assert (await api.get(f"/api/memories/{injected.never_id}")).json()["deleted_at"] is None
    await confirm.get_by_role("button", name="Retire").click()

    await expect(ui.page.get_by_role("status").filter(has_text="Retired")).to_contain_text(
        f"Retired #{injected.never_id}"
    )
    await expect(item).to_have_count(0)
    await expect(ui.page.get_by_role("region", name="Never used")).to_contain_text(
        "None: every judged memory was used at least once."
    )
    memory = (await api.get(f"/api/memories/{injected.never_id}")).json()
    assert memory["deleted_at"] is not None
    assert (await api.get(f"/api/memories/{injected.used_id}")).json()["deleted_at"] is None
    assert ui.errors == []


async def test_a_period_without_receipts_says_nothing_was_injected(ui: Ui, seeded: Seeded) -> None:
    await ui.open("/ui/context?days=7")
    await expect(ui.page.get_by_label("Period")).to_have_value("7")
    await expect(ui.page.locator(".empty-state")).to_contain_text(
        "Nothing injected yet in this period."
    )
    await expect(ui.page.get_by_role("table")).to_have_count(0)
    assert ui.errors == []
