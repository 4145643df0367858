"""Memories checked against a real git repository made in the test (server/worktree/tree_check.py,
tests/git_history.py): a version bump, a changed setting, a renamed file, a deleted file and
untouched facts."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from server.domain.anchors import anchors_of
from server.worktree.tree_check import MemoryCheck, TreeChecker
from tests.git_history import MEMORIES_WRITTEN, acme_repository, write


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return acme_repository(tmp_path / "acme-api")


def verdict(repo: Path, memory: str) -> MemoryCheck:
    anchors = [(a.kind, a.name, a.value) for a in anchors_of(memory)]
    [checked] = TreeChecker(repo).check([(anchors, MEMORIES_WRITTEN)])
    return checked


def test_a_version_bump_is_drift_with_the_version_now(repo: Path) -> None:
    checked = verdict(repo, "The Go toolchain is pinned to go 1.22 in `go.mod`.")

    assert checked.verdict == "drifted"
    assert checked.note() == "drifted: go is now 1.23 (was 1.22)"


def test_a_changed_setting_is_drift_with_the_value_now(repo: Path) -> None:
    checked = verdict(repo, "`HTTP_TIMEOUT=30s` in `.env.example`")

    assert checked.verdict == "drifted" and "HTTP_TIMEOUT is now 45s (was 30s)" in checked.note()


def test_a_renamed_file_is_drift_naming_the_new_path_and_commit(repo: Path) -> None:
    checked = verdict(repo, "Tokens are verified in internal/auth/jwt.go by VerifyToken().")

    assert checked.verdict == "drifted"
    [finding] = checked.findings
    assert (finding.name, finding.now) == ("internal/auth/jwt.go", "internal/auth/tokens.go")
    assert finding.commit and len(finding.commit) >= 7


def test_a_memory_about_a_deleted_file_is_orphaned(repo: Path) -> None:
    checked = verdict(repo, "The on-call steps are in docs/runbook.md.")

    assert checked.verdict == "orphaned" and "docs/runbook.md was deleted" in checked.note()


def test_a_symbol_gone_from_the_file_it_names_is_drift(repo: Path) -> None:
    checked = verdict(repo, "Call `sendError()` from src/errors.ts for every error response.")

    assert checked.verdict == "drifted"
    assert checked.note() == "drifted: sendError is no longer in the files it names"


def test_untouched_facts_are_fresh(repo: Path) -> None:
    assert verdict(repo, "Call `sendProblem()` from src/errors.ts for every error.").verdict == (
        "fresh"
    )
    assert verdict(repo, "LOG_LEVEL=info in .env.example").verdict == "fresh"
    assert verdict(repo, "This repo uses pnpm@9.12.0.").verdict == "fresh"


def test_what_cannot_be_checked_is_unchecked_never_drifted(repo: Path, tmp_path: Path) -> None:
    assert verdict(repo, "We prefer small pull requests.").verdict == "unchecked"
    assert verdict(repo, "`sendProblem()` handles errors").verdict == "unchecked"  # no file
    assert verdict(repo, "uses left-pad 1.3.0").verdict == "unchecked"  # no manifest names it
    assert verdict(repo, "see `rateLimit.ts`").verdict == "unchecked"  # no folder given
    gone = TreeChecker(tmp_path / "nowhere").check([([("path", "go.mod", None)], None)])
    assert [c.verdict for c in gone] == ["unchecked"]


def test_files_are_read_once_per_change(repo: Path) -> None:
    checker = TreeChecker(repo)
    anchors = [("path", ".env.example", None), ("setting", "LOG_LEVEL", "info")]
    first = checker.check([(anchors, None)])
    write(repo, ".env.example", "LOG_LEVEL=debug\n")
    os.utime(repo / ".env.example", (1_900_000_000, 1_900_000_000))
    second = checker.check([(anchors, None)])

    assert [c.verdict for c in first + second] == ["fresh", "drifted"]
