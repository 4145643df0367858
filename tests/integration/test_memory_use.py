"""Whether the agent used what the hooks injected (issue #38): a session replayed through the
hook routes, then its transcript imported, leaves a verdict per injected memory: used when the
agent's calls or words name the memory's distinctive terms, unused when they do not,
contradicted when it was used and the user corrected the agent next. Prompt recall learns
from the verdicts: a memory injected again and again and never used sinks below one that was
used; with RECALL_LEARNS_FROM_USE off it does not."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from server.app import create_app
from server.cli.stats import report_lines
from server.core.access import acting_as
from server.core.config import Settings
from server.core.models.receipts import Injection
from server.ingest.importer import ImportFilters, SessionImporter
from server.service.memory import MemoryService
from tests.db_fixtures import serving
from tests.transcripts import SessionWriter

CWD = "/home/dev/acme-api"
FOLDER = "-home-dev-acme-api"
PNPM = "The acme-api project uses pnpm, never npm: the lockfile is pnpm-lock.yaml."
ORDERS = "Orders are paginated with an opaque cursor, fifty per page, in acme-api."
LIMITS = "POST /invoices is rate limited per API key; anonymous calls share one IP bucket."
CI = "acme-api's CI workflow lives in .github/workflows/ci.yml and runs on every push."


async def save(service: MemoryService, *facts: str) -> list[int]:
    ids = []
    for fact in facts:
        saved = await service.save(fact, project="acme-api", project_path=CWD, kind="distilled")
        ids.append(saved.id)
    return ids


async def ask(http: httpx.AsyncClient, writer: SessionWriter, prompt: str) -> list[int]:
    """The user types `prompt`: the transcript records it and the prompt hook answers."""
    writer.prompt(prompt)
    answer = await http.post(
        "/api/hooks/prompt",
        json={
            "session_id": writer.session_id,
            "cwd": CWD,
            "prompt": prompt,
            "prompt_id": writer.prompt_id,
        },
    )
    assert answer.status_code == 200, answer.text
    return list(answer.json()["memory_ids"])


async def imported(service: MemoryService, writer: SessionWriter, projects: Path) -> None:
    writer.write(projects, FOLDER)
    summary = await SessionImporter(service, ImportFilters()).run(projects)
    assert not summary.errors, summary.errors


def verdicts(page: dict[str, Any]) -> dict[tuple[str, int], dict[str, Any]]:
    """(prompt id, or the hook for session start) and memory id -> verdict and evidence."""
    keys = {r["id"]: r["prompt_id"] or r["hook"] for r in page["receipts"]}
    return {(keys[u["receipt_id"]], u["memory_id"]): u for u in page["uses"]}


# For each fact: a question that recalls it, what the agent says when it follows it, and the
# user's correction of that.
FOLLOW_UP = {
    ORDERS: (
        "how do we page through orders in the API?",
        "Orders come back fifty at a time with an opaque cursor to the next page.",
        "No, that's wrong: orders use offset pagination since last week.",
    ),
    LIMITS: (
        "how is POST /invoices rate limited?",
        "Each API key gets its own limit; anonymous callers share one IP bucket.",
        "No, that's wrong: anonymous callers are blocked outright since last week.",
    ),
}


async def test_an_imported_session_marks_each_injected_memory_used_unused_or_contradicted(
    service: MemoryService, settings: Settings, tmp_path: Path
) -> None:
    [ci] = await save(service, CI)  # before the session: its start context shows it
    wide = replace(settings, recall_threshold=0.05, recall_max_hits=2)
    writer = SessionWriter("s-use", CWD, start=datetime.now(UTC))
    async with serving(create_app(wide, service)) as url, httpx.AsyncClient(base_url=url) as http:
        hook = {"session_id": "s-use", "cwd": CWD}
        start = (await http.post("/api/hooks/session-start", json=hook)).json()
        saved = await save(service, PNPM, ORDERS, LIMITS)
        ids = dict(zip((PNPM, ORDERS, LIMITS), saved, strict=True))
        pnpm = ids[PNPM]
        first = await ask(http, writer, "which package manager and lockfile do we keep?")
        asked_first = writer.prompt_id
        writer.call("t1", "Bash", {"command": "pnpm install --frozen-lockfile"}, message_id="m1")
        writer.result("t1", "Lockfile is up to date, resolution step is skipped")
        writer.say("Installed; pnpm-lock.yaml did not change.")
        writer.call("t2", "Read", {"file_path": f"{CWD}/.github/workflows/ci.yml"}, message_id="m2")
        writer.result("t2", "on: push")
        ignored = next(i for i in first if i != pnpm)
        fact = next(f for f in FOLLOW_UP if ids[f] not in first)  # not yet shown this session
        question, reply, correction = FOLLOW_UP[fact]
        second = await ask(http, writer, question)
        asked_second = writer.prompt_id
        writer.say(reply)
        writer.prompt(correction)
        await imported(service, writer, tmp_path / "projects")
        page = (await http.get("/api/receipts", params={"session_id": "s-use"})).json()
        report = (await http.get("/api/context", params={"project": "acme-api"})).json()

    assert pnpm in first and len(first) == 2, first
    assert ids[fact] in second, f"the follow-up fact was injected: {second}"
    judged = verdicts(page)
    used = judged[(asked_first, pnpm)]
    assert used["verdict"] == "used", used
    assert used["evidence"] == "pnpm-lock.yaml in its reply; pnpm in Bash call"
    assert judged[(asked_first, ignored)] | {"receipt_id": 0} == {
        "receipt_id": 0,
        "memory_id": ignored,
        "at": judged[(asked_first, ignored)]["at"],
        "verdict": "unused",
        "evidence": "",
    }
    corrected = judged[(asked_second, ids[fact])]
    assert corrected["verdict"] == "contradicted", corrected
    assert "its reply" in corrected["evidence"] and correction in corrected["evidence"]
    [at_start] = [r for r in page["receipts"] if r["hook"] == "session_start"]
    assert at_start["memory_ids"] == [ci] and f"#{ci}" in start["additionalContext"]
    assert ci not in first + second, "what the session was given at start is not repeated"
    assert judged[("session_start", ci)]["verdict"] == "used"
    assert judged[("session_start", ci)]["evidence"] == ".github/workflows/ci.yml in Read call"

    counted = [u["verdict"] for u in page["uses"]]
    assert report["totals"] | {"chars": 0, "tokens": 0} == {
        "injections": 3,
        "memories": sum(len(r["memory_ids"]) for r in page["receipts"]),
        "chars": 0,
        "tokens": 0,
        "judged": len(counted),
        "used": counted.count("used"),
        "contradicted": 1,
    }
    [day] = report["days"]
    assert (day["project"], day["judged"], day["used"]) == (
        "acme-api",
        len(counted),
        counted.count("used"),
    )
    assert ignored in [m["id"] for m in report["never_used"]]
    assert pnpm not in [m["id"] for m in report["never_used"]]
    assert pnpm in [m["id"] for m in report["most_used"]]
    assert [(m["id"], m["count"]) for m in report["contradicted"]] == [(ids[fact], 1)]
    text = "\n".join(report_lines(await service.context_report("acme-api")))
    assert f"never used (retire or edit them):\n  #{ignored} " in text
    assert f"used, then the user corrected the agent (review them):\n  #{ids[fact]} 1 of" in text


async def test_a_later_read_of_the_same_turn_can_raise_a_verdict_but_not_lower_it(
    service: MemoryService, settings: Settings, tmp_path: Path
) -> None:
    [pnpm] = await save(service, PNPM)
    wide = replace(settings, recall_threshold=0.05)
    writer = SessionWriter("s-later", CWD, start=datetime.now(UTC))
    async with serving(create_app(wide, service)) as url, httpx.AsyncClient(base_url=url) as http:
        shown = await ask(http, writer, "what should I run to install the dependencies?")
        writer.say("Let me look at the repository first.")
        await imported(service, writer, tmp_path / "projects")
        page = await http.get("/api/receipts", params={"session_id": "s-later"})
        before = verdicts(page.json())
        command = "pnpm install && git diff --stat pnpm-lock.yaml"
        writer.call("t1", "Bash", {"command": command}, message_id="m2")
        writer.result("t1", "done")
        await imported(service, writer, tmp_path / "projects")
        after = verdicts((await http.get("/api/receipts", params={"session_id": "s-later"})).json())

    assert shown == [pnpm]
    key = (writer.prompt_id, pnpm)
    assert before[key]["verdict"] == "unused", "nothing of it was used in the first read"
    assert after[key]["verdict"] == "used", "the call read later raised it"
    assert after[key]["evidence"] == "pnpm-lock.yaml, pnpm in Bash call"


MIGRATE = "To apply the database migrations of acme-api, run scripts/migrate.sh from the root."
GOOSE = "The database migrations of acme-api live in db/migrate/ and are applied with goose up."
QUESTION = "how do we apply the database migrations?"


async def replay_round(
    http: httpx.AsyncClient, service: MemoryService, projects: Path, number: int, follows: str
) -> list[int]:
    """One session: the question, recall's answer, and the agent doing what `follows` says."""
    writer = SessionWriter(f"s-learn-{number}", CWD, start=datetime.now(UTC))
    shown = await ask(http, writer, QUESTION)
    writer.call(f"t{number}", "Bash", {"command": follows}, message_id=f"m{number}")
    writer.result(f"t{number}", "ok")
    await imported(service, writer, projects)
    return shown


