"""The Instructions page (#58): what memory has proven in a project, proposed as lines of its
repository's CLAUDE.md; one line accepted, one rejected, written, and the file on disk holds
exactly the accepted one, the user's own text untouched and a backup in the data dir."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from playwright.async_api import expect

from server.core.config import Settings
from server.domain.instruction_section import BEGIN, END
from tests.e2e.browser import Seeded, Ui
from tests.git_history import acme_repository, git, write
from tests.judged_uses import used_in_sessions

pytestmark = pytest.mark.e2e

PROJECT = "acme-cli"
USERS_OWN = "# acme-cli\n\nOur own notes: keep pull requests small.\n"
PNPM = "acme-cli installs dependencies with pnpm, never npm: the lockfile is pnpm-lock.yaml."
ERRORS = "Always call `sendProblem()` from src/errors.ts for every error response."


async def test_accepting_one_line_and_rejecting_another_writes_only_the_accepted_one(
    ui: Ui, api: httpx.AsyncClient, seeded: Seeded, settings: Settings, tmp_path: Path
) -> None:
    repo = acme_repository(tmp_path / PROJECT)
    write(repo, "CLAUDE.md", USERS_OWN)
    write(repo, "pnpm-lock.yaml", "lockfileVersion: '9.0'\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "instructions")
    ids = {}
    for text, kind in ((PNPM, "distilled"), (ERRORS, "preference")):
        saved = await seeded.service.save(
            text, project=PROJECT, project_path=str(repo), kind=kind, force=True
        )
        ids[text] = saved.id
    await used_in_sessions(seeded.service, settings, repo, tmp_path / "projects", range(3))

    await ui.open("/ui/")
    await ui.page.get_by_role("link", name="Instructions").click()
    await ui.page.get_by_label("Project").select_option(PROJECT)
    proposed = ui.page.get_by_role("list", name="Proposed changes to CLAUDE.md")
    pnpm = proposed.locator(".promote-change").filter(has_text=PNPM)
    errors = proposed.locator(".promote-change").filter(has_text=ERRORS)
    await expect(pnpm).to_contain_text("used in 3 injections, none corrected")
    await expect(errors).to_contain_text("a rule the user stated")
    await expect(pnpm.get_by_role("link", name=f"#{ids[PNPM]}")).to_have_attribute(
        "href", f"/ui/memories/{ids[PNPM]}"
    )
    await expect(pnpm.get_by_label("Accept")).to_be_checked()
    await expect(ui.page.locator(".promote-diff-text .diff-add").first).to_be_visible()

    await errors.get_by_label("Reject").check()
    await ui.screenshot("instructions-page")
    await ui.page.get_by_role("button", name="Write").click()

    written = ui.page.get_by_role("list", name="Files written")
    await expect(written).to_contain_text(str(repo / "CLAUDE.md"))
    await expect(written).to_contain_text("backup:")
    text = (repo / "CLAUDE.md").read_text()
    assert text.startswith(USERS_OWN)
    section = text[text.index(BEGIN) : text.index(END)]
    assert f"<!-- memory:{ids[PNPM]} -->" in section
    assert "sendProblem" not in section
    kept = seeded.service.settings.claude_memory_home / "backups" / "instructions"
    backups = list(kept.glob("*CLAUDE.md.bak-*"))
    assert [b.read_text() for b in backups] == [USERS_OWN]
    assert not [p for p in repo.iterdir() if ".bak-" in p.name], "no backup in the repository"
    again = (await api.get("/api/promote", params={"project": PROJECT})).json()
    [file] = again["files"]
    assert {c["action"] for c in file["changes"]} == {"keep"}
    assert ui.errors == []
