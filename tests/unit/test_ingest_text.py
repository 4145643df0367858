"""Note reader, front matter parser and chunker, against the shared notes fixtures."""

from __future__ import annotations

import itertools
import os
import re
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from server.ingest.frontmatter import parse_front_matter, split_front_matter
from server.ingest.text import chunk_text, find_note_files, read_note_file
from tests.fixture_sessions import SHARED_FIXTURES

NOTES = SHARED_FIXTURES / "notes"
HANDBOOK = NOTES / "acme-api-handbook.md"
PREFERENCES = NOTES / "working-preferences.md"
FENCE_LINE = re.compile(r"^ {0,3}(```|~~~)", re.MULTILINE)


def test_handbook_front_matter_gives_title_tags_and_date() -> None:
    note = read_note_file(HANDBOOK)
    assert note.title == "acme-api — engineering handbook"
    assert note.tags == ["acme", "backend", "runbook", "postgres"]
    assert note.created_at == datetime(2026, 4, 22, tzinfo=UTC)  # from `updated`
    assert note.metadata["owner"] == "dev"
    assert note.body.startswith("# acme-api — engineering handbook\n\nThis is the working")
    assert "owner: dev" not in note.body
    assert note.path == HANDBOOK


def test_a_note_without_front_matter_uses_its_heading_and_mtime(tmp_path: Path) -> None:
    copy = tmp_path / PREFERENCES.name
    shutil.copyfile(PREFERENCES, copy)
    os.utime(copy, (1_700_000_000, 1_700_000_000))
    note = read_note_file(copy)
    assert note.title == "How I like to work"
    assert note.tags == []
    assert note.created_at == datetime.fromtimestamp(1_700_000_000, tz=UTC)
    assert note.body == PREFERENCES.read_text().strip()


def test_title_falls_back_to_the_file_stem_and_skips_headings_in_code(tmp_path: Path) -> None:
    path = tmp_path / "deploy-notes.txt"
    path.write_text("```bash\n# not a title\n```\n\n## Only a second-level heading\n")
    assert read_note_file(path).title == "deploy-notes"


def test_front_matter_variants(tmp_path: Path) -> None:
    path = tmp_path / "n.md"
    path.write_text(
        "---\n"
        "title: 'It''s: a title'  \n"
        'tags: "alpha, #beta , alpha"\n'
        "created: 2025-01-02T03:04:05+02:00\n"
        "---\n"
        "Body line.\n"
    )
    note = read_note_file(path)
    assert note.title == "It's: a title"
    assert note.tags == ["alpha", "beta"]
    assert note.created_at == datetime(2025, 1, 2, 1, 4, 5, tzinfo=UTC)
    assert note.body == "Body line."


def test_front_matter_parser_subset() -> None:
    fields = parse_front_matter(
        [
            "# a comment",
            'Title: "Quoted \\"x\\""',
            "tags:",
            "  - one",
            "  - 'two'",
            'aliases: [a, "b, c", d]',
            "description: first line",
            "  continued here",
            "notes: |",
            "  line one",
            "  line two",
            "empty:",
            "url: https://example.com/a#b",
            "size: 10 # bytes",
            "permalink:",
            "- first",
            "- second",
            "- third",
        ]
    )
    assert fields == {
        "title": 'Quoted "x"',
        "tags": ["one", "two"],
        "aliases": ["a", "b, c", "d"],
        "description": "first line continued here",
        "notes": "line one\nline two",
        "empty": "",
        "url": "https://example.com/a#b",
        "size": "10",
        "permalink": ["first", "second", "third"],  # items at the key's indent, as PyYAML writes
    }


def test_unclosed_front_matter_is_body(tmp_path: Path) -> None:
    text = "---\ntitle: x\nno closing line\n"
    assert split_front_matter(text) == ({}, text)
    path = tmp_path / "n.md"
    path.write_text(text)
    assert read_note_file(path).body == text.strip()


def test_find_note_files_walks_folders_sorted_and_skips_hidden(tmp_path: Path) -> None:
    (tmp_path / "b" / "deep").mkdir(parents=True)
    (tmp_path / ".git").mkdir()
    for name in ("a.md", "b/deep/c.markdown", "b/d.TXT", "b/e.py", ".git/f.md", ".hidden.md"):
        (tmp_path / name).write_text("x")
    extra = tmp_path / "b" / "deep" / "c.markdown"
    found = find_note_files([tmp_path, extra, tmp_path / "b" / "e.py"])
    assert [p.relative_to(tmp_path).as_posix() for p in found] == [
        "a.md",
        "b/d.TXT",
        "b/deep/c.markdown",
    ]
    with pytest.raises(FileNotFoundError):
        find_note_files([tmp_path / "missing"])
    assert find_note_files([NOTES]) == [HANDBOOK, PREFERENCES]