async def test_a_memory_injected_and_never_used_sinks_below_one_that_was_used(
    service: MemoryService, settings: Settings, tmp_path: Path
) -> None:
    ids = await save(service, MIGRATE, GOOSE)
    wide = replace(settings, recall_threshold=0.05, recall_max_hits=2)
    command = {ids[0]: "./scripts/migrate.sh", ids[1]: "goose -dir db/migrate up"}
    async with serving(create_app(wide, service)) as url, httpx.AsyncClient(base_url=url) as http:
        first = await replay_round(http, service, tmp_path / "p", 0, "ls")
        assert sorted(first) == sorted(ids), first
        ignored, followed = first
        orders = [first]
        for number in range(1, 6):  # the agent always does what the second memory says
            orders.append(
                await replay_round(http, service, tmp_path / "p", number, command[followed])
            )
        page = (await http.get("/api/receipts", params={"limit": 100})).json()
    off = MemoryService(
        service.pool, service.embedder, replace(service.settings, recall_learns_from_use=False)
    )
    unlearned = (await off.search_hybrid(QUESTION, limit=2)).hits

    judged = [u for u in page["uses"] if u["memory_id"] == ignored]
    assert judged and all(u["verdict"] == "unused" for u in judged)
    assert orders[1] == [ignored, followed], "one round is not enough to move it"
    assert orders[-1] == [followed, ignored], f"it sank below the used one: {orders}"
    assert [hit.id for hit in unlearned] == [ignored, followed], "search itself is unchanged"
    factors = (await service.recall_evidence(QUESTION, ids)).use_factors
    assert factors[ignored] < 1.0 < factors[followed]
    assert (await off.recall_evidence(QUESTION, ids)).use_factors == {}, (
        "switched off, recall learns nothing"
    )


