"""What a session started in a folder gets told (#68): a new folder, a project named before
its folder was known. Through the session-start route the hook client calls, against a real
server and database.
"""

from __future__ import annotations

import re

import httpx

from server.service.memory import MemoryService

GENERAL = "Answer in British English and keep commit subjects under 72 characters."
OTHER_PROJECTS = {
    "acme-api": ("/home/dev/acme-api", "Use pnpm, never npm, in acme-api."),
    "billing-svc": ("/home/dev/billing-svc", "Deploy billing-svc with helm upgrade --atomic only."),
    "web-ui": ("/home/dev/web-ui", "Use Tailwind utility classes in web-ui, never CSS modules."),
}


async def session_start(url: str, cwd: str) -> dict[str, object]:
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
