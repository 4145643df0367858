"""`claude-memory import` as a real child process against the test database."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path
from urllib.parse import urlparse

import httpx

from server.service.memory import MemoryService
from tests.fixture_sessions import CLAUDE_PROJECTS, SHARED_FIXTURES
from tests.integration.processes import cli_command, cli_env, run_cli


async def run_cli_async(*args: str, env: dict[str, str]) -> tuple[int, str, str]:
    """Run the CLI without blocking the event loop that serves the test app."""
    process = await asyncio.create_subprocess_exec(
        *cli_command(*args),
        env={**os.environ, **env},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 300)
    return process.returncode or 0, out.decode(), err.decode()


async def test_import_prints_a_json_summary_and_tells_the_server(
    service: MemoryService, pg_url: str, app_url: str, tmp_path: Path
) -> None:
    projects = tmp_path / "projects"
    shutil.copytree(CLAUDE_PROJECTS, projects)
    async with httpx.AsyncClient(base_url=app_url) as client:
        before = (await client.get("/api/stats")).json()["active"]  # now cached by the server

        code, out, err = await run_cli_async(
            "import",
            "--claude-code",
            str(projects),
            "--text",
            str(SHARED_FIXTURES / "notes"),
            "--json",
            env=cli_env(pg_url, tmp_path, urlparse(app_url).port or 0),
        )

        after = (await client.get("/api/stats")).json()["active"]
    assert code == 0, err
    claude_code, notes = json.loads(out)
    assert (claude_code["source"], claude_code["turns_imported"]) == ("claude-code", 40)
    assert claude_code["turns_skipped"]["too_short"] == 3
    assert claude_code["files_found"] == 6
    assert notes["source"] == "notes"
    assert notes["turns_imported"] > 0
    assert before == 0
    assert after == 40 + notes["turns_imported"]


def test_dry_run_reports_and_writes_nothing(
    service: MemoryService, pg_url: str, tmp_path: Path
) -> None:
    projects = tmp_path / "projects"
    shutil.copytree(CLAUDE_PROJECTS, projects)

    result = run_cli(
        "import", "--claude-code", str(projects), "--dry-run", env=cli_env(pg_url, tmp_path)
    )
    again = run_cli(
        "import",
        "--claude-code",
        str(projects),
        "--json",
        "--dry-run",
        env=cli_env(pg_url, tmp_path),
    )

    assert result.returncode == 0, result.stderr
    assert "claude-code: would import 40 memories from 4 sessions" in result.stdout
    assert "too_short" in result.stdout
    assert json.loads(again.stdout)[0]["turns_imported"] == 40


def test_import_without_a_source_or_with_a_missing_folder_fails_clearly(
    service: MemoryService, pg_url: str, tmp_path: Path
) -> None:
    nothing = run_cli("import", env=cli_env(pg_url, tmp_path))
    missing = run_cli(
        "import", "--claude-code", str(tmp_path / "absent"), env=cli_env(pg_url, tmp_path)
    )

    assert nothing.returncode == 1
    assert "say what to import" in nothing.stderr
    assert missing.returncode == 1
    assert "is not a folder of Claude Code projects" in missing.stdout


def test_import_reads_claude_config_dir_by_default(
    service: MemoryService, pg_url: str, tmp_path: Path
) -> None:
    config = tmp_path / "config"
    shutil.copytree(SHARED_FIXTURES / "claude-code", config)

    result = run_cli(
        "import",
        "--claude-code",
        "--json",
        "--project",
        "acme.web_ui",
        env={**cli_env(pg_url, tmp_path), "CLAUDE_CONFIG_DIR": str(config)},
    )

    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)[0]
    assert summary["turns_imported"] == 6
    assert summary["turns_skipped"]["other_project"] > 0
