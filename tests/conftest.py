"""Fixtures shared by every test group.

isolated_home (autouse)   HOME, CLAUDE_MEMORY_HOME and .env lookups point into tmp_path,
                          so no test touches the user's real data or config.
"""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAUDE_MEMORY_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("EMBEDDING_MODEL", raising=False)
    monkeypatch.chdir(tmp_path)
    return home
