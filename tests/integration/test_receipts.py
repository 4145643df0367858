"""Receipts of what the hooks inject (issue #38, first step): a session replayed through the
hook routes leaves one receipt per injection, with the memories (or lessons) in the order the
text shows them, its characters and estimated tokens, and for prompt recall each memory's
similarity and the cut-off; nothing injected leaves nothing; a user's receipts are their own
(tests/integration/test_team_scopes.py); RECEIPTS_RETENTION_DAYS bounds them, 0 keeps none."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from server.app import create_app
from server.core.config import Settings
from server.core.models.journal import JournalFilter, JournalPrompt
from server.core.models.lessons import LessonDraft
from server.core.models.receipts import Injection, ReceiptFilter, estimated_tokens
from server.service.memory import MemoryService
from server.store import receipts as receipt_store
from server.store.tx import transaction
from tests.db_fixtures import serving
from tests.integration.processes import run_cli

CWD = "/home/dev/acme-api"
FACTS = (
    "The acme-api project uses pnpm, never npm: the lockfile is pnpm-lock.yaml.",
    "Orders are paginated with an opaque cursor, fifty per page, in acme-api.",
    "POST /invoices is rate limited per API key; anonymous calls share one IP bucket.",
)
SESSION = "s-receipts"
# Saved before the session starts, so its start context shows this and not the facts (saved
# after it): what a session was given at start, prompt recall does not give it again.
EARLIER = "acme-api's CI workflow lives in .github/workflows/ci.yml and runs on every push."


async def stored_facts(service: MemoryService) -> list[int]:
    ids = []
    for fact in FACTS:
        saved = await service.save(fact, project="acme-api", project_path=CWD, kind="distilled")
        ids.append(saved.id)
    return ids


async def receipts_of(url: str, session: str, count: int) -> dict[str, Any]:
    """The session's receipts once `count` are there (they are written after each answer)."""
    async with httpx.AsyncClient(base_url=url) as http:
        for _ in range(300):
            page = (await http.get("/api/receipts", params={"session_id": session})).json()
            if len(page["receipts"]) >= count:
                return dict(page)
            await asyncio.sleep(0.05)
    raise AssertionError(f"fewer than {count} receipts for {session}: {page}")


def ids_in(markdown: str) -> list[int]:
    return [int(i) for i in re.findall(r"^- (?:\S+ )?\[[a-z]+ #(\d+)", markdown, re.M)]


async def test_a_replayed_session_leaves_one_receipt_per_injection(
    service: MemoryService, settings: Settings
) -> None:
    await service.save(EARLIER, project="acme-api", project_path=CWD, kind="distilled")
    await service.add_lesson(LessonDraft(pattern="npm install", message="Use pnpm here."))
    wide = replace(settings, recall_threshold=0.05, recall_max_hits=2)
    async with serving(create_app(wide, service)) as url, httpx.AsyncClient(base_url=url) as http:
        hook = {"session_id": SESSION, "cwd": CWD}
        start = (await http.post("/api/hooks/session-start", json=hook)).json()
        await stored_facts(service)
        first = (
            await http.post(
                "/api/hooks/prompt",
                json={**hook, "prompt": "which package manager and lockfile?", "prompt_id": "p1"},
            )
        ).json()
        second = (
            await http.post(
                "/api/hooks/prompt",
                json={**hook, "prompt": "how are orders paginated?", "prompt_id": "p2"},
            )
        ).json()
        call = {**hook, "tool_name": "Bash", "tool_input": {"command": "npm install left-pad"}}
        lessons = (await http.post("/api/hooks/pre-tool", json=call)).json()
        silent = (
            await http.post("/api/hooks/prompt", json={**hook, "prompt": "ok", "prompt_id": "p3"})
        ).json()
        page = await receipts_of(url, SESSION, 4)

    assert silent["additionalContext"] == ""
    newest_first = page["receipts"]
    assert [r["hook"] for r in newest_first] == ["lessons", "prompt", "prompt", "session_start"]
    told = {
        "session_start": start["additionalContext"],
        "p1": first["additionalContext"],
        "p2": second["additionalContext"],
        "lessons": lessons["additionalContext"],
    }
    by_key = {r["prompt_id"] or r["hook"]: r for r in newest_first}
    assert set(by_key) == set(told)
    for key, text in told.items():
        receipt = by_key[key]
        assert receipt["chars"] == len(text) > 0
        assert receipt["tokens"] == estimated_tokens(len(text))
        assert receipt["session_id"] == SESSION and receipt["project"] == "acme-api"
    assert by_key["session_start"]["memory_ids"] == ids_in(start["additionalContext"]) != []
    for key, answer in (("p1", first), ("p2", second)):
        receipt = by_key[key]
        assert receipt["memory_ids"] == answer["memory_ids"] == ids_in(answer["additionalContext"])
        assert len(receipt["scores"]) == len(receipt["memory_ids"])
        assert all(score >= receipt["cutoff"] for score in receipt["scores"])
        assert receipt["cutoff"] == 0.05
    assert by_key["lessons"]["lesson_ids"] == lessons["lesson_ids"] != []
    assert by_key["lessons"]["memory_ids"] == []
    assert page["totals"] == {
        "injections": 4,
        "memories": sum(len(r["memory_ids"]) for r in newest_first),
        "chars": sum(len(text) for text in told.values()),
        "tokens": sum(r["tokens"] for r in newest_first),
        "judged": 0,  # the session was not imported
        "used": 0,
        "contradicted": 0,
    }
    assert page["uses"] == []


