"""The hook process's edit of a context the server could not check (server/worktree/
context_check.py): orphaned lines out, drifted lines noted and last in their section, nothing
else touched; malformed items, a missing tree or a slow check leave the context as sent."""

from __future__ import annotations

import subprocess
import threading
from datetime import UTC, datetime
from pathlib import Path

from server.worktree.context_check import _within, check_items, checked_context, marked

RECALL = """# Memory recall for this prompt

_Recalled from claude-memory: notes from earlier sessions, shown as data._

- 2026-01-02 [distilled #12, acme-api, by you] The Go toolchain is go 1.22.
- 2026-01-02 [distilled #13, acme-api, imported from your session] See docs/runbook.md.
- 2026-01-02 [note #14, by you] Call sendProblem() for errors."""

START = """# Memory context: acme-api

_Recalled from claude-memory._

3 memories in acme-api, 3 in all.

## Preferences (stated)
- [preference #20, confidence 90%] Use pnpm, never npm.
- [preference #21, confidence 80%] See docs/style.md.

## Recent work
- 2026-01-02 [distilled #12] The Go toolchain is go 1.22.
- 2026-01-02 [distilled #14] Call sendProblem() for errors."""


def test_drifted_lines_are_noted_and_go_last_and_orphaned_lines_go() -> None:
    edited = marked(RECALL, {12: "drifted: go is now 1.23 (was 1.22)"}, {13}, drop_if_empty=True)

    lines = edited.splitlines()
    assert lines[-2] == "- 2026-01-02 [note #14, by you] Call sendProblem() for errors."
    assert lines[-1] == (
        "- 2026-01-02 [distilled #12, acme-api, by you] "
        "(drifted: go is now 1.23 (was 1.22)) The Go toolchain is go 1.22."
    )
    assert "runbook" not in edited
    assert edited.startswith("# Memory recall for this prompt\n\n_Recalled")


def test_a_section_left_empty_loses_its_heading_and_the_rest_stays() -> None:
    edited = marked(START, {}, {20, 21}, drop_if_empty=False)

    assert "## Preferences" not in edited and "pnpm" not in edited
    assert "## Recent work\n- 2026-01-02 [distilled #12]" in edited
    assert "3 memories in acme-api" in edited


def test_a_recall_with_every_memory_orphaned_says_nothing() -> None:
    assert marked(RECALL, {}, {12, 13, 14}, drop_if_empty=True) == ""
    assert marked(START, {}, {12, 14, 20, 21}, drop_if_empty=False).startswith("# Memory context")


def test_nothing_to_change_leaves_the_text_as_it_was() -> None:
    assert marked(RECALL, {}, set(), drop_if_empty=True) == RECALL
    assert marked(START, {99: "drifted: x"}, {98}, drop_if_empty=False) == START


def test_items_carry_only_memories_with_anchors_as_json_values() -> None:
    written = datetime(2026, 1, 2, tzinfo=UTC)

    items = check_items([(1, written, [("path", "go.mod", None)]), (2, written, [])])

    assert items == [
        {"id": 1, "created_at": "2026-01-02T00:00:00+00:00", "anchors": [["path", "go.mod", None]]}
    ]


def test_malformed_items_or_no_tree_leave_the_context_as_sent(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "go.mod").write_text("module acme\n\ngo 1.23\n")
    items = [{"id": 12, "created_at": "2026-01-02", "anchors": [["version", "go", "1.22"]]}]

    assert checked_context(RECALL, items, str(tmp_path / "gone"), 5.0, drop_if_empty=True) == RECALL
    for bad in ("nonsense", [{"id": "12"}], [{"id": 12, "anchors": [["version"]]}], None):
        assert checked_context(RECALL, bad, str(tmp_path), 5.0, drop_if_empty=True) == RECALL
    checked = checked_context(RECALL, items, str(tmp_path), 5.0, drop_if_empty=True)
    assert "(drifted: go is now 1.23 (was 1.22)) The Go toolchain" in checked.splitlines()[-1]


def test_a_check_past_its_budget_or_failing_gives_nothing_and_does_not_raise() -> None:
    release = threading.Event()

    def slow(_: object) -> str:
        release.wait(10)
        return "late"

    def broken(_: object) -> str:
        raise RuntimeError("unreadable tree")

    assert _within(0.05, slow, None) is None
    release.set()
    assert _within(5.0, broken, None) is None
    assert _within(5.0, lambda value: value, "done") == "done"
