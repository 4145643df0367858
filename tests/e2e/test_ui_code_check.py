"""A memory checked against the code in the web UI (#37): what it names, whether the code still
agrees, and the button that records the code's current value as a new version."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from playwright.async_api import expect

from tests.e2e.browser import Seeded, Ui
from tests.git_history import MEMORIES_WRITTEN, acme_repository

pytestmark = pytest.mark.e2e

GO_PIN = "The Go toolchain is pinned to go 1.22 in `go.mod`."
ERRORS = "Call `sendProblem()` from src/errors.ts for every error response."


async def test_a_drifted_memory_says_what_changed_and_records_the_current_value(
    ui: Ui, api: httpx.AsyncClient, seeded: Seeded, tmp_path: Path
) -> None:
    repo = acme_repository(tmp_path / "acme-api")
    saved = {
        fact: await seeded.service.save(
            fact,
            project="acme-api",
            project_path=str(repo),
            kind="distilled",
            created_at=MEMORIES_WRITTEN,
        )
        for fact in (GO_PIN, ERRORS)
    }

    await ui.open(f"/ui/memories/{saved[ERRORS].id}")
    section = ui.page.locator(".code-check")
    await expect(section.locator(".verdict")).to_contain_text("fresh")
    await expect(section.get_by_role("button", name="Record the current value")).to_have_count(0)

    await ui.open(f"/ui/memories/{saved[GO_PIN].id}")
    await expect(section.locator(".verdict")).to_have_text("drifted go is now 1.23 (was 1.22)")
    await expect(section.get_by_role("list", name="What it names")).to_contain_text("go.mod")
    await ui.screenshot("code-check-drifted")
    await section.get_by_role("button", name="Record the current value").click()

    current = "The Go toolchain is pinned to go 1.23 in `go.mod`."
    await expect(ui.page.locator(".memory-content")).to_have_text(current)
    new_id = int(ui.page.url.rsplit("/", 1)[-1])
    assert new_id != saved[GO_PIN].id
    stored = (await api.get(f"/api/memories/{new_id}")).json()
    assert (stored["content"], stored["supersedes"]) == (current, saved[GO_PIN].id)
    await expect(section.locator(".verdict")).to_contain_text("fresh")
    assert ui.errors == []


async def test_the_drifted_page_lists_a_projects_stale_memories_and_records_one(
    ui: Ui, api: httpx.AsyncClient, seeded: Seeded, tmp_path: Path
) -> None:
    repo = acme_repository(tmp_path / "acme-api")
    runbook = "The on-call steps are written down in docs/runbook.md."
    ids = {}
    for fact in (GO_PIN, ERRORS, runbook):
        saved = await seeded.service.save(
            fact, project="acme-api", project_path=str(repo), created_at=MEMORIES_WRITTEN
        )
        ids[fact] = saved.id

    await ui.open("/ui/")
    await ui.page.get_by_role("link", name="Drifted").click()
    await ui.page.get_by_label("Project").select_option("acme-api")
    listed = ui.page.get_by_role("list", name="Memories the code no longer agrees with")
    items = listed.locator(".drifted-item")
    await expect(items).to_have_count(2)
    await expect(items.filter(has_text=GO_PIN)).to_contain_text("go is now 1.23 (was 1.22)")
    await expect(items.filter(has_text=runbook)).to_contain_text("orphaned")
    await expect(items.filter(has_text=runbook).get_by_role("button")).to_have_count(0)
    await ui.screenshot("drifted-page")

    await (
        items.filter(has_text=GO_PIN).get_by_role("button", name="Record the current value").click()
    )
    await expect(ui.page.get_by_role("status").filter(has_text="Recorded")).to_be_visible()
    await expect(items).to_have_count(1)
    await expect(items).to_contain_text(runbook)
    versions = (await api.get(f"/api/memories/{ids[GO_PIN]}/versions")).json()
    assert [v["current"] for v in versions] == [False, True]
    assert ui.errors == []


async def test_a_memory_saved_under_its_projects_name_alone_has_one_verdict_everywhere(
    ui: Ui, seeded: Seeded, tmp_path: Path
) -> None:
    """Saved with a project's name and no folder of its own (as MCP save_memory does), a memory
    is checked against its project's folder on its page and on Drifted, as Instructions does."""
    repo = acme_repository(tmp_path / "shop-api")
    runbook = "The on-call steps are written down in docs/runbook.md."
    await seeded.service.save(
        ERRORS, project="shop-api", project_path=str(repo), created_at=MEMORIES_WRITTEN
    )
    saved = await seeded.service.save(runbook, project="shop-api", created_at=MEMORIES_WRITTEN)
    assert saved.memory.project_path in ("", None)

    await ui.open(f"/ui/memories/{saved.id}")
    verdict = ui.page.locator(".code-check .verdict")
    await expect(verdict.locator(".verdict-badge")).to_have_text("orphaned")
    await expect(verdict).to_contain_text("docs/runbook.md was deleted")
    said = (await verdict.inner_text()).removeprefix("orphaned").strip()

    await ui.open("/ui/drifted?project=shop-api")
    listed = ui.page.get_by_role("list", name="Memories the code no longer agrees with")
    item = listed.locator(".drifted-item").filter(has_text=runbook)
    await expect(item.locator(".verdict-badge")).to_have_text("orphaned")
    await expect(item.locator(".drifted-note")).to_have_text(said)