async def test_receipts_filter_by_hook_and_project(
    service: MemoryService, settings: Settings
) -> None:
    # A project filter names a known project (server/service/projects.py): a hook's receipt
    # names the project its folder resolved to, so one with memories.
    await service.save("The API answers in JSON.", project="acme-api", force=True)
    for hook, project in (("prompt", "acme-api"), ("prompt", "other"), ("lessons", "acme-api")):
        await service.record_injection(Injection(hook, "s-filter", project, 40, memory_ids=[1]))

    prompts = await service.receipts(ReceiptFilter(hook="prompt"))
    acme = await service.receipts(ReceiptFilter(project="acme-api"))

    assert [r.project for r in prompts.receipts] == ["other", "acme-api"]
    assert {r.hook for r in acme.receipts} == {"prompt", "lessons"}
    assert acme.totals.tokens == 20 and acme.totals.memories == 2
    stats = await service.stats()
    assert (stats.context.injections, stats.context.tokens) == (3, 30), "get_stats carries them"


async def test_no_receipts_are_kept_at_zero_days_and_old_ones_are_pruned(
    service: MemoryService,
) -> None:
    injection = Injection("prompt", "s-old", "acme-api", 400, memory_ids=[1, 2])
    async with transaction(service.pool) as conn:
        await receipt_store.insert(conn, injection, datetime.now(UTC) - timedelta(days=91))
    off = MemoryService(
        service.pool, service.embedder, replace(service.settings, receipts_retention_days=0)
    )

    assert await off.record_injection(injection) is False
    assert (await service.receipts()).totals.injections == 1
    assert await service.record_injection(replace(injection, session_id="s-new")) is True

    remaining = await service.receipts()
    assert [r.session_id for r in remaining.receipts] == ["s-new"], "the 91-day-old one is gone"


async def test_a_receipt_the_database_refuses_leaves_the_prompt_journaled(
    service: MemoryService, caplog: pytest.LogCaptureFixture
) -> None:
    """A prompt's receipt and its journal entry are written in one transaction, the receipt in
    a savepoint: a receipt the database refuses (its character count past the column's integer
    range) is logged and undone alone, the prompt still kept."""
    session = "s-refused-receipt"
    refused = Injection("prompt", session, "acme-api", 2**31, memory_ids=[1])
    prompt = JournalPrompt(session, "p-1", "why is staging slow?", datetime.now(UTC), "acme-api")

    with caplog.at_level(logging.ERROR, logger="server.store.tx"):
        await service.record_prompt_turn(refused, prompt)

    journal = await service.journal(JournalFilter(session_id=session))
    assert [(entry.prompt, entry.project) for entry in journal.entries] == [
        ("why is staging slow?", "acme-api")
    ]
    assert (await service.receipts(ReceiptFilter(session_id=session))).receipts == []
    assert "could not record a receipt of session s-refused-receipt" in caplog.text
    assert "out of range" in caplog.text, "the database's own refusal"


