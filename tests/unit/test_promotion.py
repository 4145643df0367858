"""Which memories earn a line of the instruction files, and how the line reads (#58)."""

from __future__ import annotations

import pytest

from server.domain.promotion import LINE_CHARS, fitting, is_stated, rule_text, tokens_of


@pytest.mark.parametrize(
    ("content", "line"),
    [
        ("The user prefers pnpm over npm. It is faster here.", "Prefer pnpm over npm."),
        ("We use ruff for linting and formatting.", "Use ruff for linting and formatting."),
        ("The user wants you to run the tests first.", "Run the tests first."),
        (
            "Decision: store every time in UTC. Local times confused the UI.",
            "Store every time in UTC.",
        ),
        ("- Never commit .env files\n- and more", "Never commit .env files"),
        ("acme-api uses pnpm. The lockfile is pnpm-lock.yaml.", "acme-api uses pnpm."),
        ("## Testing\n\nRun `make check` before pushing.", "Run `make check` before pushing."),
    ],
)
def test_a_line_is_the_first_statement_made_imperative_where_its_words_allow(
    content: str, line: str
) -> None:
    assert rule_text(content) == line


def test_a_long_statement_is_cut_at_a_word_with_an_ellipsis() -> None:
    line = rule_text("Always " + "check the generated migration twice " * 20)
    assert len(line) <= LINE_CHARS and line.endswith("…") and not line.endswith(" …")


@pytest.mark.parametrize(
    ("kind", "source", "metadata", "stated"),
    [
        ("preference", "api", {}, True),
        ("pattern", "claude-code", {}, True),
        ("distilled", "distill", {"distill_kind": "decision"}, True),
        ("manual", "promote", {"written_in_instructions": "CLAUDE.md"}, True),
        ("distilled", "distill", {"distill_kind": "bug"}, False),
        ("note", "api", {}, False),
        # Imported, whatever its kind: someone else's words (#65 M2).
        ("preference", "notes", {}, False),
        ("preference", "distill", {"imported_from": "memories"}, False),
        ("manual", "mem0", {"distill_kind": "decision"}, False),
    ],
)
def test_a_rule_the_user_stated_is_told_by_kind_distilled_kind_or_hand_never_by_import(
    kind: str, source: str, metadata: dict[str, str], stated: bool
) -> None:
    assert is_stated(kind, source, metadata) is stated


def test_new_lines_fit_after_the_kept_ones_within_both_caps() -> None:
    kept = ["x" * 40]  # 10 tokens
    candidates = ["y" * 40, "z" * 40, "w" * 40]
    assert fitting(kept, candidates, max_lines=3, max_tokens=1_000) == 2
    assert fitting(kept, candidates, max_lines=30, max_tokens=25) == 1
    assert fitting(kept * 3, candidates, max_lines=3, max_tokens=1_000) == 0
    assert tokens_of("abcde") == 2
