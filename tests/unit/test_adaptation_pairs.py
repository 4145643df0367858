"""The rules that turn stored memories into training pairs for `claude-memory adapt`."""

from __future__ import annotations

from server.domain.adaptation import SourceText, count_by_kind, training_pairs


def turn(id: int, role: str | None, text: str, session: str = "s1", agent: str = "") -> SourceText:
    return SourceText(id, text, "raw", role, session, agent)


def test_a_prompt_pairs_with_the_reply_that_follows_it_in_its_own_session() -> None:
    texts = [
        turn(1, "user", "Which port does the ledger listen on?"),
        turn(2, "assistant", "The ledger listens on 7311 inside compose."),
        turn(3, "assistant", "I also checked the health endpoint answers."),
        turn(4, "user", "Now switch the client to gRPC please.", session="s2"),
        turn(5, "assistant", "Switched it; the REST adapter is gone.", session="s2", agent="a1"),
    ]

    pairs = training_pairs(texts, max_pairs=100)

    assert [(p.anchor, p.positive) for p in pairs if p.kind == "reply"] == [
        ("Which port does the ledger listen on?", "The ledger listens on 7311 inside compose.")
    ]


def test_a_dialogue_without_roles_pairs_each_turn_with_the_next() -> None:
    texts = [
        turn(1, None, "Caroline: I went to the support group yesterday."),
        turn(2, None, "Melanie: That sounds brave, how did it go?"),
        turn(3, None, "Caroline: It went well, I met two new friends."),
    ]

    assert count_by_kind(training_pairs(texts, max_pairs=100))["reply"] == 2


def test_titles_statements_and_corrections_pair_with_their_texts() -> None:
    note = SourceText(
        1,
        "# Deploys\nDeploys go out from the release branch every Tuesday morning. "
        "The rollback script lives in ops/rollback.sh and needs the on-call token.",
        "manual",
        None,
        None,
        "",
    )
    correction = SourceText(
        2,
        "The staging database is now ledger_stage_v2.",
        "manual",
        None,
        None,
        "",
        supersedes_content="The staging database is ledger_stage_v1.",
    )

    pairs = training_pairs([note, correction], max_pairs=100)
    by_kind = {p.kind: p for p in pairs}

    assert count_by_kind(pairs) == {"reply": 0, "statement": 2, "title": 1, "correction": 1}
    assert by_kind["title"].anchor == "Deploys"
    assert by_kind["title"].positive.startswith("Deploys go out")
    assert by_kind["correction"].positive == "The staging database is ledger_stage_v1."


def test_the_same_store_gives_the_same_sample_and_no_pair_twice() -> None:
    texts = [
        turn(i, ("user", "assistant")[i % 2], f"turn number {i} of the session") for i in range(40)
    ]
    texts += texts[:10]

    first = training_pairs(texts, max_pairs=12, seed=3)

    assert first == training_pairs(texts, max_pairs=12, seed=3)
    assert len(first) == 12
    assert len({(p.anchor, p.positive) for p in first}) == 12