INSTALL = "what should I run to install the dependencies?"


async def test_an_import_for_nobody_judges_a_user_s_receipts_as_theirs(
    service: MemoryService, tmp_path: Path
) -> None:
    # The hourly import acts for nobody; the verdicts must still be the receipt's owner's,
    # or their prompt recall would never learn from them.
    [pnpm] = await save(service, PNPM)
    alice, _ = await service.users.add("alice")
    bob, _ = await service.users.add("bob")
    writer = SessionWriter("s-alice", CWD, start=datetime.now(UTC))
    writer.prompt(INSTALL)
    with acting_as(service.users.viewer(alice.user)):
        await service.record_injection(
            Injection("prompt", "s-alice", "acme-api", 80, [pnpm], prompt_id=writer.prompt_id)
        )
    writer.call("t1", "Bash", {"command": "git diff pnpm-lock.yaml"}, message_id="m1")
    writer.result("t1", "no changes")

    await imported(service, writer, tmp_path / "projects")  # acting for nobody

    with acting_as(service.users.viewer(alice.user)):
        mine = (await service.recall_evidence(INSTALL, [pnpm])).use_factors
        [verdict] = (await service.receipts()).uses
    with acting_as(service.users.viewer(bob.user)):
        theirs = (await service.recall_evidence(INSTALL, [pnpm])).use_factors
        assert (await service.receipts()).uses == []
    assert verdict.verdict == "used"
    assert mine[pnpm] > 1.0 and theirs == {}, "alice's recall learns from it, bob's does not"