# --- chunking ------------------------------------------------------------------------------

TARGET, OVERLAP, SLACK = 1500, 200, 20


@pytest.fixture(scope="module")
def handbook_chunks() -> list[str]:
    return chunk_text(read_note_file(HANDBOOK).body, TARGET, OVERLAP)


def code_blocks(text: str) -> list[str]:
    return re.findall(r"^```.*?^```$", text, flags=re.MULTILINE | re.DOTALL)


def test_handbook_chunks_stay_near_the_target(handbook_chunks: list[str]) -> None:
    assert len(handbook_chunks) >= 5
    assert all(len(chunk) <= TARGET + OVERLAP + SLACK for chunk in handbook_chunks)
    assert all(chunk == chunk.strip() for chunk in handbook_chunks)


def test_each_chunk_after_the_first_repeats_the_end_of_the_previous(
    handbook_chunks: list[str],
) -> None:
    for previous, chunk in itertools.pairwise(handbook_chunks):
        carried = chunk.split("\n\n")[0].removeprefix("```ts\n")
        assert len(carried) >= 40
        assert carried in previous


def test_code_fences_are_never_split(handbook_chunks: list[str]) -> None:
    for chunk in handbook_chunks:
        assert len(FENCE_LINE.findall(chunk)) % 2 == 0
    body = read_note_file(HANDBOOK).body
    for block in code_blocks(body):
        assert any(block in chunk for chunk in handbook_chunks)


def test_every_word_of_the_source_is_in_some_chunk(handbook_chunks: list[str]) -> None:
    words = set(read_note_file(HANDBOOK).body.split())
    in_chunks = {word for chunk in handbook_chunks for word in chunk.split()}
    assert words <= in_chunks


def test_chunks_start_at_sections_and_paragraphs(handbook_chunks: list[str]) -> None:
    bodies = [chunk.split("\n\n", 1)[1] for chunk in handbook_chunks[1:]]
    assert any(body.startswith("## 6. Incidents") for body in bodies)
    for body in bodies:
        assert body[0].isupper() or body[0] in "#`|-*"


def test_short_and_blank_text() -> None:
    assert chunk_text("  A short note.\n") == ["A short note."]
    assert chunk_text(" \n\n ") == []
    with pytest.raises(ValueError):
        chunk_text("x", target=100, overlap=100)


def test_long_prose_is_cut_between_words_only() -> None:
    words = [f"word{n:04d}" for n in range(800)]
    text = ". ".join(" ".join(words[i : i + 9]) for i in range(0, 800, 9)) + "."
    chunks = chunk_text(text, 500, 80)
    assert len(chunks) > 5
    for chunk in chunks:
        assert len(chunk) <= 500 + 80 + SLACK
        assert all(re.fullmatch(r"word\d{4}\.?", token) for token in chunk.split())
    assert set(text.split()) <= {token for chunk in chunks for token in chunk.split()}


def test_a_code_block_bigger_than_the_target_is_cut_on_lines_and_fenced_again() -> None:
    lines = [f"    call_{n}(argument_{n})" for n in range(120)]
    text = "Intro paragraph.\n\n```python\n" + "\n".join(lines) + "\n```\n\nAfter the code."
    chunks = chunk_text(text, 600, 100)
    for chunk in chunks:
        assert len(chunk) <= 600 + 100 + SLACK
        assert len(FENCE_LINE.findall(chunk)) % 2 == 0
    joined = "\n".join(chunks)
    for line in lines:
        assert line in joined.split("\n")
    assert sum(chunk.count("```python") for chunk in chunks) >= 2


def test_a_gigantic_word_is_the_only_thing_cut_mid_word() -> None:
    text = "Start. " + "x" * 3000 + " end."
    chunks = chunk_text(text, 1000, 100)
    assert all(len(chunk) <= 1000 + 100 + SLACK for chunk in chunks)
    assert chunks[0] == "Start."
    assert chunks[-1].endswith("x\n\nend.")
    assert sum(chunk.count("x") for chunk in chunks) >= 3000


def test_chunking_is_deterministic(handbook_chunks: list[str]) -> None:
    assert chunk_text(read_note_file(HANDBOOK).body, TARGET, OVERLAP) == handbook_chunks
