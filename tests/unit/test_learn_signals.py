"""Signals learned without an LLM: corrections found by rules, and per-project habits.

Fixture inputs come through the real transcript readers, so the tests see the shapes the importer
stores; the look-alike and general lists are hand-written sessions of one exchange each.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

import pytest

from server.ingest.claude_code import discover_transcripts, project_display_names, read_transcript
from server.learning.signals import (
    Correction,
    SignalEvent,
    SignalTurn,
    command_verbs,
    correction_cue,
    correction_memory,
    find_corrections,
    pattern_memories,
    project_patterns,
    tool_category,
)
from tests.fixture_sessions import CLAUDE_PROJECTS, S1, S2, S3

T0 = datetime(2026, 5, 4, 9, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Fixtures:
    turns: list[SignalTurn]  # main conversation, in session order
    events: list[SignalEvent]  # every tool call, sub-agents' included
    paths: dict[str, str]  # project -> cwd
    lines: dict[str, tuple[str, int]]  # record uuid -> (session id, line number)


def load_fixtures() -> Fixtures:
    chunks = [read_transcript(found.path) for found in discover_transcripts(CLAUDE_PROJECTS)]
    names = project_display_names(sorted({chunk.cwd for chunk in chunks if chunk.cwd}))
    turns, events, paths, lines = [], [], {}, {}
    for chunk in chunks:
        assert chunk.cwd and chunk.session_id
        project = names[chunk.cwd]
        paths[project] = chunk.cwd
        for turn in chunk.turns:
            if turn.is_sidechain:
                continue
            turns.append(
                SignalTurn(
                    None, chunk.session_id, project, turn.role, turn.text, turn.timestamp, turn.uuid
                )
            )
            lines[turn.uuid] = (chunk.session_id, turn.line_number)
        events += [
            SignalEvent(chunk.session_id, project, e.tool, e.target, e.success, e.timestamp)
            for e in chunk.events
        ]
    turns.sort(key=lambda turn: (turn.session_id, turn.at or T0))
    return Fixtures(turns, events, paths, lines)


@pytest.fixture(scope="module")
def fixtures() -> Fixtures:
    return load_fixtures()


def where(found: Correction, fixtures: Fixtures) -> tuple[str, int]:
    assert found.record_uuid is not None
    return fixtures.lines[found.record_uuid]


def by_line(found: Sequence[Correction], fixtures: Fixtures) -> dict[tuple[str, int], Correction]:
    return {where(correction, fixtures): correction for correction in found}


def exchange(
    answer: str, reply: str = "I'll make that change now.", calls: Sequence[SignalEvent] = ()
) -> list[Correction]:
    """Run one prompt → reply (+ calls) → answer session through find_corrections."""
    turns = [
        SignalTurn(1, "s", "demo", "user", "Please build the export command.", T0, "u1"),
        SignalTurn(2, "s", "demo", "assistant", reply, T0 + timedelta(seconds=10), "a1"),
        SignalTurn(3, "s", "demo", "user", answer, T0 + timedelta(seconds=60), "u2"),
    ]
    return find_corrections(turns, calls)


def call(tool: str, target: str | None, success: bool | None, second: int) -> SignalEvent:
    return SignalEvent("s", "demo", tool, target, success, T0 + timedelta(seconds=second))


# --- corrections on the fixtures ------------------------------------------------------------


def test_fixtures_yield_exactly_the_four_known_corrections(fixtures: Fixtures) -> None:
    found = by_line(find_corrections(fixtures.turns, fixtures.events), fixtures)
    assert set(found) == {(S1, 15), (S1, 45), (S2, 16), (S3, 13)}


def test_pnpm_correction_names_the_rejected_npm_install(fixtures: Fixtures) -> None:
    found = by_line(find_corrections(fixtures.turns, fixtures.events), fixtures)[(S1, 15)]
    assert found.cue == "rejection"
    assert found.quote.startswith("no, don't use npm, this repo uses pnpm")
    assert found.quote.endswith("Always use pnpm here.")
    assert found.corrected == "Bash: npm install zod"
    assert not found.corrected_is_reply
    assert found.project == "acme-api"
    assert correction_memory(found) == (
        f'In acme-api the user corrected the assistant: "{found.quote}" '
        "(after: Bash: npm install zod)"
    )


def test_lint_before_commit_rule_answers_the_failed_commit(fixtures: Fixtures) -> None:
    found = by_line(find_corrections(fixtures.turns, fixtures.events), fixtures)[(S1, 45)]
    assert found.cue == "standing_rule"
    assert "in general: always run `pnpm lint && pnpm test` yourself" in found.quote
    assert found.corrected.startswith("Bash: git add -A && git commit -m")


def test_staging_stop_answers_the_interrupted_load_test_plan(fixtures: Fixtures) -> None:
    found = by_line(find_corrections(fixtures.turns, fixtures.events), fixtures)[(S2, 16)]
    assert found.cue == "imperative"
    assert found.quote.startswith("stop — don't run anything against staging.")
    assert found.corrected_is_reply
    assert "run the k6 load test against staging" in found.corrected
    assert len(found.corrected) <= 160
    assert correction_memory(found).endswith(f'(after the assistant said: "{found.corrected}")')


def test_rate_limit_correction_answers_the_per_ip_question(fixtures: Fixtures) -> None:
    found = by_line(find_corrections(fixtures.turns, fixtures.events), fixtures)[(S3, 13)]
    assert found.quote.startswith("no — per API key (`x-api-key`), not per IP.")
    assert len(found.quote) <= 300
    assert found.corrected.endswith("is per-IP really what you want?")


def test_a_correction_as_first_prompt_of_a_session_is_not_one(fixtures: Fixtures) -> None:
    found = by_line(find_corrections(fixtures.turns, fixtures.events), fixtures)
    for session, line in found:
        turns = [t for t in fixtures.turns if t.session_id == session]
        start = next(
            i for i, t in enumerate(turns) if fixtures.lines[t.record_uuid or ""][1] == line
        )
        assert find_corrections(turns[start : start + 1], fixtures.events) == []
        again = find_corrections(turns[start:], fixtures.events)
        assert (session, line) not in by_line(again, fixtures)


def test_the_same_words_from_the_assistant_are_never_corrections(fixtures: Fixtures) -> None:
    found = by_line(find_corrections(fixtures.turns, fixtures.events), fixtures)
    corrections = {uuid for uuid, line in fixtures.lines.items() if line in found}
    spoken_by_assistant = [
        replace(t, role="assistant") if t.record_uuid in corrections else t for t in fixtures.turns
    ]
    assert len(corrections) == 4
    assert find_corrections(spoken_by_assistant, fixtures.events) == []


def test_finding_corrections_is_deterministic(fixtures: Fixtures) -> None:
    first = find_corrections(fixtures.turns, fixtures.events)
    shuffled = list(fixtures.events)
    random.Random(7).shuffle(shuffled)
    assert find_corrections(fixtures.turns, shuffled) == first


# --- corrections on hand-written exchanges ----------------------------------------------------

LOOK_ALIKES = [
    "no problem",
    "no worries, thanks!",
    "never mind",
    "nevermind, it works now",
    "actually that looks great",
    "actually, that's perfect",
    "wait, one more thing",
    "no, that's fine",
    "no, that's correct",
    "don't worry about it",
    "stop for today",
    "no thanks, that's all",
    "not bad!",
    "no idea, what do you think?",
    "no rush",
    "no, you're right",
    "nope, all good",
    "no need, thanks",
    "no, go ahead",
    "ok, stop here for today",
    "I don't know, what would you suggest?",
    "never seen this error before, any idea?",
    "stop the dev server and restart it",
    "yes, exactly",
    "great, now add the tests",
    "not sure, what do you think?",
    "actually, can you also add a docstring?",
    "wait, one more thing: can you also add a README section?",
    "in general this looks good",
    "in the future we'll probably move to Redis",
    "No tests for this module yet, add some",
    "that's it for today, thanks",
    "no, not yet",
    "no.",
    "stop!",
]


@pytest.mark.parametrize("answer", LOOK_ALIKES)
def test_look_alikes_are_not_corrections(answer: str) -> None:
    assert exchange(answer, "I used spaces and ran npm install; want me to add docs?") == []


GENERAL = [
    ("no, use the existing logger instead of print statements", "rejection"),
    ("nope, wrong file — the handler lives in src/api/orders.py", "rejection"),
    ("No. Use the v2 client here.", "rejection"),
    ("hmm no, it should return an empty list rather than null", "rejection"),
    ("no — per tenant, not per user", "rejection"),
    ("not per IP, per API key", "rejection"),
    ("don't touch the migrations folder, those are generated", "imperative"),
    ("please don't commit directly to main", "imperative"),
    ("Do NOT modify the lockfile by hand.", "imperative"),
    ("never push with --force on shared branches", "imperative"),
    ("stop, you're editing the generated file", "imperative"),
    ("Stop using `any` in these types.", "imperative"),
    ("let's not add another dependency for this", "imperative"),
    ("wait, don't delete that, it's still used by the cron job", "imperative"),
    ("no worries, but please don't push to main", "imperative"),
    ("undo that last change", "undo"),
    ("revert the last commit, it broke the build", "undo"),
    ("that's wrong — the endpoint returns 204, not 200", "error"),
    ("you forgot to update the changelog", "error"),
    ("that's not what I asked, I wanted a unit test", "error"),
    ("I said to keep the public API unchanged", "error"),
    ("Thanks! But you missed the second call site.", "error"),
    ("Wrong branch, we're supposed to be on release/2.3", "error"),
    ("hold on, that doesn't look right", "error"),
    ("actually, per API key not per IP", "redirect"),
    ("actually, let's keep the old name", "redirect"),
    ("instead use the repository's http client wrapper", "contrast"),
    ("use tabs, not spaces", "contrast"),
    ("from now on, run the formatter before you commit", "standing_rule"),
    ("going forward please ask before installing new dependencies", "standing_rule"),
    ("whenever you add an endpoint, add it to the OpenAPI spec too", "standing_rule"),
]


@pytest.mark.parametrize(("answer", "cue"), GENERAL)
def test_general_corrections_are_found_with_their_rule(answer: str, cue: str) -> None:
    found = exchange(answer, "Done: indented with spaces, per-IP limits, staging bucket.")
    assert [(c.quote, c.cue, c.record_uuid, c.memory_id) for c in found] == [(answer, cue, "u2", 3)]


def test_a_not_contrast_must_echo_what_the_assistant_did() -> None:
    answer = "make the page size 50, not 20"
    assert exchange(answer, "Added the orders table with infinite scrolling.") == []
    assert [c.cue for c in exchange(answer, "The page size is 20 for now.")] == ["contrast"]
    assert correction_cue(answer, "npm test -- --page-size 20") == ("contrast", answer)


def test_a_user_turn_after_another_user_turn_is_not_an_answer() -> None:
    turns = [
        SignalTurn(1, "s", "demo", "user", "Build the export command.", T0, "u1"),
        SignalTurn(
            2, "s", "demo", "user", "no, don't use argparse", T0 + timedelta(seconds=30), "u2"
        ),
    ]
    assert find_corrections(turns, []) == []


def test_tool_calls_alone_make_a_reply_and_name_what_was_corrected() -> None:
    turns = [
        SignalTurn(1, "s", "demo", "user", "Build the export command.", T0, "u1"),
        SignalTurn(
            2,
            "s",
            "demo",
            "user",
            "don't add click, we use argparse",
            T0 + timedelta(seconds=30),
            "u2",
        ),
    ]
    calls = [call("Read", "/repo/cli.py", True, 5), call("Bash", "pip install click", True, 9)]
    [found] = find_corrections(turns, calls)
    assert (found.corrected, found.corrected_is_reply) == ("Bash: pip install click", False)


def test_a_failed_call_after_the_reply_is_preferred_to_the_reply() -> None:
    calls = [
        call("Bash", "npm run build", False, 5),  # before the reply: already explained
        call("Edit", "/repo/src/a.ts", True, 12),
        call("Bash", "yarn add zod", None, 14),
        call("Bash", "yarn add zod --force", False, 15),
    ]
    [found] = exchange("no, don't use yarn here", "Adding zod:", calls)
    assert found.corrected == "Bash: yarn add zod --force"


def test_long_quotes_are_cut_at_a_sentence_within_300_chars() -> None:
    long = "no, the retry belongs in the client. " + "It has to back off exponentially. " * 12
    [found] = exchange(long)
    assert len(found.quote) <= 300
    assert found.quote.startswith("no, the retry belongs in the client.")
    assert found.quote.endswith("exponentially.")


def test_a_standing_rule_late_in_a_long_message_is_quoted_from_its_sentence() -> None:
    text = "Here is the log you asked for. " + "line of log output. " * 20
    text += "From now on, always paste the failing test name first."
    [found] = exchange(text)
    assert found.cue == "standing_rule"
    assert found.quote == "From now on, always paste the failing test name first."


def test_code_spans_cannot_trigger_a_rule() -> None:
    assert correction_cue("run `git commit --no-verify, not now` please") is None
    assert correction_cue("please run `don't-panic --stop` again") is None


def test_correction_memory_without_project_or_context_still_reads_alone() -> None:
    found = Correction("s", "", "don't use tabs here", "", None, None, None, "imperative")
    assert correction_memory(found) == 'The user corrected the assistant: "don\'t use tabs here"'


# --- aggregates ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "verbs"),
    [
        ("cd /repo && FOO=1 pnpm test -- orders", ["pnpm test"]),
        ('git add -A && git commit -m "feat: a && b; c"', ["git add", "git commit"]),
        ("docker compose logs api --since 30m --no-color | tail -n 240", ["docker compose logs"]),
        ("pnpm db:up && pnpm tsx scripts/repro-pool-leak.ts", ["pnpm db:up", "pnpm tsx"]),
        ("sudo -E npm run build 2>&1 > /tmp/log", ["npm run build"]),
        ("timeout 30 python -m pytest -q tests/unit", ["python -m pytest"]),
        ("./node_modules/.bin/vitest run\nuv run pytest", ["vitest run", "uv run pytest"]),
        ("ls -la; echo done; cat package.json", []),
        ("pnpm lint || true", ["pnpm lint"]),
        ("git commit -m 'unbalanced quote", ["git commit"]),
    ],
)
def test_commands_are_normalised_to_their_verb(command: str, verbs: list[str]) -> None:
    assert command_verbs(command) == verbs


def test_tool_categories() -> None:
    assert [tool_category(t) for t in ("Grep", "MultiEdit", "Task", "mcp__gh__pr", "Foo")] == [
        "read",
        "edit",
        "delegate",
        "mcp",
        "other",
    ]


def test_fixture_patterns_per_project(fixtures: Fixtures) -> None:
    patterns = project_patterns(fixtures.events, fixtures.paths)
    assert set(patterns) == {"acme-api", "acme.web_ui"}
    api = patterns["acme-api"]
    assert (api.calls, api.sessions) == (32, 3)
    commands = {habit.command: habit for habit in api.commands}
    assert (commands["pnpm test"].runs, commands["pnpm test"].sessions) == (5, 3)
    assert commands["pnpm test"].failures == 1
    assert commands["npm install"].failures == 1
    assert api.commands[0].command == "pnpm test"
    assert "tail" not in commands and all(" -" not in name for name in commands)
    assert api.files[0].path == "src/routes/orders.ts"
    assert (api.files[0].edits, api.files[0].reads) == (5, 1)
    for project in patterns.values():
        assert sum(c.share for c in project.categories) == pytest.approx(1.0)
        assert sum(c.calls for c in project.categories) == project.calls
        assert len(project.commands) <= 10 and len(project.files) <= 10


def test_glob_patterns_urls_dirs_and_failed_reads_are_not_hotspots(fixtures: Fixtures) -> None:
    web = project_patterns(fixtures.events, fixtures.paths)["acme.web_ui"]
    paths = [spot.path for spot in web.files]
    assert "src/**/*.{ts,tsx}" not in paths  # the sub-agent's Glob
    assert paths == ["CLAUDE.md", "src/orders/OrdersTable.tsx", "package.json"]
    made_up = [
        call("Read", "src/*.ts", True, 1),
        call("Read", "https://example.com/a.md", True, 2),
        call("Read", "/repo/src/", True, 3),
        call("Read", "/repo/missing.ts", False, 4),
        call("Edit", "/repo/src/app.py", True, 5),
        call("Read", "/elsewhere/notes.md", True, 6),
    ]
    demo = project_patterns(made_up, {"demo": "/repo/"})["demo"]
    assert [(s.path, s.edits, s.reads) for s in demo.files] == [
        ("src/app.py", 1, 0),
        ("/elsewhere/notes.md", 0, 1),
    ]


def test_pattern_memories_are_keyed_and_self_contained(fixtures: Fixtures) -> None:
    patterns = project_patterns(fixtures.events, fixtures.paths)
    memories = dict(pattern_memories("acme-api", patterns["acme-api"]))
    assert list(memories) == [
        "signals:workflow:acme-api",
        "signals:commands:acme-api",
        "signals:files:acme-api",
    ]
    workflow = memories["signals:workflow:acme-api"]
    assert workflow.startswith("In acme-api the assistant's tool calls (32 over 3 sessions)")
    assert "run commands (34%)" in workflow
    assert workflow.endswith("it delegated to sub-agents in 1 of 3 sessions.")
    assert memories["signals:commands:acme-api"].startswith(
        "Most-run commands in acme-api: pnpm test (5 runs, 1 failed, 3 sessions), "
        "pnpm lint (3 runs, 3 sessions),"
    )
    assert "src/routes/orders.ts (5 edits, 1 read)" in memories["signals:files:acme-api"]


def test_pattern_memories_are_identical_for_the_same_calls_in_any_order(
    fixtures: Fixtures,
) -> None:
    def texts(events: list[SignalEvent]) -> list[tuple[str, str]]:
        patterns = project_patterns(events, fixtures.paths)
        return [memory for name, p in patterns.items() for memory in pattern_memories(name, p)]

    shuffled = list(fixtures.events)
    random.Random(3).shuffle(shuffled)
    assert texts(shuffled) == texts(fixtures.events)
    assert len(texts(fixtures.events)) == 6


def test_a_project_without_commands_or_files_gets_only_its_workflow() -> None:
    only_search = [call("WebSearch", "rate limit per key", True, 1), call("Grep", "TODO", True, 2)]
    patterns = project_patterns(only_search)["demo"]
    assert pattern_memories("demo", patterns) == [
        (
            "signals:workflow:demo",
            "In demo the assistant's tool calls (2 over 1 session) mostly read or search code "
            "(50%) and search or fetch the web (50%); it never delegated to sub-agents.",
        )
    ]
