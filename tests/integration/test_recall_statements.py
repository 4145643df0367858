"""Prompt recall with `recall_statements` on (#55): a long memory whose one statement answers
the prompt comes as that statement, with its memory's id and date; a short memory comes whole.
Through the real hook client, server, database and model."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.core.config import Secret, Settings
from server.service.memory import MemoryService
from tests.integration.test_hooks import PROJECT_PATH, context_of, payload, run_hook

pytestmark = pytest.mark.integration

ANSWER = "The nightly backup of the billing ledger is copied to the Frankfurt vault at 03:40 UTC."
FILLER = [
    f"Section {n}: the onboarding checklist asks new staff to read chapter {n} of the style "
    f"guide and to pair with a reviewer for {n + 1} afternoons."
    for n in range(1, 25)
]
HANDBOOK = "# Operations handbook\n\n" + "\n".join([*FILLER[:12], ANSWER, *FILLER[12:]])
SHORT = "The billing ledger backup is kept for 35 days before it is pruned."
PROMPT = "where is the nightly backup of the billing ledger copied to, and at what time?"


@pytest.fixture
def settings(pg_url: str, tmp_path: Path) -> Settings:
    return Settings(
        database_url=Secret(pg_url),
        claude_memory_home=tmp_path / "data",
        recall_statements=True,
    )


async def test_a_long_memory_comes_as_its_answering_statement_and_a_short_one_whole(
    app_url: str, service: MemoryService
) -> None:
    kept = []
    for content in (HANDBOOK, SHORT):
        outcome = await service.save(
            content, project="acme-api", project_path=PROJECT_PATH, kind="distilled", force=True
        )
        kept.append(outcome.id)
    handbook, short = kept
    run = await run_hook("user-prompt-submit", payload("UserPromptSubmit", prompt=PROMPT), app_url)
    context = context_of(run, "UserPromptSubmit")
    lines = {line for line in context.splitlines() if line.startswith("- ")}
    by_id = {f"#{handbook}": "", f"#{short}": ""}
    for line in lines:
        for key in by_id:
            if f" {key}," in line:
                by_id[key] = line
    long_line, short_line = by_id[f"#{handbook}"], by_id[f"#{short}"]
    assert ANSWER in long_line
    assert long_line.startswith("- 20")  # its date, before its id
    assert "Operations handbook" in long_line  # its title
    assert FILLER[5] not in long_line and FILLER[20] not in long_line
    assert len(long_line) < len(HANDBOOK) // 3
    assert short_line.endswith(SHORT)
