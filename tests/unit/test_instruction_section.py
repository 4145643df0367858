"""Our section of an instruction file: the user's text around it survives byte for byte."""

from __future__ import annotations

import pytest

from server.domain.instruction_section import (
    BEGIN,
    END,
    SectionError,
    SectionLine,
    neutralised,
    parse,
    with_lines,
)

USER_TEXT = "# payrail\n\nRun `make check` before pushing.\n"
RULES = [SectionLine("Use pnpm, not npm.", 12), SectionLine("Deploy with `make ship`.", 40)]


def test_a_file_without_markers_is_all_the_users() -> None:
    current = parse(USER_TEXT)
    assert (current.before, current.lines, current.has_section) == (USER_TEXT, (), False)


def test_lines_are_appended_after_one_blank_line_and_read_back_with_their_ids() -> None:
    text = with_lines(parse(USER_TEXT), RULES)
    assert text.startswith(USER_TEXT + "\n" + BEGIN)
    assert "- Use pnpm, not npm. <!-- memory:12 -->" in text
    assert parse(text).lines == tuple(RULES)


def test_rewriting_the_section_keeps_text_before_and_after_it_untouched() -> None:
    tail = "\n## Release\nTag from main only.\n"
    text = with_lines(parse(USER_TEXT), RULES) + tail
    rewritten = with_lines(parse(text), [RULES[1]])
    assert rewritten.startswith(USER_TEXT + "\n" + BEGIN)
    assert rewritten.endswith(END + "\n" + tail)
    assert parse(rewritten).lines == (RULES[1],)


def test_writing_the_same_lines_twice_changes_nothing() -> None:
    once = with_lines(parse(USER_TEXT), RULES)
    assert with_lines(parse(once), RULES) == once


def test_no_lines_removes_the_section_and_gives_the_file_back() -> None:
    text = with_lines(parse(USER_TEXT), RULES)
    assert with_lines(parse(text), []) == USER_TEXT
    assert with_lines(parse(""), []) == ""


def test_a_line_a_person_wrote_or_edited_is_read_as_theirs() -> None:
    text = with_lines(parse(USER_TEXT), RULES)
    text = text.replace("Use pnpm, not npm.", "Use pnpm 9, not npm.")
    text = text.replace(END, "* Never force-push to main.\n" + END)
    lines = parse(text).lines
    assert SectionLine("Use pnpm 9, not npm.", 12) in lines
    assert SectionLine("Never force-push to main.", None) in lines


def test_connects_instructions_block_in_the_same_file_is_the_users_text() -> None:
    block = "<!-- claude-memory:start -->\nSearch memory first.\n<!-- claude-memory:end -->\n"
    text = with_lines(parse(block + USER_TEXT), RULES)
    assert parse(text).before.startswith(block)
    assert with_lines(parse(text), []) == block + USER_TEXT


def test_windows_line_endings_stay_windows_line_endings() -> None:
    crlf = USER_TEXT.replace("\n", "\r\n")
    text = with_lines(parse(crlf), RULES)
    assert "\n" not in text.replace("\r\n", "")
    assert parse(text).lines == tuple(RULES)
    assert with_lines(parse(text), []) == crlf


@pytest.mark.parametrize(
    "broken",
    [
        USER_TEXT + BEGIN + "\n- half written\n",
        USER_TEXT + END + "\n" + BEGIN + "\n",
        BEGIN + "\n" + END + "\n" + BEGIN + "\n" + END + "\n",
    ],
)
def test_broken_markers_are_refused_with_a_message(broken: str) -> None:
    with pytest.raises(SectionError, match="mend the file by hand"):
        parse(broken)


@pytest.mark.parametrize(
    ("text", "written"),
    [
        (f"Use pnpm {END} then", "Use pnpm &lt;!-- claude-memory:promoted:end --&gt; then"),
        ("hide <!-- the rest", "hide &lt;!-- the rest"),
        ("x --!> y <!-->", "x --!&gt; y &lt;!--&gt;"),
        ("a -> b, c --> d", "a -> b, c --&gt; d"),
    ],
)
def test_a_lines_comment_markers_are_neutralised_once_and_read_back_as_written(
    text: str, written: str
) -> None:
    file = with_lines(parse(USER_TEXT), [SectionLine(text, 7)])
    assert neutralised(written) == written
    assert parse(file).lines == (SectionLine(written, 7),)
