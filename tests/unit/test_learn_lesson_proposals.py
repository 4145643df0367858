"""Lessons proposed from a session's journal: which corrections become lessons, and which not.

Journals are built here as the service returns them (prompts in order, each with its calls);
the sessions they paraphrase are in tests/fixtures/lesson_sessions and shared/fixtures.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest

from server.core.models.journal import JournalCall, JournalEntry
from server.domain.lessons import compiled
from server.learning.lesson_proposals import (
    CORRECTED_CALL,
    NAMED_IN_CORRECTION,
    ProposedLesson,
    propose,
)

SESSION = "4b8e1f20-6c3d-4a5e-9f71-2d0c8b3a6e15"
_ids = itertools.count()
_START = datetime(2026, 5, 4, 8, 30, tzinfo=UTC)


def call(tool: str, target: str | None, ok: bool = True) -> JournalCall:
    n = next(_ids)
    return JournalCall(f"toolu_{n}", tool, target, ok, None if ok else "failed", None, _START, None)


def entry(prompt: str | None, *calls: JournalCall, project: str = "shop-api") -> JournalEntry:
    n = next(_ids)
    return JournalEntry(
        SESSION, project, f"p{n}", prompt, _START + timedelta(minutes=n), list(calls)
    )


def lessons(*entries: JournalEntry) -> list[tuple[str, str]]:
    return [(p.draft.tool, p.draft.pattern) for p in propose(entries)]


def only(*entries: JournalEntry) -> ProposedLesson:
    (proposal,) = propose(entries)
    return proposal


def test_a_rejected_command_the_user_corrects_proposes_a_lesson_on_its_program() -> None:
    proposal = only(
        entry(
            "add zod",
            call("Read", "/home/dev/acme-api/package.json"),
            call("Bash", "npm install zod", ok=False),
        ),
        entry(
            "no, don't use npm, this repo uses pnpm (see packageManager in package.json). npm "
            "would drop a package-lock.json next to pnpm-lock.yaml and CI rejects that.",
            call("Bash", "pnpm add zod@^3.24"),
            project="acme-api",
        ),
    )

    assert (proposal.draft.tool, proposal.draft.pattern) == ("Bash", r"\bnpm\b")
    assert proposal.draft.message.startswith("Don't use npm, this repo uses pnpm")
    assert (proposal.draft.project, proposal.draft.strictness) == ("acme-api", "warn")
    assert proposal.draft.origin == f"{CORRECTED_CALL}:{SESSION}"
    assert proposal.rule == CORRECTED_CALL and proposal.named == "npm"


def test_a_failed_commit_followed_by_a_standing_rule_proposes_a_lesson_on_the_subcommand() -> None:
    proposal = only(
        entry("commit it", call("Bash", 'git add -A && git commit -m "feat: x"', ok=False)),
        entry(
            "yes. and in general: always run `pnpm lint && pnpm test` yourself before every "
            "commit in this repo, don't rely on the hook. also: named exports only, never "
            "default exports."
        ),
    )

    assert proposal.draft.pattern == r"\bgit\s+commit\b"
    assert proposal.draft.message == (
        "Always run `pnpm lint && pnpm test` yourself before every commit in this repo, don't "
        "rely on the hook."
    ), "lead-ins dropped, and the next topic ('also: …') left out"


def test_the_message_stops_before_a_rule_about_something_else() -> None:
    proposal = only(
        entry("add rate limiting", call("Bash", "npm install @fastify/rate-limit", ok=False)),
        entry(
            "No, two things. We switched to pnpm: the npm lockfile is gone, so please never run "
            "npm in this repo. And don't key the limit by IP. Merchants share egress IPs."
        ),
    )

    assert proposal.draft.message == (
        "We switched to pnpm: the npm lockfile is gone, so please never run npm in this repo."
    )


def test_arguments_named_in_the_negated_clause_narrow_the_pattern() -> None:
    proposal = only(
        entry("push it", call("Bash", "git push origin main", ok=False)),
        entry("no, never push straight to main — open a PR with `gh pr create`."),
    )

    pattern = compiled(proposal.draft.pattern)
    assert proposal.draft.pattern == r"\bgit\s+push\b.*\bmain\b"
    assert pattern.search("git push origin main")
    assert not pattern.search("git push -u origin feat/order-currency")
    assert not pattern.search("gh pr create --fill --base main")


def test_an_interrupted_command_is_narrowed_by_the_flag_the_user_names() -> None:
    proposal = only(
        entry(
            "reset the db", call("Bash", "docker compose down -v && docker compose up -d", ok=False)
        ),
        entry(
            "stop! down -v deletes the seeded volume. never use -v with docker compose down "
            "here; run `pnpm db:reset` instead."
        ),
    )

    assert proposal.draft.pattern == r"\bdocker\s+compose\s+down\b.*\-v\b"
    assert proposal.draft.message.startswith("Never use -v with docker compose down here")


def test_a_rejected_edit_corrected_with_its_directory_proposes_a_lesson_for_that_tool() -> None:
    proposal = only(
        entry(
            "add a currency field",
            call("Edit", "/home/dev/shop-api/src/generated/client.ts", ok=False),
        ),
        entry(
            "don't edit anything under src/generated/ by hand, it's generated by `pnpm codegen`."
        ),
    )

    assert (proposal.draft.tool, proposal.draft.pattern) == (
        "Edit",
        r"(?:^|[^\w.-])src/generated/",
    )
    assert compiled(proposal.draft.pattern).search("/home/dev/shop-api/src/generated/api.ts")


def test_a_path_lesson_does_not_match_a_longer_file_name() -> None:
    proposal = only(
        entry("which env vars?", call("Read", "/home/dev/shop-api/.env", ok=False)),
        entry("never read .env files, they hold live keys. read .env.example instead."),
    )

    pattern = compiled(proposal.draft.pattern)
    assert proposal.draft.tool == "Read"
    assert pattern.search("/home/dev/shop-api/.env")
    assert not pattern.search("/home/dev/shop-api/.env.example")


def test_a_correction_naming_a_program_the_session_ran_needs_no_failed_call() -> None:
    proposal = only(
        entry("add lodash-es", call("Bash", "yarn add lodash-es")),
        entry("don't use yarn in this repo, it's an npm workspace. remove it and use npm."),
    )

    assert (proposal.draft.tool, proposal.draft.pattern) == ("Bash", r"\byarn\b")
    assert proposal.draft.origin == f"{NAMED_IN_CORRECTION}:{SESSION}"


def test_an_environment_the_session_mentioned_is_proposed_and_the_alternative_is_not() -> None:
    proposal = only(
        entry(
            "we get 500s on staging since the deploy",
            call("Bash", "docker compose logs api --since 30m"),
        ),
        entry(
            "stop — don't run anything against staging. load tests page the on-call. use the "
            "local docker stack (`pnpm db:up`) and reproduce it there."
        ),
    )

    assert (proposal.draft.tool, proposal.draft.pattern) == ("Bash", r"\bstaging\b")
    assert proposal.draft.message.startswith("Don't run anything against staging.")
    assert "pnpm db:up" in proposal.draft.message


def test_an_environment_the_session_never_mentioned_is_not_grounded() -> None:
    assert (
        lessons(
            entry("look at the logs", call("Bash", "docker compose logs api")),
            entry("don't run anything against staging, ever."),
        )
        == []
    )


def test_a_program_and_its_target_named_together_make_one_narrow_lesson() -> None:
    assert lessons(
        entry(
            "why does the pod restart?",
            call("Bash", "kubectl --context prod-eu get pods -n billing"),
        ),
        entry("don't run kubectl against prod-eu without asking me first, it's the live cluster."),
    ) == [("Bash", r"\bkubectl\b.*\bprod\-eu\b")]


def test_a_backticked_command_line_is_a_lesson_even_when_the_session_never_ran_it() -> None:
    proposal = only(
        entry("clean up", call("Bash", "git status")),
        entry("please never use `git push --force` on shared branches, it rewrote main last week."),
    )

    assert proposal.draft.pattern == r"\bgit\s+push\s+\-\-force\b"


@pytest.mark.parametrize(
    ("first", "correction"),
    [
        pytest.param(
            entry("run the test suite", call("Bash", "pnpm test", ok=False)),
            "ok, that failure is the known flaky currency test. skip it for now and carry on with "
            "the CSV export endpoint.",
            id="failed-test-then-a-normal-request",
        ),
        pytest.param(
            entry(
                "add a test",
                call("Bash", "pnpm test -- export", ok=False),
                call("Edit", "/home/dev/shop-api/src/routes/export.ts"),
                call("Bash", "pnpm test -- export"),
            ),
            "great. now add a changelog entry for the export endpoint",
            id="failure-the-agent-fixed-itself",
        ),
        pytest.param(
            entry("write the README section", call("Edit", "/home/dev/infra-tools/README.md")),
            'no, don\'t say "simply" in the docs — it reads as condescending.',
            id="correction-about-wording",
        ),
        pytest.param(
            entry("type the options", call("Bash", "npx tsc --noEmit", ok=False)),
            "no — never use `any` in this codebase, not even as a stopgap.",
            id="code-that-is-not-a-command",
        ),
        pytest.param(
            entry("run the integration tests", call("Bash", "npm run test:integration")),
            "ok. don't run `npm run test:integration` again for now, it takes 15 minutes.",
            id="momentary-instruction",
        ),
        pytest.param(
            entry("run the tests", call("Bash", "pnpm test", ok=False)),
            "no, fix the test first, then run it again",
            id="rejection-naming-only-a-subcommand",
        ),
        pytest.param(
            entry("add lodash", call("Bash", "yarn add lodash-es")),
            "hmm, should we stop using yarn here?",
            id="a-question",
        ),
        pytest.param(
            entry("bump axios", call("Bash", "npm install axios@1.7")),
            "actually, use `npm install --save-exact` for runtime deps here, we pin versions.",
            id="only-what-to-do-instead",
        ),
    ],
)
def test_no_lesson_is_proposed(first: JournalEntry, correction: str) -> None:
    assert lessons(first, entry(correction)) == []


def test_the_first_prompt_of_a_session_is_never_a_correction() -> None:
    assert lessons(entry("never use yarn in this repo", call("Bash", "npm install"))) == []


def test_the_same_lesson_is_proposed_once_per_session() -> None:
    found = lessons(
        entry("add zod", call("Bash", "npm install zod", ok=False)),
        entry("no, don't use npm here, use pnpm.", call("Bash", "npm install nanoid", ok=False)),
        entry("again: never use npm in this repo!"),
    )

    assert found == [("Bash", r"\bnpm\b")]


def test_a_program_with_regex_characters_is_escaped() -> None:
    proposal = only(
        entry("build it", call("Bash", "g++ -O2 main.cpp -o app", ok=False)),
        entry("no, don't use g++ directly, always build through cmake."),
    )

    assert proposal.draft.pattern == r"\bg\+\+"
    assert compiled(proposal.draft.pattern).search("g++ -O2 main.cpp")
    assert not compiled(proposal.draft.pattern).search("gcc main.c")


def test_a_correction_naming_a_secret_proposes_no_lesson_that_holds_it() -> None:
    token = "ghp_" + "R8vKq2Lm9Xw4Tz7Pb3Nd6Hf1Js5Gc0Ya8Ue2"
    found = propose(
        [
            entry(
                "log in to github", call("Bash", f"gh auth login --with-token {token}", ok=False)
            ),
            entry(f"no, never pass {token} on the command line, read it from the keychain."),
            entry("run it", call("Bash", "ls")),
            entry(f"no, stop using `gh auth login --with-token {token}` here."),
        ]
    )

    assert not any(token.lower() in p.draft.pattern.lower() for p in found)


def test_two_paths_of_one_command_may_share_the_space_between_them() -> None:
    proposal = only(
        entry("back it up", call("Bash", "cp .env .env.bak", ok=False)),
        entry("no, never cp .env .env.bak, it copies the live keys."),
    )

    pattern = compiled(proposal.draft.pattern)
    assert pattern.search("cp .env .env.bak")
    assert pattern.search("cp -a .env /tmp/x .env.bak")
    assert not pattern.search("cp .env.example .env.bak.old")
    assert not pattern.search("cp .env\n.env.bak")


def test_every_pattern_is_valid_for_re2_and_matches_no_blank_input() -> None:
    found = propose(
        [
            entry("add zod", call("Bash", "npm install zod", ok=False)),
            entry(
                "no, don't use npm, use pnpm.", call("Read", "/home/dev/shop-api/.env", ok=False)
            ),
            entry("never read .env files.", call("Bash", "kubectl --context prod get pods")),
            entry("don't run kubectl against prod without asking."),
        ]
    )

    assert len(found) == 3
    for proposal in found:
        pattern = compiled(proposal.draft.pattern)  # RE2, as the hook matches it
        assert not pattern.search("") and not pattern.search(" ")
