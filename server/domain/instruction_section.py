"""The section of a repository's instruction file that memory writes, and nothing else.

Coding agents read standing instructions from files in the repository (`CLAUDE.md`,
`AGENTS.md`, `GEMINI.md`, `.github/copilot-instructions.md`). `claude-memory promote` keeps
one section of such a file, between two HTML comments a person can see and a Markdown viewer
hides; everything before and after the markers is the user's and is handed back byte for byte.
(The markers differ from `connect`'s instructions block, `<!-- claude-memory:start`, so
one file can hold both.)
Each line of the section is a Markdown list item ending in `<!-- memory:<id> -->`, so the next
proposal finds the memory a line came from: to demote it when the memory stops being true, and
to notice a line a person edited (its text no longer the memory's) or deleted.

A line's text is the memory's (or a person's) and may hold anything, so it never carries an
HTML comment of its own: `<!--` and `-->` in it are written `&lt;!--` and `--&gt;`
(`neutralised`). A memory saying `<!-- claude-memory:promoted:end -->` would otherwise close
the section early and break the file for every later run, or hide text from a viewer (#65).

Pure text in, text out: no files, no database, so the CLI, REST and the importer of instruction
files read the section the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

BEGIN = "<!-- claude-memory:promoted:begin -->"
END = "<!-- claude-memory:promoted:end -->"
HEADING = "## What memory has learned about this project"
NOTE = (
    "<!-- Proposed by `claude-memory promote` from memories that proved themselves (used"
    " again and again, or stated by you) and still hold in the code."
    " Edit or delete lines freely: edits come back as memories, deleted lines stay deleted. -->"
)
# The note as earlier versions wrote it: still ours when a file holds it, never a person's line.
_EARLIER_NOTES = (
    "<!-- Proposed by `claude-memory promote` from memories that were used and still hold."
    " Edit or delete lines freely: edits come back as memories, deleted lines stay deleted. -->",
)
_MEMORY_ID = re.compile(r"\s*<!--\s*memory:(\d+)\s*-->\s*$")
_LIST_ITEM = re.compile(r"^\s*[-*+]\s+")
# What opens and closes an HTML comment (`--!>` closes one too, in HTML's own parsing).
_COMMENT_OPEN = "<!--"
_COMMENT_CLOSE = re.compile(r"--(!?)>")


class SectionError(ValueError):
    """The file's markers are not one begin followed by one end: left for a person to mend."""


@dataclass(frozen=True, slots=True)
class SectionLine:
    """One line of our section: the rule as written, and the memory it came from.

    `memory_id` is None for a line a person wrote inside the section themselves.
    """

    text: str
    memory_id: int | None = None


@dataclass(frozen=True, slots=True)
class InstructionText:
    """An instruction file cut at our markers: the user's text around our section's lines."""

    before: str
    lines: tuple[SectionLine, ...]
    after: str
    has_section: bool


def parse(text: str) -> InstructionText:
    """Cut a file's text at our markers; a file without them is all the user's.

    Raises SectionError for a begin without an end (or the reverse), markers out of order or
    repeated: rewriting such a file could swallow the user's text, so nothing is written.
    """
    begins, ends = text.count(BEGIN), text.count(END)
    if begins == 0 and ends == 0:
        return InstructionText(before=text, lines=(), after="", has_section=False)
    if begins != 1 or ends != 1:
        raise SectionError(
            f"expected one {BEGIN} and one {END}, found {begins} and {ends}:"
            " mend the file by hand, then run promote again"
        )
    start, stop = text.index(BEGIN), text.index(END)
    if stop < start:
        raise SectionError(f"{END} comes before {BEGIN}: mend the file by hand")
    before = text[:start]
    after = text[stop + len(END) :]
    if after.startswith("\r\n"):
        after = after[2:]
    elif after.startswith("\n"):
        after = after[1:]
    body = text[start + len(BEGIN) : stop]
    return InstructionText(before=before, lines=_section_lines(body), after=after, has_section=True)


def _section_lines(body: str) -> tuple[SectionLine, ...]:
    """The section's lines, without our heading, our note and blank lines."""
    lines: list[SectionLine] = []
    for raw in body.splitlines():
        line = raw.strip()
        if not line or line in (HEADING, NOTE, *_EARLIER_NOTES):
            continue
        found = _MEMORY_ID.search(line)
        memory_id = int(found.group(1)) if found else None
        if found:
            line = line[: found.start()].rstrip()
        text = neutralised(_LIST_ITEM.sub("", line, count=1))
        lines.append(SectionLine(text=text, memory_id=memory_id))
    return tuple(lines)


def neutralised(text: str) -> str:
    """`text` with no HTML comment marker left in it: `<!--` becomes `&lt;!--` and `-->`
    becomes `--&gt;`, which a reader still reads and no parser takes for a comment. Applying
    it twice changes nothing more."""
    return _COMMENT_CLOSE.sub(r"--\1&gt;", text.replace(_COMMENT_OPEN, "&lt;!--"))


def render_line(line: SectionLine) -> str:
    """One list item; a memory's line carries its id in a comment a viewer hides."""
    text = neutralised(" ".join(line.text.split()))
    if line.memory_id is None:
        return f"- {text}"
    return f"- {text} <!-- memory:{line.memory_id} -->"


def render_section(lines: tuple[SectionLine, ...] | list[SectionLine], newline: str = "\n") -> str:
    """The whole section, markers included, ending with a newline."""
    body = [BEGIN, HEADING, NOTE, "", *(render_line(line) for line in lines), END]
    return newline.join(body) + newline


def with_lines(current: InstructionText, lines: tuple[SectionLine, ...] | list[SectionLine]) -> str:
    """The file's new text: the user's text untouched, our section holding `lines`.

    No lines removes the section (and the blank line we put before it); a file without a
    section gets it at its end, after one blank line.
    """
    newline = "\r\n" if "\r\n" in current.before + current.after else "\n"
    if not lines:
        if not current.has_section:
            return current.before
        return _trim_separator(current.before, newline) + current.after
    section = render_section(lines, newline)
    if current.has_section:
        return current.before + section + current.after
    before = current.before
    if before and not before.endswith(newline):
        before += newline
    separator = newline if before and not before.endswith(newline * 2) else ""
    return before + separator + section


def _trim_separator(before: str, newline: str) -> str:
    """The text before a removed section, without the blank line that set it apart."""
    if before.endswith(newline * 2):
        return before[: -len(newline)]
    return before
