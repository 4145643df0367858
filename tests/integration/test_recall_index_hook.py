"""The prompt hook's index (#67): beneath the memories that pass the cut-off, the next candidates
one line each (date, id, author, the statement that names the prompt's words) under a heading
that says how to open one; no statement twice in the whole text; an index line the agent opens
(get_memory over MCP, reported by the PostToolUse hook of the same session) counts as used in
the receipt; a prompt nothing answers gets nothing (no candidate reaches the index's floor), and
one asked from an unrelated project gets no memory in full. Through the real hook client,
server, database, model and MCP client."""

from __future__ import annotations

import re
from typing import Any

import pytest
from fastmcp import Client

from server.core.models.receipts import ReceiptFilter
from server.domain.context import INDEX_HEADING
from server.service.memory import MemoryService
from tests.integration.acme_facts import PROJECT_PATH
from tests.integration.hook_runs import context_of, payload, run_hook

pytestmark = pytest.mark.integration

SESSION = "1ade7e57-0000-4000-8000-000000000067"
OTHER_PATH = "/home/dev/wren-fw"
ANSWER = "The staging database is restored from the nightly snapshot every Monday at 06:00 UTC."
# Worded apart from the prompt: search finds them, the cut-off does not pass them.
NEARBY = [
    "Snapshots older than fourteen days are pruned by the retention job in the ops repository.",
    "Restoring a Postgres snapshot locally needs the pg_restore from the same major version.",
    "The staging environment shares its Redis instance with the preview deployments.",
]
PROMPT = "when is the staging database restored from the nightly snapshot?"
# Two overlapping chunks of one runbook: the E_QUIET_HOURS line is in both.
QUIET = "E_QUIET_HOURS means the pager is muted between 22:00 and 07:00 for non-critical alerts."
RUNBOOK_A = (
    "# Pager runbook, part 1\nAlerts route to the on-call engineer through the pager.\n" + QUIET
)
RUNBOOK_B = QUIET + "\nCritical alerts still page during quiet hours and escalate after 15 minutes."
QUIET_PROMPT = "what does E_QUIET_HOURS mean for the pager?"
# Index lines: "- [#ID DATE, AUTHOR] STATEMENT", shorter than the hits' labels above (no kind,
# similarity, session or tool), an earlier version of a fact with "(replaced by #ID) ".
INDEX_LINE = re.compile(
    r"^- \[#(?P<id>\d+) (?P<date>\d{4}-\d{2}-\d{2}), (?P<by>by you|imported from [^\]]+)\] "
    r"(?:\(replaced by #\d+\) )?(?P<text>.+)$"
)


async def remember(
    service: MemoryService, content: str, project: str = "acme-api", path: str = PROJECT_PATH
) -> int:
    outcome = await service.save(
        content, project=project, project_path=path, kind="distilled", force=True
    )
    return outcome.id


async def answer_and_nearby(service: MemoryService) -> tuple[int, list[int]]:
    """ANSWER and the NEARBY memories saved in acme-api: their ids."""
    return await remember(service, ANSWER), [await remember(service, c) for c in NEARBY]


async def ask(app_url: str, prompt: str, cwd: str = PROJECT_PATH, session: str = SESSION) -> str:
    data = payload("UserPromptSubmit", prompt=prompt, cwd=cwd, session_id=session)
    run = await run_hook("user-prompt-submit", data, app_url)
    return context_of(run, "UserPromptSubmit") if run.stdout.strip() else ""


def split(context: str) -> tuple[str, str]:
    """The context's confident part (memories in full) and its index part."""
    at = context.find(INDEX_HEADING)
    return (context, "") if at < 0 else (context[:at], context[at:])


def index_ids(index: str) -> list[int]:
    """The ids the index lists, in its order."""
    return [int(m.group("id")) for m in map(INDEX_LINE.match, index.splitlines()) if m]


def opened(session: str, memory_id: int, tool_use_id: str, **response: Any) -> dict[str, Any]:
    """The PostToolUse payload of `session`'s agent opening `memory_id` over MCP. Claude Code
    sends MCP servers no session id: this hook of the session ties the call to it."""
    return payload(
        "PostToolUse",
        session_id=session,
        tool_name="mcp__claude-memory__get_memory",
        tool_input={"memory_id": memory_id},
        tool_use_id=tool_use_id,
        **response,
    )


def full_lines(part: str) -> list[str]:
    """The lines of memories shown in full: labelled "[kind #id, …]"."""
    return [line for line in part.splitlines() if re.match(r"- \S+ \[[a-z]+ #\d+,", line)]


