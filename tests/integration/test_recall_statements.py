"""Prompt recall with `recall_statements` on (#55): a long memory whose one statement answers
the prompt comes as that statement, with its memory's id and date; a short memory comes whole;
and the room the statements leave goes to hits past RECALL_MAX_HITS (`recall_room_hits`).
Through the real hook client, server, database and model."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.core.config import Secret, Settings
from server.service.memory import MemoryService
from tests.integration.acme_facts import PROJECT_PATH
from tests.integration.hook_runs import context_of, payload, run_hook

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
        recall_room_hits=5,
    )


def lines_by_id(context: str, ids: list[int]) -> list[tuple[int, str]]:
    """The injected lines in their order, each with the id (of `ids`) it is labelled with."""
    found = []
    for line in context.splitlines():
        for memory_id in ids:
            if line.startswith("- ") and f" #{memory_id}," in line:
                found.append((memory_id, line))
    return found


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


# Three long guides, each with one sentence on the ledger's nightly backup among filler, rank
# above a short note that answers the rest of the question; shown as statements, they leave
# room for it within the same budget.
GUIDES = [
    (title, sentence, [f"{title} part {n}: {filler} {n}." for n in range(1, 25)])
    for title, sentence, filler in (
        (
            "Operations handbook",
            "The nightly backup of the billing ledger is copied to the Frankfurt vault.",
            "new staff read the style guide chapter and pair with a reviewer for afternoon",
        ),
        (
            "Storage runbook",
            "The nightly backup of the billing ledger is encrypted with the vault key.",
            "the disk shelves are inspected and the cooling fans are dusted on rack",
        ),
        (
            "Finance platform guide",
            "The nightly backup of the billing ledger is verified by a restore drill.",
            "the invoice templates are reviewed by the design team in meeting room",
        ),
    )
]
KEPT_FOR = "Ledger snapshots are retained for 35 days, then pruned."
ASKED = (
    "the nightly backup of the billing ledger: where is it copied, how is it encrypted and "
    "verified, and how many days are the backups kept?"
)


async def test_the_room_statements_leave_goes_to_a_fourth_hit(
    app_url: str, service: MemoryService
) -> None:
    ids = []
    for title, sentence, filler in GUIDES:
        content = f"# {title}\n\n" + "\n".join([*filler[:12], sentence, *filler[12:]])
        outcome = await service.save(
            content, project="acme-api", project_path=PROJECT_PATH, kind="distilled", force=True
        )
        ids.append(outcome.id)
    outcome = await service.save(
        KEPT_FOR, project="acme-api", project_path=PROJECT_PATH, kind="distilled", force=True
    )
    note = outcome.id
    run = await run_hook("user-prompt-submit", payload("UserPromptSubmit", prompt=ASKED), app_url)
    shown = lines_by_id(context_of(run, "UserPromptSubmit"), [*ids, note])
    # The note ranks fourth: past the three hits RECALL_MAX_HITS allows, it comes whole in the
    # room the guides left, each guide shown as its title and its one answering statement.
    assert [memory_id for memory_id, _ in shown[3:]] == [note]
    assert sorted(memory_id for memory_id, _ in shown[:3]) == ids
    assert shown[3][1].endswith(KEPT_FOR)
    line_of = dict(shown)
    for memory_id, (title, sentence, filler) in zip(ids, GUIDES, strict=True):
        assert title in line_of[memory_id] and sentence in line_of[memory_id]
        assert filler[3] not in line_of[memory_id] and filler[20] not in line_of[memory_id]
