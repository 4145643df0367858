"""Fixtures shared by every test group.

isolated_home (autouse)   HOME, CLAUDE_MEMORY_HOME and .env lookups point into tmp_path,
                          so no test touches the user's real data or config.

At the end of every run: pytest's 25 slowest steps (`--durations=25` in pyproject.toml), then the
time per test folder and the ten slowest files (setup, call and teardown summed; with xdist,
summed over workers, so more than the wall-clock time).

The database, model and server fixtures (pg_server, pg_url, embedder, pool, settings, service,
app_url, fresh_database) come from the plugin tests/db_fixtures.py, and `agent_clis` (the
agents' own CLIs, installed once) from tests/agent_clis.py, both loaded here so every group
(integration, reliability, security, e2e) shares them.
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

import pytest

# One torch (OpenMP) thread per process, in the workers and every CLI and server they start
# (they inherit the environment): the suite runs several processes per core, and torch's
# threads, one per core each, then wait on each other. Set before anything imports torch;
# measured on 600 texts with the machine busy: 4.3 CPU-seconds on one thread, 8.6 to 10.7 on
# two (and faster wall-clock too). A value set by the caller is kept.
os.environ.setdefault("OMP_NUM_THREADS", "1")

from tests.process_marks import starts_processes

pytest_plugins = ["tests.db_fixtures", "tests.agent_clis"]


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAUDE_MEMORY_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("CLAUDE_MEMORY_DATABASE_URL", raising=False)
    monkeypatch.delenv("CLAUDE_MEMORY_EMBEDDING_MODEL", raising=False)
    monkeypatch.chdir(tmp_path)
    return home


# A test's folder names its group, so `-m e2e` (or `-m "not integration"`) selects by folder:
# a `pytestmark` in a conftest or helper module marks nothing.
GROUP_FOLDERS = ("integration", "reliability", "security", "e2e")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test with its folder's group, and `agent_clis` where it drives the agents' own
    CLIs (the `agent_clis` fixture, npm packages); leave the real-LLM tests out unless an
    endpoint is configured (not skipped: not run)."""
    import os

    tests_root = Path(__file__).parent
    for item in items:
        folder = (
            item.path.relative_to(tests_root).parts[0]
            if item.path.is_relative_to(tests_root)
            else ""
        )
        if folder in GROUP_FOLDERS:
            item.add_marker(folder)
        if "agent_clis" in getattr(item, "fixturenames", ()):
            item.add_marker("agent_clis")
        if starts_processes(item.path):
            item.add_marker("processes")
    if os.environ.get("LLM_TEST_BASE_URL"):
        return
    kept = [item for item in items if item.get_closest_marker("llm") is None]
    if len(kept) != len(items):
        config.hook.pytest_deselected(items=[i for i in items if i not in kept])
        items[:] = kept


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Seconds per test folder and per file (setup + call + teardown), so a slow test is seen
    the day it lands."""
    per_folder: dict[str, float] = defaultdict(float)
    per_file: dict[str, float] = defaultdict(float)
    tests: dict[str, set[str]] = defaultdict(set)
    for reports in terminalreporter.stats.values():
        for report in reports:
            if not isinstance(report, pytest.TestReport):
                continue
            file = report.nodeid.split("::", 1)[0]
            parts = file.split("/")
            folder = parts[parts.index("tests") + 1] if "tests" in parts[:-2] else "other"
            per_folder[folder] += report.duration
            per_file[file] += report.duration
            tests[folder].add(report.nodeid)
    if not per_folder:
        return
    write = terminalreporter.write_line
    terminalreporter.section("time per test folder (setup + call + teardown)")
    for folder, seconds in sorted(per_folder.items(), key=lambda kv: -kv[1]):
        write(f"{seconds:9.1f} s  {len(tests[folder]):5d} tests  {folder}")
    write(f"{sum(per_folder.values()):9.1f} s  {sum(map(len, tests.values())):5d} tests  all")
    terminalreporter.section("ten slowest test files")
    for file, seconds in sorted(per_file.items(), key=lambda kv: -kv[1])[:10]:
        write(f"{seconds:9.1f} s  {file}")
