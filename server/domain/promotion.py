"""Which memories earn a line in a repository's instruction files, and how the line reads (#58).

Pure rules, no I/O: server/recall/promote.py gathers the memories, their uses and their
working-tree verdicts and asks these functions.

- A line states the memory's first sentence, cut at LINE_CHARS, in the imperative where the
  memory's own words allow it: "The user prefers pnpm over npm." becomes "Prefer pnpm over
  npm.", "We use ruff for linting." becomes "Use ruff for linting."; nothing is invented (no
  model is asked), so a memory that reads as a plain fact stays a fact. An HTML comment marker
  in it is neutralised (server/domain/instruction_section.py), as the file will hold it.
- A memory is *stated* when the user said it as a rule: a preference or pattern (convention)
  memory, one distilled as a decision, preference or pattern (`metadata.distill_kind`), or a
  line a person wrote in the section (`metadata.written_in_instructions`). Both metadata keys
  are the server's own (server/core/validation.py SERVER_METADATA_KEYS: a save or an import
  carrying them has them dropped), and nothing imported is stated, whatever its kind (#65 M2):
  an export's "preference" or a note's inline `#convention` is someone else's word. Tags say
  nothing of who said a thing (any writer picks them), so they never make a memory stated.
- Each line shows where its words come from (`source_of`): the user, an agent, an import or a
  teammate.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from server.agent_facts.every import ABOUT
from server.core.models.memories import Memory
from server.core.models.promotion import AGENT, IMPORT, USER
from server.domain.instruction_section import neutralised

LINE_CHARS = 200
TOKEN_CHARS = 4  # an estimated token, as the receipts count them
# Kinds never promoted: a conversation turn is what was said, a trajectory how a task went.
UNPROMOTED_KINDS = ("raw", "trajectory")
STATED_KINDS = ("preference", "pattern")
STATED_WORDS = ("decision", "convention", "preference", "pattern")
WRITTEN_BY_HAND = "written_in_instructions"  # metadata key of a line a person wrote
DISTILL_KIND = "distill_kind"  # metadata key: what distillation read the memory as
IMPORTED = "imported_from"  # metadata key: the import (an export's file) a memory came from
# Sources of memories read from files or other tools by `import` (server/ingest/): data, never
# the user's own words.
IMPORT_SOURCES = frozenset(
    {"claude-ai", "notes", "claude-md", "claude-mem", "markdown", "mem0", "trajectories"}
)
# Sources of saves a person makes: the web UI and REST default to "api", promote's hand lines.
USER_SOURCES = frozenset({"api", "promote"})
# Notes `import --from instructions` read from an instruction or rules file carry one of these
# tags (server/ingest/from_claude_md.py): the agents read that file already, so proposing its
# text again would copy the file into itself (or into its neighbour) once it had been used.
INSTRUCTION_FILE_SOURCE = "claude-md"
INSTRUCTION_FILE_TAGS: tuple[str, ...] = (
    *dict.fromkeys(about.INSTRUCTIONS_TAG for about in ABOUT.values()),  # each agent's files
    "claude-rules",  # Claude Code's rules files, .claude/rules/*.md
)

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(\[])")
_MARKDOWN_LEAD = re.compile(r"^(?:#+\s*|[-*+]\s+|\d+[.)]\s+|>\s*)+")
# "The user prefers X" / "User wants to X" -> "Prefer X" / "X"
_IMPERATIVES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^(?:the\s+)?user\s+(?:prefers|likes)\s+(?:to\s+)?", re.I), "Prefer "),
    (
        re.compile(
            r"^(?:the\s+)?user\s+(?:wants|asked|asks)\s+(?:us\s+|you\s+|the agent\s+)?to\s+", re.I
        ),
        "",
    ),
    (
        re.compile(r"^(?:we|the team|this project|the project)\s+(?:always\s+)?uses?\s+", re.I),
        "Use ",
    ),
    (re.compile(r"^(?:we|the team)\s+(?:decided|agreed|chose)\s+to\s+", re.I), ""),
    (re.compile(r"^(?:we|the team)\s+(?:never)\s+", re.I), "Never "),
    (re.compile(r"^(?:we|the team)\s+(?:always)\s+", re.I), "Always "),
    (re.compile(r"^decision:\s*", re.I), ""),
    (re.compile(r"^convention:\s*", re.I), ""),
    (re.compile(r"^preference:\s*", re.I), ""),
)


def rule_text(content: str) -> str:
    """The line a memory becomes: its first statement, imperative where its words allow."""
    first = ""
    lines = [raw.strip() for raw in content.strip().splitlines() if raw.strip()]
    statements = [line for line in lines if not line.startswith("#")] or lines  # not a heading
    for raw in statements:
        line = _MARKDOWN_LEAD.sub("", raw)
        if line:
            first = line
            break
    first = _SENTENCE_END.split(" ".join(first.split()), maxsplit=1)[0]
    for pattern, replacement in _IMPERATIVES:
        changed = pattern.sub(replacement, first, count=1)
        if changed != first and changed:
            first = changed[0].upper() + changed[1:]  # the rule's verb now starts the line
            break
    first = neutralised(first)
    if len(first) > LINE_CHARS:
        cut = first[: LINE_CHARS - 1].rsplit(" ", 1)[0].rstrip(",;:")
        first = f"{cut}…"
    return first


def is_imported(source: str, metadata: Mapping[str, Any]) -> bool:
    """Whether a memory came from an import (an export, notes, another tool's store)."""
    return source in IMPORT_SOURCES or bool(metadata.get(IMPORTED))


def is_stated(kind: str, source: str, metadata: Mapping[str, Any]) -> bool:
    """Whether the user stated this memory as a rule (see the module's docstring)."""
    if is_imported(source, metadata):
        return False
    if kind in STATED_KINDS or metadata.get(WRITTEN_BY_HAND):
        return True
    return str(metadata.get(DISTILL_KIND, "")).lower() in STATED_WORDS


def source_of(memory: Memory) -> str:
    """Who a memory's words come from, for its line in the proposal: "the user", "an agent",
    "an import" or "a teammate (bob)". Promote runs for nobody in particular (the CLI, or the
    single-user server), so a memory with an owner is a teammate's."""
    if memory.owner:
        return f"a teammate ({memory.owner})"
    if is_imported(memory.source, memory.metadata):
        return IMPORT
    if memory.metadata.get(WRITTEN_BY_HAND) or memory.source in USER_SOURCES:
        return USER
    if memory.kind in STATED_KINDS and memory.metadata.get(DISTILL_KIND):
        return USER  # a preference the user said in a session, as distillation read it
    return AGENT


def from_instruction_file(source: str, tags: Sequence[str]) -> bool:
    """Whether a memory was read from an instruction or rules file the agents read already."""
    return source == INSTRUCTION_FILE_SOURCE and any(t in INSTRUCTION_FILE_TAGS for t in tags)


def tokens_of(text: str) -> int:
    """Estimated tokens of a line: four characters each, rounded up."""
    return -(-len(text) // TOKEN_CHARS)


def fitting(kept: Sequence[str], candidates: Sequence[str], max_lines: int, max_tokens: int) -> int:
    """How many of `candidates` (best first) fit after the lines `kept`, within the caps."""
    lines = len(kept)
    tokens = sum(tokens_of(t) for t in kept)
    taken = 0
    for text in candidates:
        cost = tokens_of(text)
        if lines + 1 > max_lines or tokens + cost > max_tokens:
            break
        lines += 1
        tokens += cost
        taken += 1
    return taken
