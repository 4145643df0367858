"""A long memory cut to its share of the prompt-recall budget shows the part the prompt is about."""

from __future__ import annotations

from dataclasses import replace

from server.core.models.search import SearchHit
from server.domain.context import focused, recall_markdown
from server.domain.statement_versions import topic_words
from tests.search_hits import note_hit

HANDBOOK = (
    "# Billing service handbook\n"
    "The service bills merchants monthly and keeps invoices for seven years.\n"
    "Deploys go through the release train every Tuesday; hotfixes need two approvals.\n"
    "Logs are shipped to the central cluster and kept for thirty days.\n"
    "The ledger export runs nightly at 02:15 UTC and writes Parquet files to the archive bucket.\n"
)


def test_a_text_that_fits_is_shown_whole_on_one_line() -> None:
    assert focused("one\n two  three", 40, topic_words("three")) == "one two three"


def test_a_cut_text_starts_where_the_prompts_words_are() -> None:
    shown = focused(HANDBOOK, 90, topic_words("when does the ledger export run?"))

    assert shown.startswith("…The ledger export runs nightly at 02:15 UTC")
    assert shown.endswith("…")
    assert len(shown) <= 90


def test_a_cut_text_keeps_its_start_when_no_later_part_names_more() -> None:
    shown = focused(HANDBOOK, 90, topic_words("what does the billing service do?"))

    assert shown.startswith("# Billing service handbook")
    assert len(shown) <= 90


def test_prompt_recall_shows_each_long_hit_around_the_prompts_words() -> None:
    hit = note_hit(7, HANDBOOK * 3, project="billing", similarity=0.5)

    text, shown = recall_markdown([hit], 600, prompt="when does the ledger export run?")

    assert shown == [7]
    assert "ledger export runs nightly at 02:15 UTC" in text
    assert len(text) <= 600


def _note(memory_id: int, content: str) -> SearchHit:
    return note_hit(memory_id, content, project="billing", similarity=0.6)


def test_hits_past_the_first_fill_only_the_room_statements_saved() -> None:
    prompt = "when does the ledger export run?"
    # Two handbooks that state nothing alike (one statement is never shown twice).
    first = [_note(1, HANDBOOK * 4), _note(2, HANDBOOK.replace(".\n", " (staging).\n") * 4)]
    more = [
        _note(3, "The ledger export moved to 03:00 UTC after the archive bucket filled up."),
        _note(4, "Ledger export failures page the billing on-call."),
    ]

    plain, plain_ids = recall_markdown(first, 2_000, prompt=prompt, first=2)
    text, shown = recall_markdown(first + more, 2_000, prompt=prompt, statements=True, first=2)

    assert plain_ids == [1, 2]
    # The handbooks come as their answering statements, and what that saved holds two more.
    assert shown == [1, 2, 3, 4]
    assert "03:00 UTC" in text
    # Never longer than the first hits shown as runs of their text.
    assert len(text) <= len(plain)


def test_short_first_hits_save_nothing_so_no_more_hits_come() -> None:
    prompt = "when does the ledger export run?"
    short = [
        _note(1, "The ledger export runs nightly at 02:15 UTC."),
        _note(2, "The ledger export writes Parquet files."),
        _note(3, "The ledger export moved to 03:00 UTC."),
    ]

    text, shown = recall_markdown(short, 2_000, prompt=prompt, statements=True, first=2)

    assert shown == [1, 2]
    assert "03:00" not in text


def test_a_hits_label_names_its_author_briefly_and_no_similarity() -> None:
    # Which session and tool is get_memory's to say: the budget goes to what the memory says.
    hit = replace(
        note_hit(8, "The ledger export runs at 02:00 UTC.", similarity=0.61),
        session_id="1a2b3c4d5e",
        source="claude-code",
    )

    text, _ = recall_markdown([hit], 600, prompt="when does the ledger export run?")

    assert text.splitlines()[-1] == (
        "- 2026-03-01 [note #8, acme, imported from your session] "
        "The ledger export runs at 02:00 UTC."
    )
