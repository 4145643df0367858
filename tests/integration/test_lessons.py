"""Lessons: written over REST and MCP, and answered by the real PreToolUse hook command.

Hook tests run the command `install-hooks` registers, through the shell, with Claude Code's
PreToolUse JSON on stdin (shared/fixtures/hooks/PreToolUse.json: a Bash call in acme-api),
against a live server, and check what Claude Code would read on stdout.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
from fastmcp import Client

from server.core.models.lessons import LessonChange, LessonDraft
from server.service.memory import MemoryService
from tests.integration.acme_facts import FORCE_PUSH, PROJECT_PATH, STAGING, remember
from tests.integration.hook_runs import payload, run_hook


def bash(command: str) -> dict[str, Any]:
    return payload("PreToolUse", tool_input={"command": command, "description": "run it"})


def decision(stdout: str) -> dict[str, Any]:
    output = json.loads(stdout)
    assert set(output) == {"hookSpecificOutput"}
    specific: dict[str, Any] = output["hookSpecificOutput"]
    assert specific["hookEventName"] == "PreToolUse"
    return specific


async def test_a_lesson_warns_before_a_matching_call_and_is_silent_for_others(
    app_url: str, service: MemoryService
) -> None:
    lesson = await service.add_lesson(STAGING)

    warned = await run_hook("pre-tool-use", bash("k6 run load.js --env staging"), app_url)
    quiet = await run_hook("pre-tool-use", bash("pnpm test"), app_url)
    other_tool = payload("PreToolUse", tool_name="Read", tool_input={"file_path": "/staging.md"})
    read = await run_hook("pre-tool-use", other_tool, app_url)

    said = decision(warned.stdout)
    assert STAGING.message in said["additionalContext"]
    assert f"lesson #{lesson.id}" in said["additionalContext"]
    assert "permissionDecision" not in said
    assert (quiet.returncode, quiet.stdout, read.returncode, read.stdout) == (0, "", 0, "")


async def test_a_strict_lesson_makes_claude_code_ask_first(
    app_url: str, service: MemoryService
) -> None:
    lesson = await service.add_lesson(FORCE_PUSH)

    run = await run_hook("pre-tool-use", bash("git push origin main --force"), app_url)

    said = decision(run.stdout)
    assert said["permissionDecision"] == "ask"
    # labelled, so the user sees which lesson and whose stops the call
    assert said["permissionDecisionReason"] == f"[lesson #{lesson.id}, by you] {FORCE_PUSH.message}"


async def test_disabled_and_other_project_lessons_stay_silent(
    app_url: str, service: MemoryService
) -> None:
    await remember(service, "acme-api uses pnpm.")  # makes acme-api a known project
    disabled = await service.add_lesson(STAGING)
    await service.update_lesson(disabled.id, LessonChange(active=False))
    elsewhere = LessonDraft(pattern="staging", message="Only for acme-web.", project="acme-web")
    await service.add_lesson(elsewhere)
    mine = LessonDraft(
        pattern="staging", message="acme-api: staging is shared.", project="acme-api"
    )
    await service.add_lesson(mine)

    run = await run_hook("pre-tool-use", bash("curl https://staging.acme.dev/health"), app_url)

    context = decision(run.stdout)["additionalContext"]
    assert mine.message in context
    assert STAGING.message not in context and elsewhere.message not in context
    assert payload("PreToolUse")["cwd"] == PROJECT_PATH


async def test_rest_adds_lists_edits_disables_and_refuses_bad_lessons(app_url: str) -> None:
    async with httpx.AsyncClient(base_url=app_url) as http:
        created = await http.post(
            "/api/lessons",
            json={"pattern": "staging", "message": "Use the local stack.", "tool": "Bash"},
        )
        lesson = created.json()
        edited = await http.patch(f"/api/lessons/{lesson['id']}", json={"strictness": "ask"})
        disabled = await http.patch(f"/api/lessons/{lesson['id']}", json={"active": False})
        active = (await http.get("/api/lessons", params={"include_inactive": "false"})).json()
        every = (await http.get("/api/lessons")).json()
        bad = await http.post("/api/lessons", json={"pattern": "(", "message": "x"})
        missing = await http.patch("/api/lessons/999999", json={"active": False})

    assert created.status_code == 201
    assert (lesson["origin"], lesson["active"], lesson["strictness"]) == ("user", True, "warn")
    assert edited.json()["strictness"] == "ask"
    assert disabled.json()["active"] is False
    assert active["lessons"] == []
    assert [item["id"] for item in every["lessons"]] == [lesson["id"]]
    assert bad.status_code == 400
    assert "pattern is not a valid regular expression" in bad.json()["error"]["message"]
    assert missing.status_code == 404


async def test_an_agent_adds_and_disables_a_lesson_over_mcp(app_url: str) -> None:
    async with Client(f"{app_url}/mcp") as mcp:
        added = await mcp.call_tool(
            "save_lesson",
            {"pattern": "staging", "message": "Use the local stack.", "tool": "Bash"},
        )
        lesson: dict[str, Any] = added.structured_content or {}
        await mcp.call_tool("save_lesson", {"lesson_id": lesson["id"], "active": False})
        listed = await mcp.call_tool("list_lessons", {})

    assert lesson["origin"] == "agent"
    lessons = (listed.structured_content or {})["lessons"]
    assert [(item["id"], item["active"]) for item in lessons] == [(lesson["id"], False)]
