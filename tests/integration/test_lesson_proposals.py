"""Lessons proposed from the journal: sessions imported with the real importer, then proposed.

The transcripts are the shared fixtures (S1 to S4) and the sessions in
tests/fixtures/lesson_sessions, written for these rules: corrections that must become lessons
and ones that must not (see that folder's README).
"""

from __future__ import annotations

from server.core.models.journal import JournalPrompt
from server.core.models.lessons import LessonChange, LessonDraft
from server.learning.lesson_proposals_job import propose_lessons
from server.service.memory import MemoryService
from tests.fixture_sessions import S1, S2
from tests.integration.lesson_sessions import import_sessions

SHOP_A = "4b8e1f20-6c3d-4a5e-9f71-2d0c8b3a6e15"

# (tool, pattern, project, origin): what the sessions propose, the keepers and the rest alike.
EXPECTED = {
    ("Bash", r"\bnpm\b", "acme-api", f"journal:{S1}"),
    ("Bash", r"\bgit\s+commit\b", "acme-api", f"journal:{S1}"),
    ("Bash", r"\bstaging\b", "acme-api", f"correction:{S2}"),
    ("Edit", r"(?:^|[^\w.-])src/generated/", "shop-api", f"journal:{SHOP_A}"),
    ("Bash", r"\bgit\s+push\b.*\bmain\b", "shop-api", f"journal:{SHOP_A}"),
    (
        "Bash",
        r"\bdocker\s+compose\s+down\b.*\-v\b",
        "shop-api",
        "journal:a2f4c6e8-1b3d-4f5a-8c7e-9d0b2a4c6e81",
    ),
    (
        "Read",
        r"(?:^|[^\w.-])\.env(?:[^\w.-]|$)",
        "shop-api",
        "journal:a2f4c6e8-1b3d-4f5a-8c7e-9d0b2a4c6e81",
    ),
    ("Bash", r"\byarn\b", "infra-tools", "correction:d7e9f1a3-5b2c-4d6e-8f0a-1c3e5a7b9d24"),
    (
        "Bash",
        r"\bkubectl\b.*\bprod\-eu\b",
        "infra-tools",
        "correction:19c3e5a7-b9d1-4f2a-8c4e-6a8b0d2f4a63",
    ),
    ("Bash", r"\bnpx\s+expo\b", "mobile-app", "correction:e5a7c9e1-3f5b-4d7c-9e1a-3c5e7a9c1e52"),
    (
        "Bash",
        r"\beas\s+build\b.*\bpreview\b",
        "mobile-app",
        "correction:e5a7c9e1-3f5b-4d7c-9e1a-3c5e7a9c1e52",
    ),
    (
        "Write",
        r"(?:^|[^\w.-])src/screens/",
        "mobile-app",
        "correction:e5a7c9e1-3f5b-4d7c-9e1a-3c5e7a9c1e52",
    ),
}


async def test_proposals_are_stored_inactive_with_the_session_they_came_from(
    service: MemoryService,
) -> None:
    await import_sessions(service)

    summary = await propose_lessons(service)

    stored = await service.lessons()
    assert {(s.tool, s.pattern, s.project, s.origin) for s in stored} == EXPECTED
    assert all(s.proposed and not s.active and s.strictness == "warn" for s in stored)
    assert (summary.proposed, summary.known) == (len(EXPECTED), 0)
    assert summary.sessions == 9, "every imported session with two prompts or more"
    npm = next(s for s in stored if s.pattern == r"\bnpm\b")
    assert npm.message.startswith("Don't use npm, this repo uses pnpm")


async def test_a_proposal_fires_before_no_call_until_the_user_accepts_it(
    service: MemoryService,
) -> None:
    await import_sessions(service)
    await propose_lessons(service)
    [npm] = [s for s in await service.lessons("acme-api") if s.pattern == r"\bnpm\b"]

    before = await service.lessons_for_call("Bash", {"command": "npm install zod"}, "acme-api")
    accepted = await service.update_lesson(npm.id, LessonChange(active=True))
    after = await service.lessons_for_call("Bash", {"command": "npm install zod"}, "acme-api")

    assert before == []
    assert (accepted.active, accepted.proposed) == (True, False)
    assert [lesson.id for lesson in after] == [npm.id]


async def test_a_second_run_proposes_nothing_and_reads_no_unchanged_session(
    service: MemoryService,
) -> None:
    await import_sessions(service)
    await propose_lessons(service)

    again = await propose_lessons(service)
    reread = await propose_lessons(service, rescan=True)

    assert (again.sessions, again.proposed) == (0, 0)
    assert (reread.sessions, reread.proposed, reread.known) == (9, 0, len(EXPECTED))
    assert len(await service.lessons()) == len(EXPECTED)


async def test_an_edited_or_dismissed_proposal_is_not_proposed_again(
    service: MemoryService,
) -> None:
    await import_sessions(service)
    await propose_lessons(service)
    stored = {lesson.pattern: lesson for lesson in await service.lessons()}
    edited = await service.update_lesson(
        stored[r"\bnpm\b"].id, LessonChange(pattern=r"\bnpm\s+(install|i)\b")
    )
    dismissed = await service.update_lesson(stored[r"\bstaging\b"].id, LessonChange(active=False))

    reread = await propose_lessons(service, rescan=True)

    assert reread.proposed == 0
    assert (edited.proposed, dismissed.proposed, dismissed.active) == (True, False, False)
    assert len(await service.lessons()) == len(EXPECTED)


async def test_a_lesson_a_user_already_wrote_is_not_proposed(service: MemoryService) -> None:
    await service.add_lesson(
        LessonDraft(pattern=r"\bnpm\b", message="pnpm only", tool="bash", project="acme-api")
    )
    await import_sessions(service)

    summary = await propose_lessons(service, project="acme-api")

    assert (summary.proposed, summary.known) == (2, 1)
    assert {s.origin for s in await service.lessons("acme-api")} == {
        "user",
        f"journal:{S1}",
        f"correction:{S2}",
    }


async def test_a_dry_run_stores_nothing_and_reads_the_sessions_again_next_time(
    service: MemoryService,
) -> None:
    await import_sessions(service)

    dry = await propose_lessons(service, dry_run=True)
    real = await propose_lessons(service)

    assert (dry.proposed, real.proposed) == (len(EXPECTED), len(EXPECTED))
    assert {lesson["pattern"] for lesson in dry.lessons} == {e[1] for e in EXPECTED}
    assert all("id" not in lesson for lesson in dry.lessons)
    assert all(isinstance(lesson["id"], int) for lesson in real.lessons)


async def test_a_session_that_grows_is_read_again(service: MemoryService) -> None:
    await import_sessions(service)
    await propose_lessons(service)
    await service.record_prompts(
        [JournalPrompt(S1, "later-prompt", "thanks, that's all for today", None, "acme-api")]
    )

    again = await propose_lessons(service)

    assert (again.sessions, again.proposed) == (1, 0)


async def test_a_session_journal_files_each_call_under_the_prompt_it_followed(
    service: MemoryService,
) -> None:
    await import_sessions(service)

    journal = (await service.lesson_proposals.journals([S1]))[S1]

    assert [entry.prompt[:20] for entry in journal if entry.prompt] == [
        "Add cursor-based pag",
        "no, don't use npm, t",
        "looks good. commit i",
        "yes. and in general:",
    ]
    first = journal[0]
    assert [(c.tool, c.success) for c in first.calls] == [
        ("Read", True),
        ("Read", True),
        ("Bash", False),
    ]
    assert journal[2].calls[0].target is not None
    assert "git commit" in journal[2].calls[0].target