async def test_the_index_lists_the_next_candidates_beneath_the_hits_with_date_id_and_author(
    app_url: str, service: MemoryService
) -> None:
    answer, nearby = await answer_and_nearby(service)

    confident, index = split(await ask(app_url, PROMPT))

    assert any(f"#{answer}," in line and ANSWER in line for line in full_lines(confident))
    # The plugin's subagent, which the agent can call: `/memories:recall` is the user's command.
    assert "get_memory" in index and "recall agent (memories:recall in Claude Code" in index
    assert "/memories:recall" not in index
    assert "claude-memory-recall" in index
    listed = [INDEX_LINE.match(line) for line in index.splitlines() if line.startswith("- ")]
    assert listed and all(listed)
    ids = [int(match.group("id")) for match in listed if match]
    assert set(ids) <= set(nearby) and answer not in ids
    for match in listed:
        assert match is not None
        memory = await service.get(int(match.group("id")))
        assert match.group("date") == memory.created_at.date().isoformat()
        assert match.group("by") == "by you"
        assert match.group("text") in " ".join(memory.content.split())
    receipts = await service.receipts(ReceiptFilter(session_id=SESSION))
    assert receipts.receipts[0].memory_ids == [answer]
    assert receipts.receipts[0].listed_ids == ids


async def test_a_statement_two_overlapping_memories_share_is_shown_once(
    app_url: str, service: MemoryService
) -> None:
    first = await remember(service, RUNBOOK_A)
    second = await remember(service, RUNBOOK_B)

    context = await ask(app_url, QUIET_PROMPT)

    assert " ".join(context.split()).count(QUIET) == 1
    # The second chunk still brings what only it says, in full or as an index line.
    assert "escalate after 15 minutes" in context
    assert f"#{first}," in context and f"#{second}," in context


async def get_memory(app_url: str, memory_id: int) -> dict[str, Any]:
    async with Client(f"{app_url}/mcp") as client:
        result = await client.call_tool("get_memory", {"memory_id": memory_id})
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def test_an_index_line_the_agent_opens_counts_as_used_in_the_receipt(
    app_url: str, service: MemoryService
) -> None:
    await answer_and_nearby(service)
    _, index = split(await ask(app_url, PROMPT))
    listed = index_ids(index)
    first, unopened = listed[0], listed[1:]

    fetched = await get_memory(app_url, first)
    text = [{"type": "text", "text": fetched["content"]}]
    call = opened(SESSION, first, "toolu_open_index_line", tool_response=text)
    run = await run_hook("post-tool-use", call, app_url)

    assert (run.returncode, run.stdout) == (0, "")
    page = await service.receipts(ReceiptFilter(session_id=SESSION))
    verdicts = {(use.memory_id, use.verdict) for use in page.uses}
    assert (first, "used") in verdicts
    assert not any(memory_id in unopened for memory_id, _ in verdicts)
    assert page.uses[0].receipt_id == page.receipts[0].id
    assert "opened from the index" in page.uses[0].evidence


async def test_an_index_line_opened_in_another_session_counts_nowhere(
    app_url: str, service: MemoryService
) -> None:
    await answer_and_nearby(service)
    _, index = split(await ask(app_url, PROMPT))
    first = index_ids(index)[0]

    await run_hook(
        "post-tool-use", opened("another-session", first, "toolu_open_elsewhere"), app_url
    )

    page = await service.receipts(ReceiptFilter(session_id=SESSION))
    assert page.uses == []


async def test_a_prompt_nothing_answers_gets_no_memory_in_full_and_no_index_line(
    app_url: str, service: MemoryService
) -> None:
    await answer_and_nearby(service)

    context = await ask(
        app_url, "which font does the marketing site use for its headings on staging?"
    )

    # Search finds the memories that say "staging" (listed before the floor, #67 part 2);
    # none is close enough in meaning or holds enough of the prompt's words to be listed.
    assert context == ""


async def test_a_prompt_asked_from_an_unrelated_project_gets_no_memory_in_full(
    app_url: str, service: MemoryService
) -> None:
    await answer_and_nearby(service)
    await remember(
        service, "The thermostat firmware flashes over USB-C with dfu-util.", "wren-fw", OTHER_PATH
    )

    context = await ask(app_url, PROMPT, cwd=OTHER_PATH, session="from-wren-fw")

    confident, index = split(context)
    assert full_lines(confident) == []
    assert ANSWER not in context
    assert "staging" not in index.lower()
