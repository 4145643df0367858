"""Memories used in real sessions: the real hook client injects them, the agent acts on them,
and importing each transcript judges the receipt (used, or contradicted by a correction).

Shared by the promote tests (tests/integration/test_promote.py) and the Instructions page's
browser test (tests/e2e/test_ui_instructions.py): promote proposes what was used.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from server.app import create_app
from server.core.config import Settings
from server.ingest.importer import ImportFilters, SessionImporter
from server.service.memory import MemoryService
from tests.db_fixtures import serving
from tests.integration.hook_runs import payload, run_hook
from tests.transcripts import SessionWriter

INSTALL = "how do I install the dependencies of this repository?"
INSTALLED = "pnpm install --frozen-lockfile && git diff --stat pnpm-lock.yaml"


async def used_in_sessions(
    service: MemoryService,
    settings: Settings,
    repo: Path,
    projects: Path,
    rounds: range,
    correction: str | None = None,
) -> None:
    """A session per round in `repo`: the real hook client asks prompt recall how to install,
    the agent runs pnpm (and the user corrects it, with `correction`), and the transcript is
    imported from `projects`, which judges each receipt."""
    wide = replace(settings, recall_threshold=0.05, recall_max_hits=8, recall_max_chars=6_000)
    async with serving(create_app(wide, service)) as url:
        for number in rounds:
            writer = SessionWriter(f"s-{repo.name}-{number}", str(repo), start=datetime.now(UTC))
            writer.prompt(INSTALL)
            data = payload(
                "UserPromptSubmit",
                session_id=writer.session_id,
                prompt_id=writer.prompt_id,
                cwd=str(repo),
                prompt=INSTALL,
                transcript_path=str(projects / repo.name / f"{writer.session_id}.jsonl"),
            )
            run = await run_hook("user-prompt-submit", data, url)
            assert run.returncode == 0, run.stderr
            writer.call("t1", "Bash", {"command": INSTALLED}, message_id="m1")
            writer.result("t1", "Done in 1.2s")
            if correction is not None:
                writer.say("Installed with pnpm; pnpm-lock.yaml is unchanged.")
                writer.prompt(correction)
            writer.write(projects, repo.name)
            summary = await SessionImporter(service, ImportFilters()).run(projects)
            assert not summary.errors, summary.errors