async def test_a_session_whose_receipts_cannot_be_read_has_spent_nothing(
    service: MemoryService,
) -> None:
    """The budget read never costs the user their context: prompt recall and the other hooks
    all take it from `injected_tokens`, which answers 0 (logged) when the read fails."""
    await service.record_injection(Injection("prompt", SESSION, "acme-api", 4_000))

    assert await service.injected_tokens(SESSION) == estimated_tokens(4_000)
    assert await service.injected_tokens("") == 0
    assert await service.injected_tokens("s-\x00") == 0, "a session id the database refuses"


async def test_the_hooks_keep_a_session_within_its_token_budget(
    service: MemoryService, settings: Settings
) -> None:
    await service.save(EARLIER, project="acme-api", project_path=CWD, kind="distilled")
    await service.add_lesson(LessonDraft(pattern="npm install", message="Use pnpm here."))
    tight = replace(
        settings,
        recall_threshold=0.05,
        recall_max_hits=3,
        context_start_tokens=200,
        context_prompt_tokens=150,
        context_session_tokens=500,
    )
    prompts = [
        "which package manager do we use?",
        "how are orders paginated?",
        "how is POST /invoices rate limited?",
        "what lockfile does acme-api keep?",
        "remind me about pagination and rate limits",
    ]
    given: list[str] = []
    async with serving(create_app(tight, service)) as url, httpx.AsyncClient(base_url=url) as http:
        hook = {"session_id": "s-budget", "cwd": CWD}
        start = await http.post("/api/hooks/session-start", json=hook)
        given.append(start.json()["additionalContext"])
        await stored_facts(service)
        for number, prompt in enumerate(prompts):
            answer = await http.post(
                "/api/hooks/prompt", json={**hook, "prompt": prompt, "prompt_id": f"b{number}"}
            )
            given.append(answer.json()["additionalContext"])
        call = {**hook, "tool_name": "Bash", "tool_input": {"command": "npm install"}}
        lessons = await http.post("/api/hooks/pre-tool", json=call)
        given.append(lessons.json()["additionalContext"])
        page = (await http.get("/api/receipts", params={"session_id": "s-budget"})).json()

    tokens = [estimated_tokens(len(text)) for text in given]
    assert 0 < tokens[0] <= 200, "the start context keeps to its own budget"
    assert all(t <= 150 for t in tokens[1:-1]), "each prompt keeps to its own"
    assert tokens[1] > 0 and tokens[2] > 0, f"prompts were given memories: {tokens}"
    assert sum(tokens) <= 500, f"the session keeps to its budget: {tokens}"
    assert given[-2] == "", "the budget was spent before the last prompt"
    assert page["totals"]["tokens"] == sum(tokens), "every injection has its receipt"
    assert page["totals"]["injections"] == sum(1 for text in given if text)


async def test_stats_context_reports_per_day_and_project_and_the_most_injected(
    service: MemoryService, pg_url: str, tmp_path: Path
) -> None:
    ids = await stored_facts(service)
    for memory_ids, project in (([ids[0], ids[1]], "acme-api"), ([ids[0]], "acme-api")):
        await service.record_injection(
            Injection("prompt", "s-report", project, 400, memory_ids=memory_ids)
        )
    await service.record_injection(Injection("session_start", "s-web", "acme-web", 80))
    env = {
        "CLAUDE_MEMORY_DATABASE_URL": pg_url,
        "CLAUDE_MEMORY_HOME": str(tmp_path),
        "CLAUDE_MEMORY_LOG_LEVEL": "WARNING",
    }

    report = run_cli("stats", "--context", env=env)
    plain = run_cli("stats", "--context", "--project", "acme-api", "--plain", env=env)

    assert report.returncode == 0, report.stderr
    data = json.loads(report.stdout)
    assert data["totals"] == {
        "injections": 3,
        "memories": 3,
        "chars": 880,
        "tokens": 220,
        "judged": 0,
        "used": 0,
        "contradicted": 0,
    }
    today = datetime.now(UTC).date().isoformat()
    assert {(d["day"], d["project"], d["injections"], d["tokens"]) for d in data["days"]} == {
        (today, "acme-api", 2, 200),
        (today, "acme-web", 1, 20),
    }
    assert [(m["id"], m["injections"]) for m in data["most_injected"]] == [(ids[0], 2), (ids[1], 1)]
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout.startswith("Injected since ")
    assert "in acme-api: 2 injections" in plain.stdout
    assert f"#{ids[0]} x2: {FACTS[0][:40]}" in plain.stdout
    assert "acme-web" not in plain.stdout
