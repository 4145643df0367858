"""The developer vocabulary: which forms a query adds, and how files are read and joined."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.domain.vocabulary import (
    Vocabulary,
    VocabularyError,
    load_vocabulary,
    parse_vocabulary,
)


def vocabulary(text: str) -> Vocabulary:
    return Vocabulary(tuple(parse_vocabulary(text, "test")))


def test_jargon_in_a_query_adds_the_plain_words_and_the_other_way_round() -> None:
    table = vocabulary("TTL = time to live, expiry\nDLQ = dead letter queue")

    assert table.expansions("what TTL do cached pages get?") == ["time to live", "expiry"]
    assert table.expansions("when does the expiry of a session happen") == ["ttl", "time to live"]
    assert table.expansions("where do dead letter queues go?") == ["dlq"]


def test_forms_match_whole_words_only() -> None:
    table = vocabulary("GC = garbage collection\nPR = pull request")

    assert table.expansions("the gcc build and the prisma schema") == []
    assert table.expansions("GC pauses in PRs") == ["garbage collection", "pull request"]


def test_a_query_holding_every_form_adds_nothing() -> None:
    table = vocabulary("OOM = out of memory")

    assert table.expansions("OOM: the pod ran out of memory") == []


@pytest.mark.parametrize(
    "line",
    ["TTL", "TTL =", "= time to live", "TTL = , expiry", "x = a b c d e f g h"],
)
def test_a_malformed_line_is_refused_with_its_number(line: str) -> None:
    with pytest.raises(VocabularyError, match="test, line 2"):
        parse_vocabulary(f"# comment\n{line}\n", "test")


def test_the_built_in_table_knows_the_common_abbreviations() -> None:
    table = load_vocabulary()

    for abbreviation, plain in [
        ("MSRV", "minimum supported rust version"),
        ("TTL", "time to live"),
        ("DLQ", "dead letter queue"),
        ("OOM", "out of memory"),
        ("SLO", "service level objective"),
        ("p99", "99th percentile"),
        ("GC", "garbage collection"),
        ("CVE", "vulnerability"),
    ]:
        assert plain in table.expansions(f"what is our {abbreviation}?"), abbreviation
        assert abbreviation.lower() in table.expansions(f"what about {plain}?"), plain


def test_a_users_file_joins_the_line_it_shares_a_form_with(tmp_path: Path) -> None:
    own = tmp_path / "vocabulary.txt"
    own.write_text("TTL = cache lifetime\nBFF = backend for frontend\n", encoding="utf-8")

    table = load_vocabulary(own)

    assert "cache lifetime" in table.expansions("what is the TTL?")
    assert "ttl" in table.expansions("what is the cache lifetime?")
    assert "time to live" in table.expansions("what is the cache lifetime?")
    assert table.expansions("who owns the BFF?") == ["backend for frontend"]


def test_an_unreadable_users_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(VocabularyError, match="cannot read the vocabulary file"):
        load_vocabulary(tmp_path / "missing.txt")
