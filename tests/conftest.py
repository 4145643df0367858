"""Fixtures shared by every test group.

isolated_home (autouse)   HOME, CLAUDE_MEMORY_HOME and .env lookups point into tmp_path,
                          so no test touches the user's real data or config.

The database, model and server fixtures (pg_server, pg_url, embedder, pool, settings, service,
app_url, fresh_database) come from the plugin tests/db_fixtures.py, and `agent_clis` (the
agents' own CLIs, installed once) from tests/agent_clis.py, both loaded here so every group
(integration, reliability, security, e2e) shares them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

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
    """Mark each test with its folder's group; leave the real-LLM tests out unless an endpoint
    is configured (not skipped: not run)."""
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
    if os.environ.get("LLM_TEST_BASE_URL"):
        return
    kept = [item for item in items if item.get_closest_marker("llm") is None]
    if len(kept) != len(items):
        config.hook.pytest_deselected(items=[i for i in items if i not in kept])
        items[:] = kept
