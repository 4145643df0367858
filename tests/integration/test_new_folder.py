"""What a session started in a folder gets told (#68): a new folder, a project named before
its folder was known. Through the session-start route the hook client calls, against a real
server and database.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import httpx
from fastmcp import Client

from server.recall.promote import propose
from server.service.memory import MemoryService
from tests.integration.processes import cli_env, run_cli

GENERAL = "Answer in British English and keep commit subjects under 72 characters."
OTHER_PROJECTS = {
    "acme-api": ("/home/dev/acme-api", "Use pnpm, never npm, in acme-api."),
    "billing-svc": ("/home/dev/billing-svc", "Deploy billing-svc with helm upgrade --atomic only."),
    "web-ui": ("/home/dev/web-ui", "Use Tailwind utility classes in web-ui, never CSS modules."),
}


NAMED_EARLIER = "shop-frontend renders prices with Intl.NumberFormat, never toFixed."


async def session_start(url: str, cwd: str) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=url) as http:
        answer = await http.post(
            "/api/hooks/session-start", json={"session_id": "s-new", "cwd": cwd}
        )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert isinstance(body, dict)
    return body


async def test_session_start_in_a_new_folder_shows_no_other_projects_memories(
    service: MemoryService, app_url: str
) -> None:
    ids = {}
    for project, (folder, rule) in OTHER_PROJECTS.items():
        for kind in ("preference", "distilled"):
            saved = await service.save(
                f"{rule} ({kind})", project=project, project_path=folder, kind=kind, force=True
            )
            ids[saved.id] = project
    general = (await service.save(GENERAL, kind="preference", force=True)).id

    start = await session_start(app_url, "/home/dev/shop-frontend")

    context = str(start["additionalContext"])
    assert start["project"] is None
    shown = {int(memory_id) for memory_id in re.findall(r"#(\d+)", context)}
    assert shown == {general}
    for project, (_, rule) in OTHER_PROJECTS.items():
        assert rule not in context
        assert project not in context


async def saved_by_name(url: str) -> int:
    """A memory of shop-frontend saved as an agent saves it: MCP save_memory names the project
    (its display name) and no folder."""
    async with Client(f"{url}/mcp") as client:
        result = await client.call_tool(
            "save_memory", {"content": NAMED_EARLIER, "project": "shop-frontend"}
        )
    assert isinstance(result.structured_content, dict)
    return int(result.structured_content["id"])


async def projects(url: str) -> list[dict[str, Any]]:
    async with httpx.AsyncClient(base_url=url) as http:
        listed = (await http.get("/api/projects")).json()
    return [p for p in listed if p["project"] == "shop-frontend"]


async def test_a_project_named_before_its_folder_is_that_folders_project_said_once(
    service: MemoryService, app_url: str, tmp_path: Path
) -> None:
    memory_id = await saved_by_name(app_url)
    folder = tmp_path / "work" / "shop-frontend"
    folder.mkdir(parents=True)

    first = await session_start(app_url, str(folder))
    again = await session_start(app_url, str(folder))

    assert first["project"] == again["project"] == "shop-frontend"
    assert first["claimed_folder"]["matched_by"] == "name"
    assert first["additionalContext"].startswith(f"Folder {folder} is taken to be project")
    assert "claude-memory folder" in first["additionalContext"]
    assert f"#{memory_id}" in first["additionalContext"]
    assert again["claimed_folder"] is None  # said once
    assert "taken to be" not in again["additionalContext"]
    assert f"#{memory_id}" in again["additionalContext"]
    listed = [(p["project_path"], p["count"]) for p in await projects(app_url)]
    assert listed == [(str(folder), 1)]  # once, with its folder


async def test_a_folder_whose_git_remote_names_a_project_with_no_folder_is_that_project(
    service: MemoryService, app_url: str, tmp_path: Path
) -> None:
    memory_id = await saved_by_name(app_url)
    clone = tmp_path / "checkout-2"
    clone.mkdir()
    subprocess.run(["git", "init", "-q", str(clone)], check=True)
    remote = "git@github.com:acme/shop-frontend.git"
    subprocess.run(["git", "-C", str(clone), "remote", "add", "origin", remote], check=True)

    start = await session_start(app_url, str(clone))

    assert start["project"] == "shop-frontend"
    assert start["claimed_folder"]["matched_by"] == "remote"
    assert f"#{memory_id}" in start["additionalContext"]


async def test_the_user_corrects_which_project_a_folder_is_with_the_folder_command(
    service: MemoryService, app_url: str, pg_url: str, tmp_path: Path
) -> None:
    memory_id = await saved_by_name(app_url)
    folder = tmp_path / "shop-frontend"
    folder.mkdir()
    await session_start(app_url, str(folder))

    done = run_cli("folder", str(folder), "--none", env=cli_env(pg_url, tmp_path / "home"))
    after = await session_start(app_url, str(folder))

    assert done.returncode == 0, done.stderr
    assert after["project"] is None
    assert after["claimed_folder"] is None
    assert f"#{memory_id}" not in after["additionalContext"]


async def test_promote_takes_the_folder_the_user_names_for_a_project_with_no_folder(
    service: MemoryService, tmp_path: Path
) -> None:
    await service.save(NAMED_EARLIER, project="shop-frontend", kind="preference")
    folder = tmp_path / "shop-frontend"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True)

    proposal = await propose(service, "shop-frontend", str(folder))

    assert proposal.project == "shop-frontend"
    assert Path(proposal.root) == folder.resolve()
