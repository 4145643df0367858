"""How the local model's work is cut into turns (server/service/embeddings.encode_turns)."""

from __future__ import annotations

from server.service.embeddings import ENCODE_TURN_CHARS, encode_turns


def test_every_text_is_in_exactly_one_turn_longest_first() -> None:
    lengths = [5, 900, 40, 900, 7_000, 12]

    turns = encode_turns(lengths, batch_size=64)

    flat = [index for turn in turns for index in turn]
    assert sorted(flat) == list(range(len(lengths)))
    assert [lengths[i] for i in flat] == sorted(lengths, reverse=True)


def test_a_long_documents_windows_are_cut_into_turns_of_bounded_characters() -> None:
    windows = [800] * 150  # a 100,000-character save

    turns = encode_turns(windows, batch_size=64)

    assert len(turns) > 5
    assert all(sum(windows[i] for i in turn) <= ENCODE_TURN_CHARS for turn in turns)


def test_short_texts_fill_a_whole_batch_per_turn() -> None:
    turns = encode_turns([150] * 200, batch_size=64)

    assert [len(turn) for turn in turns] == [64, 64, 64, 8]


def test_a_text_longer_than_a_turn_is_a_turn_of_its_own() -> None:
    turns = encode_turns([ENCODE_TURN_CHARS * 3, 10], batch_size=64)

    assert turns == [[0], [1]]
