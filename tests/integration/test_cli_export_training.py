"""`claude-memory export-training` as a real child process, on copies of the shared fixtures.

The export reads transcripts and writes files; it opens no database, so these tests start none.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from server.domain.training import validate_record, validation_sessions
from tests.fixture_sessions import CLAUDE_PROJECTS, S1, S2, S3, S4
from tests.integration.processes import run_cli
from tests.transcripts import SessionWriter

LIMITS = {"max_message_chars": 8_000, "max_record_chars": 32_000}
FIXTURE_SESSIONS = {S1, S2, S3, S4}


@pytest.fixture
def projects(tmp_path: Path) -> Path:
    copy = tmp_path / "projects"
    shutil.copytree(CLAUDE_PROJECTS, copy)
    return copy


def export(projects: Path, out: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    """Run the export with --json; the exit code, the summary and stderr."""
    result = run_cli(
        "export-training",
        "--claude-code",
        str(projects),
        "--out",
        str(out),
        "--json",
        *args,
        env={},
    )
    summary = json.loads(result.stdout) if result.stdout.strip() else {}
    return result.returncode, summary, result.stderr


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_fixture_export_passes_its_validator_and_splits_by_session(
    projects: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"

    code, summary, err = export(projects, out, "--validation-share", "0.3")

    assert code == 0, err
    train, validation = read_jsonl(out / "train.jsonl"), read_jsonl(out / "validation.jsonl")
    assert train and validation
    assert (summary["train"], summary["validation"]) == (len(train), len(validation))
    assert len(train) + len(validation) == 9
    assert (summary["prompts"], summary["interrupted"], summary["rejected"]) == (15, 2, 4)
    assert summary["subagent_files_skipped"] == 2
    for record in train + validation:
        assert set(record) == {"messages", "tools"} or set(record) == {"messages"}
        assert validate_record(record, **LIMITS) == []
    manifest = read_jsonl(out / "manifest.jsonl")
    sessions = {
        name: {m["session_id"] for m in manifest if m["file"] == name}
        for name in ("train.jsonl", "validation.jsonl")
    }
    assert sessions["train.jsonl"].isdisjoint(sessions["validation.jsonl"])
    assert sessions["validation.jsonl"] == validation_sessions(FIXTURE_SESSIONS, 0.3)
    assert sessions["train.jsonl"] | sessions["validation.jsonl"] == FIXTURE_SESSIONS
    in_order = [m for m in manifest if m["file"] == "train.jsonl"]
    assert [m["line"] for m in in_order] == list(range(1, len(train) + 1))


def test_records_that_fail_the_validator_are_reported_one_line_each_and_not_written(
    projects: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"

    code, summary, err = export(projects, out)

    assert code == 0, err
    assert summary["rejected_by_reason"] == {"lost_calls": 1, "no_answer": 3}
    assert summary["rejected_records"][2] == (
        'session c71e5d08-2a6f-4b1d-9e34-58f0b2c6d917 line 42 "terminal froze, sorry. go on:'
        " lint, test, commit.\": the transcript ends where the answer's tool calls were lost"
    )
    written = (out / "train.jsonl").read_text() + (out / "validation.jsonl").read_text()
    assert "terminal froze" not in written
    assert "build the orders page" not in written  # S4 line 14: no answer before the next prompt


def test_a_call_without_a_result_is_reported_and_not_written(tmp_path: Path) -> None:
    projects = tmp_path / "projects"
    session = "33333333-aaaa-4bbb-8ccc-000000000003"
    (
        SessionWriter(session)
        .prompt("what is in this folder?")
        .call("toolu_1", "Bash", {"command": "ls"}, message_id="m1")
        .result("toolu_1", "README.md\nsrc")
        .say("A README and the src folder.")
        .prompt("now run the test suite")
        .call("toolu_2", "Bash", {"command": "pnpm test"}, message_id="m2")
        .write(projects)
    )
    out = tmp_path / "out"

    code, summary, err = export(projects, out)

    assert code == 0, err
    assert summary["rejected_records"] == [
        f'session {session} line 5 "now run the test suite": the record does not end with an '
        "assistant answer; call toolu_2 (Bash) has no result"
    ]
    assert summary["rejected_by_reason"] == {"missing_result": 1, "no_answer": 1}
    (record,) = read_jsonl(out / "train.jsonl")
    assert record["messages"][1]["content"] == "what is in this folder?"
    assert "toolu_2" not in (out / "train.jsonl").read_text()
    # One session: everything trains, the validation file is there and empty.
    assert (out / "validation.jsonl").read_text() == ""
    assert (summary["train_sessions"], summary["validation_sessions"]) == (1, 0)


def test_secrets_are_redacted_before_anything_is_written(tmp_path: Path) -> None:
    projects = tmp_path / "projects"
    token = "ghp_" + "Zx9Yw8Vu" * 5
    aws = "AKIA" + "Q" * 16
    (
        SessionWriter("44444444-aaaa-4bbb-8ccc-000000000004")
        .prompt(f"deploy with {token}")
        .call(
            "toolu_1", "Bash", {"command": f"AWS_ACCESS_KEY_ID={aws} ./deploy.sh"}, message_id="m"
        )
        .result("toolu_1", f"using key {aws}\ndeployed")
        .say("Deployed.")
        .write(projects)
    )
    out = tmp_path / "out"

    code, summary, err = export(projects, out)

    assert code == 0, err
    written = (out / "train.jsonl").read_text()
    assert token not in written and aws not in written
    assert written.count("[REDACTED:github-token]") == 1
    assert written.count("[REDACTED:aws-access-key]") == 2
    assert summary["redactions"] == 3
    (record,) = read_jsonl(out / "train.jsonl")
    assert validate_record(record, **LIMITS) == []


def test_project_filter_exports_only_that_project(projects: Path, tmp_path: Path) -> None:
    by_name, by_path = tmp_path / "by-name", tmp_path / "by-path"

    code, summary, err = export(projects, by_name, "--project", "acme.web_ui")
    code_path, summary_path, _ = export(
        projects, by_path, "--project", "/home/dev/work/acme.web_ui/"
    )

    assert (code, code_path) == (0, 0), err
    manifest = read_jsonl(by_name / "manifest.jsonl")
    assert {m["project"] for m in manifest} == {"acme.web_ui"}
    assert {m["session_id"] for m in manifest} == {S4}
    assert (summary["prompts"], summary["other_project"], summary["train"]) == (2, 13, 1)
    assert (by_path / "train.jsonl").read_text() == (by_name / "train.jsonl").read_text()
    assert summary_path["train"] == 1


def test_a_copied_session_is_written_once(projects: Path, tmp_path: Path) -> None:
    api = projects / "-home-dev-acme-api"
    shutil.copy(
        api / f"{S1}.jsonl",
        api / "0f0f0f0f-1111-4222-8333-444444444444.jsonl",
    )

    code, summary, err = export(projects, tmp_path / "out")

    assert code == 0, err
    assert summary["duplicates"] == 3  # the copy's three valid prompts
    assert summary["train"] + summary["validation"] == 9


def test_a_dry_run_reports_and_writes_nothing(projects: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"

    code, summary, err = export(projects, out, "--dry-run")

    assert code == 0, err
    assert summary["train"] + summary["validation"] == 9
    assert not out.exists()


def test_nothing_valid_exits_1_with_a_message_and_writes_nothing(tmp_path: Path) -> None:
    projects = tmp_path / "projects"
    (
        SessionWriter("55555555-aaaa-4bbb-8ccc-000000000005")
        .prompt("run it")
        .call("toolu_1", "Bash", {"command": "make"}, message_id="m1")
        .write(projects)
    )
    out = tmp_path / "out"

    code, summary, err = export(projects, out)

    assert code == 1
    assert summary["rejected"] == 1
    assert "no valid training records" in err
    assert "Traceback" not in err
    assert not out.exists()


def test_bad_options_fail_before_reading_anything(projects: Path, tmp_path: Path) -> None:
    share = run_cli(
        "export-training", "--claude-code", str(projects), "--validation-share", "1", env={}
    )
    missing = run_cli("export-training", "--claude-code", str(tmp_path / "nowhere"), env={})

    assert share.returncode == 1
    assert "--validation-share must be from 0 to under 1" in share.stderr
    assert missing.returncode == 1
    assert "is not a folder of Claude Code projects" in missing.stderr
