"""Ordering the versions of a changed fact by what the question asks: now, before, or first."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from server.core.models.search import SearchHit
from server.domain.versions import (
    earlier_subject_candidates,
    lift_newer,
    near_copy_candidates,
    order_as_of,
    order_versions,
    question_tense,
    same_subject_candidates,
    wanted_ids,
)
from tests.search_hits import note_hit


def _hit(
    memory_id: int, score: float, *, supersedes: int | None = None, by: int | None = None
) -> SearchHit:
    return note_hit(
        memory_id,
        f"memory {memory_id}",
        created_at=datetime(2026, 5, memory_id, tzinfo=UTC),
        score=score,
        supersedes=supersedes,
        superseded_by=by,
    )


@pytest.mark.parametrize(
    ("question", "tense"),
    [
        ("which Node version do we need?", "present"),
        ("what runs before the deploy?", "present"),
        ("what was the retry count before we changed it?", "past"),
        ("which package manager did we use back in May?", "past"),
        ("what was the CLI called previously?", "past"),
        ("what did the tool used to be called?", "past"),
        ("what was the limit originally?", "first"),
        ("at first, where did the lock live?", "first"),
        ("which database did the very first prototype use?", "first"),
        ("what was the timeout when we first added the retry?", "first"),
        ("retry budget before we doubled it?", "past"),
        ("what was the old deploy host?", "past"),
        # Asked in the present, "original", "first" and "old" are not about time.
        ("how long do we keep the original upload?", "present"),
        ("what is the first step of the release?", "present"),
        ("is the old deploy host still up?", "present"),
        # "the first weekend", "the first three": a time or a count, not the first state.
        ("where did the team go during the first weekend of August?", "present"),
        ("which year did we buy the first three servers?", "present"),
    ],
)
def test_question_tense(question: str, tense: str) -> None:
    assert question_tense(question) == tense


def test_present_lifts_the_successor_to_the_superseded_hits_place() -> None:
    old, other, new = _hit(1, 0.9, by=3), _hit(2, 0.8), _hit(3, 0.5, supersedes=1)
    ordered = order_versions([old, other, new], [], "present")
    assert [h.id for h in ordered] == [3, 1, 2]
    assert [h.score for h in ordered] == sorted((h.score for h in ordered), reverse=True)
    assert ordered[0].version_note == "current version of #1"


@pytest.mark.parametrize(("successor_similarity", "lifted"), [(0.45, True), (0.3, False)])
def test_a_version_takes_the_place_only_when_about_the_question_nearly_as_much(
    successor_similarity: float, lifted: bool
) -> None:
    report = "Pool: 24 connections.\nBatches: 50 invoices.\nReplicas: 2 at minimum."
    old = replace(_hit(1, 0.9, by=3), similarity=0.55, content=report)
    other = replace(_hit(2, 0.8), similarity=0.5)
    new = replace(_hit(3, 0.5, supersedes=1), similarity=successor_similarity)
    ordered = order_versions([old, other, new], [], "present")
    assert [h.id for h in ordered] == ([3, 1, 2] if lifted else [1, 2, 3])
    # A memory of one or two statements is replaced as a whole, however unlike the question.
    short = replace(old, content="Rate limit per IP, 30 a minute.")
    assert order_versions([short, other, new], [], "present")[0].id == 3


def test_present_pulls_in_a_missing_successor() -> None:
    old, other = _hit(1, 0.9, by=3), _hit(2, 0.8)
    assert wanted_ids([old, other], "present") == [3]
    ordered = order_versions([old, other], [_hit(3, 0.0, supersedes=1)], "present")
    assert [h.id for h in ordered] == [3, 1, 2]


def test_present_follows_a_chain_to_its_newest_version() -> None:
    v1, v2, v3 = _hit(1, 0.9, by=2), _hit(2, 0.0, supersedes=1, by=3), _hit(3, 0.0, supersedes=2)
    ordered = order_versions([v1], [v2, v3], "present")
    assert [h.id for h in ordered] == [3, 2, 1]


def test_past_lifts_the_version_before_the_current_one_once() -> None:
    v1, v2, v3 = _hit(1, 0.5, by=2), _hit(2, 0.0, supersedes=1, by=3), _hit(3, 0.9, supersedes=2)
    ordered = order_versions([v3, v1], [v2], "past")
    assert [h.id for h in ordered][:2] == [2, 3]


def test_first_goes_back_to_the_first_version() -> None:
    v1, v2, v3 = _hit(1, 0.0, by=2), _hit(2, 0.0, supersedes=1, by=3), _hit(3, 0.9, supersedes=2)
    ordered = order_versions([v3], [v2, v1], "first")
    assert [h.id for h in ordered] == [1, 2, 3]


def test_hits_without_versions_keep_their_order() -> None:
    hits = [_hit(1, 0.9), _hit(2, 0.8), _hit(3, 0.7)]
    assert order_versions(hits, [], "present") == hits
    assert order_versions(hits, [], "past") == hits


def test_as_of_a_moment_lifts_the_version_current_then() -> None:
    """A fact stored on 1, 10 and 20 May; the question asks about 15 May: version 10."""
    first, middle, last = (
        _hit(1, 0.2, by=10),
        _hit(10, 0.3, supersedes=1, by=20),
        _hit(20, 0.9, supersedes=10),
    )
    other = _hit(5, 0.5)
    ordered = order_as_of([last, other, first], [middle], datetime(2026, 5, 15, tzinfo=UTC))
    assert [h.id for h in ordered] == [10, 20, 5, 1]
    assert ordered[0].score == 0.9
    assert ordered[0].version_note == "the version current on 2026-05-15"
    assert [h.score for h in ordered] == sorted((h.score for h in ordered), reverse=True)


def test_as_of_before_every_version_lifts_the_first() -> None:
    first, last = _hit(3, 0.1, by=9), _hit(9, 0.8, supersedes=3)
    ordered = order_as_of([last, first], [], datetime(2026, 4, 1, tzinfo=UTC))
    assert [h.id for h in ordered] == [3, 9]


def test_as_of_leaves_a_list_in_order_when_the_best_version_is_already_first() -> None:
    first, last = _hit(3, 0.9, by=9), _hit(9, 0.4, supersedes=3)
    hits = [first, _hit(4, 0.5), last]
    assert order_as_of(hits, [], datetime(2026, 5, 5, tzinfo=UTC)) == hits


def test_as_of_wants_versions_on_both_sides() -> None:
    assert wanted_ids([_hit(10, 0.5, supersedes=1, by=20)], None) == [1, 20]


def test_near_copy_candidates_pair_an_unlinked_hit_with_a_newer_successor_below_it() -> None:
    request, other, correction = _hit(3, 0.9), _hit(1, 0.8), _hit(5, 0.7, supersedes=4)
    elsewhere = replace(_hit(6, 0.6, supersedes=2), project="other")

    found = near_copy_candidates([request, other, correction, elsewhere], places=3)

    # request (3) and other (1) are older than the correction (5), which replaced 4; the hit
    # of another project is not compared, and nothing is paired with a hit above it.
    assert found == [(3, 5, 4), (1, 5, 4)]


def test_near_copy_candidates_skip_hits_a_link_retires_and_older_successors() -> None:
    retired = _hit(3, 0.9, by=9)
    older_successor = _hit(2, 0.8, supersedes=1)

    assert near_copy_candidates([retired, older_successor], places=3) == []


def test_lift_newer_puts_the_newer_hit_in_the_older_ones_place_with_a_note() -> None:
    ordered = lift_newer([_hit(3, 0.9), _hit(1, 0.8), _hit(5, 0.7)], [(3, 5, "why")])

    assert [h.id for h in ordered] == [5, 3, 1]
    assert ordered[0].score == 0.9 and ordered[0].version_note == "why"
    assert ordered[1].score < 0.9


def _valued(memory_id: int, score: float, content: str, project: str = "acme") -> SearchHit:
    return replace(_hit(memory_id, score), content=content, project=project)


def test_same_subject_candidates_pair_values_stated_at_two_times() -> None:
    runbook = _valued(2, 1.0, "The session cookie lives 8h on the admin app.")
    later = _valued(9, 0.85, "Set the session cookie to 2h and refresh it every 30m.")
    weak = _valued(8, 0.5, "A 24h cookie was the first setting.")
    prose = _valued(7, 0.95, "We talked about the cookie again.")

    found = same_subject_candidates(
        [runbook, prose, later, weak],
        places=3,
        depth=8,
        min_share=0.8,
        min_gap=timedelta(hours=1),
    )

    # The prose hit states no value; the weak one scores too little; only later hits count.
    assert found == [(2, 9)]


def test_same_subject_candidates_skip_other_projects_and_the_same_exchange() -> None:
    older = _valued(2, 1.0, "pool size 20")
    other_project = _valued(9, 0.9, "pool size 32", project="other")
    same_minute = replace(_valued(3, 0.9, "pool size 32"), created_at=older.created_at)

    found = same_subject_candidates(
        [older, other_project, same_minute],
        places=3,
        depth=8,
        min_share=0.8,
        min_gap=timedelta(hours=1),
    )

    assert found == []


def test_a_users_later_message_in_the_session_pairs_however_soon_it_follows() -> None:
    asked = _valued(2, 1.0, "Cap the export at 10,000 rows per file.")
    turn = {"session_id": "s1", "role": "user"}
    asked = replace(asked, **turn)
    soon = asked.created_at + timedelta(minutes=2)
    corrected = replace(_valued(9, 0.9, "No, cap it at 25,000 rows."), created_at=soon, **turn)
    agent_reply = replace(
        _valued(8, 0.9, "Capped at 10,000 rows per file."),
        created_at=soon,
        session_id="s1",
        role="assistant",
    )
    other_session = replace(corrected, id=7, session_id="s2")

    def pairs(hits: list[SearchHit]) -> list[tuple[int, int]]:
        return same_subject_candidates(
            hits, places=3, depth=8, min_share=0.8, min_gap=timedelta(hours=1)
        )

    assert pairs([asked, corrected]) == [(2, 9)]
    # The agent's reply and a message of another session minutes later are not follow-ups.
    assert pairs([asked, agent_reply]) == []
    assert pairs([asked, other_session]) == []


def test_earlier_subject_candidates_pair_a_newer_hit_with_older_statements_below_it() -> None:
    current = _valued(20, 1.0, "sync interval 10 min, batches of 50")
    prose = _valued(5, 0.95, "We talked about the interval again.")
    first = _valued(3, 0.85, "sync the catalogue every 30 min")
    weak = _valued(2, 0.5, "interval: 30 min in the draft")
    later = _valued(25, 0.9, "interval 15 min from now on")

    found = earlier_subject_candidates(
        [current, prose, first, weak, later],
        places=3,
        depth=8,
        min_share=0.8,
        min_gap=timedelta(hours=1),
    )

    # Prose states no value, the weak hit scores too little, a later hit is not earlier.
    assert found == [(20, 3)]


def test_earlier_subject_candidates_look_back_from_the_moment_the_question_names() -> None:
    after_fix = _valued(20, 1.0, "health check timeout 20 s")
    before_fix = _valued(6, 0.9, "health check armed at 5 s")
    also_after = _valued(15, 0.9, "health check timeout raised to 12 s")
    fix = datetime(2026, 5, 12, tzinfo=UTC)

    found = earlier_subject_candidates(
        [after_fix, also_after, before_fix],
        places=3,
        depth=8,
        min_share=0.8,
        min_gap=timedelta(hours=1),
        before=fix,
    )

    # Only a hit from the fix on is passed, and only by one from before it.
    assert found == [(20, 6), (15, 6)]


def test_lift_newer_without_again_goes_back_one_step() -> None:
    hits = [_hit(20, 0.9), _hit(10, 0.8), _hit(3, 0.7)]
    pairs = [(20, 10, "earlier"), (10, 3, "earlier")]

    one_step = lift_newer(hits, pairs, again=False)
    all_the_way = lift_newer(hits, pairs)

    assert [h.id for h in one_step] == [10, 20, 3]
    assert [h.id for h in all_the_way] == [3, 10, 20]
