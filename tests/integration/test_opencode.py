"""OpenCode as the fourth agent, driven through its own CLI (opencode-ai, tests/agent_clis.py).

Its sessions are written by the CLI itself (`opencode import` of the fixtures' exports, the
same rows a live session writes; tests/fixtures/opencode/README.md), then imported with the one
importer: with their agent as source, once, and found by search.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from server.core.models.memories import MemoryFilter
from server.ingest.agents import OPENCODE
from server.ingest.importer import ImportFilters, SessionImporter
from server.ingest.opencode import discover_opencode_sessions, read_opencode_session
from server.service.memory import MemoryService
from tests.opencode_sessions import EXPORTS, MAIN_SESSION, load_exports


def opencode_env(agent_clis: Path, root: Path) -> dict[str, str]:
    """OpenCode's environment, every folder it uses under `root`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "OPENCODE"))}
    env.update(
        PATH=f"{agent_clis}{os.pathsep}{env.get('PATH', '')}",
        HOME=str(root / "home"),
        XDG_DATA_HOME=str(root / "data"),
        XDG_CONFIG_HOME=str(root / "config"),
        XDG_CACHE_HOME=str(root / "cache"),
        XDG_STATE_HOME=str(root / "state"),
        OPENCODE_DISABLE_AUTOUPDATE="1",
        NO_COLOR="1",
    )
    return env


def opencode(*args: str, env: dict[str, str], cwd: Path | None = None) -> str:
    done = subprocess.run(
        ["opencode", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.fixture
def opencode_data(agent_clis: Path, tmp_path: Path) -> Path:
    """OpenCode's data folder after its own CLI imported the fixtures' sessions, run in the
    project's folder (`opencode import` files a session under the folder it runs in)."""
    env = opencode_env(agent_clis, tmp_path)
    project = tmp_path / "acme-api"
    project.mkdir()
    for export in EXPORTS:
        assert "Imported session" in opencode("import", str(export), env=env, cwd=project)
    return tmp_path / "data" / "opencode"


def test_the_database_the_cli_writes_reads_as_the_tests_write_it(
    opencode_data: Path, tmp_path: Path
) -> None:
    loaded = load_exports(tmp_path / "loaded" / "opencode.db", directory=str(tmp_path / "acme-api"))

    written = discover_opencode_sessions(opencode_data)
    assert [f.path.parent.name for f in written] == ["opencode.db"] * 2
    for found in written:
        by_cli = read_opencode_session(found.path)
        by_tests = read_opencode_session(loaded / found.path.name)
        assert by_cli.turns == by_tests.turns and by_cli.events == by_tests.events
        assert (by_cli.skipped, by_cli.prompts) == (by_tests.skipped, by_tests.prompts)
        assert found.size == by_cli.end_offset


async def test_opencode_sessions_import_once_with_their_agent_as_source(
    service: MemoryService, opencode_data: Path
) -> None:
    def importer() -> SessionImporter:
        return SessionImporter(service, ImportFilters(), agent=OPENCODE)

    first = (await importer().run(opencode_data)).as_json()
    again = (await importer().run(opencode_data)).as_json()

    assert first["errors"] == [] and first["source"] == "opencode"
    assert (first["turns_imported"], first["events"], first["prompts"]) == (6, 5, 3)
    assert first["sessions"] == 1, "the sub-agent's session belongs to its caller's"
    assert (again["turns_imported"], again["events"], again["prompts"]) == (0, 0, 0)
    turns = await service.list_memories(MemoryFilter(kind="raw"), limit=50)
    assert {(m.source, m.project, m.session_id) for m in turns.memories} == {
        ("opencode", "acme-api", MAIN_SESSION)
    }
    [session] = (await service.sessions()).sessions
    assert (session.source, session.session_id) == ("opencode", MAIN_SESSION)

    found = await service.search_hybrid("how is POST /invoices rate limited?", limit=3)
    assert {hit.source for hit in found.hits} == {"opencode"}
    assert any("per API key, 30 requests a minute" in hit.content for hit in found.hits)
