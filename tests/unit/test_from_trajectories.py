"""The trajectory-file reader, against tests/fixtures/other_tools/trajectories."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

from server.core.models.memories import MemoryDraft
from server.domain.trajectories import Trajectory, trajectory_content
from server.ingest.from_trajectories import default_paths, read_trajectories
from server.ingest.tool_reading import ReadContext, ToolReading
from tests.other_tools import TRAJECTORIES


def by_task(reading: ToolReading) -> dict[str, MemoryDraft]:
    return {
        r.draft.metadata["trajectory"]["task"]: r.draft for group in reading.groups for r in group
    }


def test_markdown_sections_become_a_trajectory_stored_as_learn_stores_it() -> None:
    reading = read_trajectories([TRAJECTORIES / "flaky-orders-test.md"], ReadContext())

    assert reading.errors == []
    [draft] = by_task(reading).values()
    parts = draft.metadata["trajectory"]
    assert parts == {
        "task": "Get `orders.pagination.test.ts` to stop failing one run in five on CI.",
        "worked": "Compared `created_at` as text in the keyset cursor instead of a JavaScript "
        "Date; Added `id` as the tie-breaker in the ORDER BY and in the cursor",
        "avoid": "Rounding timestamps to milliseconds (rows created in the same millisecond "
        "still collide); Retrying the test in CI: it hides the bug",
    }  # the `## Notes` section belongs to no part
    assert draft.content == trajectory_content(Trajectory(**parts))
    assert (draft.kind, draft.source) == ("trajectory", "trajectories")
    assert (draft.project, draft.tags) == ("acme-api", ["ci", "postgres"])
    assert draft.created_at == datetime(2026, 2, 18, 15, 30, tzinfo=UTC)


def test_labelled_lines_hold_several_trajectories_in_one_file() -> None:
    reading = read_trajectories([TRAJECTORIES / "session-notes.txt"], ReadContext())

    tasks = by_task(reading)
    assert list(tasks) == [
        "make `pnpm install` work behind the office proxy",
        "speed up the Docker build of acme-web",
    ]
    docker = tasks["speed up the Docker build of acme-web"].metadata["trajectory"]
    assert docker["worked"].startswith("copy package.json and pnpm-lock.yaml first")
    assert docker["avoid"].startswith("`COPY . .` before installing")
    assert reading.groups[0][1].where == f"{TRAJECTORIES / 'session-notes.txt'} (trajectory 2)"


def test_json_lines_take_worked_or_did_and_lists() -> None:
    tasks = by_task(read_trajectories([TRAJECTORIES / "learned.jsonl"], ReadContext()))

    rounding = tasks["Reproduce the invoice rounding bug locally"]
    assert rounding.metadata["trajectory"]["worked"] == (
        "seed a tenant with currency JPY; export with --format=csv"
    )
    assert rounding.project == "acme-api"
    assert rounding.created_at == datetime(2026, 2, 2, 9, 45, tzinfo=UTC)
    assert tasks["Regenerate the OpenAPI client after an API change"].tags == ["openapi"]


def test_agent_trajectories_folder_reads_completed_and_skips_the_rest() -> None:
    reading = read_trajectories([TRAJECTORIES / ".trajectories"], ReadContext())

    assert reading.errors == []
    assert reading.skipped == {"active": 1}
    assert reading.files_found == 2  # index.json and the Markdown copy are not read
    [draft] = by_task(reading).values()
    parts = draft.metadata["trajectory"]
    assert parts["task"] == "Cache the pnpm store in CI"
    assert parts["worked"].startswith("Cache the pnpm store with actions/cache keyed on")
    assert parts["avoid"] == (
        "caching node_modules: breaks with pnpm's symlinked layout; a prebuilt Docker image "
        "with dependencies; the cache key first used package.json, which missed lockfile-only "
        "changes"
    )
    assert (draft.project, draft.project_path) == ("acme-api", "/home/dev/work/acme-api")
    assert draft.metadata["original_id"] == "traj_k3x9m2p7q1w8"
    assert draft.created_at == datetime(2026, 2, 20, 15, 10, tzinfo=UTC)  # completedAt


def test_a_trajectory_as_export_wrote_it_comes_back_the_same(tmp_path: Path) -> None:
    parts = {"task": "Bump Postgres", "worked": "pg_upgrade --link", "avoid": "dump and restore"}
    exported = tmp_path / "export.jsonl"
    record = {
        "id": 41,
        "content": trajectory_content(Trajectory(**parts)),
        "kind": "trajectory",
        "project": "acme-api",
        "tags": ["postgres"],
        "created_at": "2026-01-30T10:00:00+00:00",
        "metadata": {"trajectory": parts},
    }
    exported.write_text(json.dumps(record) + "\n")

    [draft] = by_task(read_trajectories([exported], ReadContext())).values()

    assert draft.content == record["content"]
    assert (draft.project, draft.tags) == ("acme-api", ["postgres"])
    assert draft.metadata["original_id"] == "41"


def test_a_trajectory_without_what_worked_is_reported_where_it_is(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    shutil.copytree(TRAJECTORIES, folder, ignore=shutil.ignore_patterns(".trajectories", "*.md"))
    shutil.copy(TRAJECTORIES / "flaky-orders-test.md", folder)
    stripe = folder / "stripe.txt"
    stripe.write_text("Task: rotate the Stripe webhook secret\nAvoid: deleting the old endpoint\n")
    broken = folder / "broken.json"
    broken.write_text('{"task": "x",')

    reading = read_trajectories([folder], ReadContext())

    assert reading.errors == [
        f"{broken}: not JSON: Expecting property name enclosed in double quotes"
        " (line 1, column 14)",
        f"{stripe}: worked is empty; say what solved it",
    ]
    assert reading.skipped == {"invalid": 1}
    assert len(by_task(reading)) == 5


def test_a_file_under_a_trajectories_folder_belongs_to_that_folders_project(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "acme-web" / ".trajectories"
    folder.mkdir(parents=True)
    (folder / "note.md").write_text("Task: fix the login redirect\nDid: keep ?next= in state\n")

    [draft] = by_task(read_trajectories([folder], ReadContext())).values()

    assert (draft.project, draft.project_path) == ("acme-web", str(tmp_path / "acme-web"))
    assert default_paths({}, tmp_path, tmp_path / "acme-web") == [folder]
