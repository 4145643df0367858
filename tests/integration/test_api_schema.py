"""Schemathesis against /api/openapi.json on a real server: no 5xx, no answer off its schema.

All four phases run: examples, coverage, fuzzing (up to MAX_EXAMPLES cases per operation), then
the stateful phase, which follows the document's OpenAPI links to chain real calls (create a
memory, then read, update, delete, restore and purge that id). The seed is fixed, but the run is
bounded in time: once the first pass is done, fuzzing and stateful scenarios repeat until
BUDGET_SECONDS are spent, so a slow machine does less and none runs longer. Stateful scenarios
depend on the server's state, so which links one covers varies a little from run to run; the
report is written beside the test and printed when it fails.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path

from server.adapters.openapi import openapi_document
from server.ingest.session_imports import import_session
from server.service.memory import MemoryService

CHECKS = ",".join(
    [
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_schema_conformance",
    ]
)
MAX_EXAMPLES = 100
BUDGET_SECONDS = 100
TIME_LIMIT_SECONDS = BUDGET_SECONDS + 120  # a backstop: the CLI stops itself at the budget
MIN_LINKS_COVERED = 10
SESSION = "0b7c6a52-3e8f-4d21-9a4b-5c6d7e8f9a01"


async def seed(service: MemoryService, tmp_path: Path) -> None:
    """Live, tagged and deleted memories, and one imported session, for the links to start from."""
    await service.save("This repository uses pnpm, never npm.", project="acme-api")
    await service.save("GET /orders uses keyset pagination.", tags=["api"], kind="distilled")
    deleted = await service.save("An old note about webpack.", project="acme.web_ui")
    await service.soft_delete(deleted.id)
    transcript = tmp_path / "claude" / "projects" / "-home-dev-acme-api" / f"{SESSION}.jsonl"
    transcript.parent.mkdir(parents=True)
    turns = [
        ("user", "u1", "Which package manager does this repository use?"),
        ("assistant", "a1", "It uses pnpm; running npm install here breaks the lockfile."),
    ]
    transcript.write_text(
        "".join(
            json.dumps(
                {
                    "type": role,
                    "sessionId": SESSION,
                    "cwd": "/home/dev/acme-api",
                    "uuid": uuid,
                    "timestamp": f"2026-04-14T09:00:0{index}Z",
                    "message": {"role": role, "content": text},
                }
            )
            + "\n"
            for index, (role, uuid, text) in enumerate(turns)
        )
    )
    summary = await import_session(service, transcript)
    assert summary.sessions == 1, summary


async def test_the_api_keeps_to_its_openapi_document(
    app_url: str, service: MemoryService, tmp_path: Path
) -> None:
    await seed(service, tmp_path)
    schemathesis = Path(sys.executable).with_name("st")

    process = await asyncio.create_subprocess_exec(
        str(schemathesis),
        "run",
        f"{app_url}/api/openapi.json",
        "--url",
        app_url,
        "--checks",
        CHECKS,
        "--phases",
        "examples,coverage,fuzzing,stateful",
        "--max-examples",
        str(MAX_EXAMPLES),
        "--max-time",
        str(BUDGET_SECONDS),
        "--seed",
        "20261122",
        "--workers",
        "1",
        "--request-timeout",
        "60",
        "--no-color",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        cwd=tmp_path,
        env={**os.environ, "NO_COLOR": "1"},
    )
    output, _ = await asyncio.wait_for(process.communicate(), TIME_LIMIT_SECONDS)
    report = output.decode("utf-8", "replace")

    (tmp_path / "schemathesis.txt").write_text(report)
    assert process.returncode == 0, report[-20_000:]
    assert "Failures:" not in report, report[-20_000:]
    selected = re.search(r"Selected: (\d+)/(\d+)", report)
    tested = re.search(r"Tested: (\d+)", report)
    assert selected and tested, report[-20_000:]
    # The CLI leaves out the one operation that serves the document it loaded.
    operations = sum(len(item) for item in openapi_document()["paths"].values()) - 1
    assert int(tested[1]) == int(selected[2]) == operations, report[-20_000:]
    # The stateful phase ran scenarios that followed links ("API Links: 41 covered / 76 selected").
    scenarios = re.search(r"Scenarios:\s+(\d+)", report)
    links = re.search(r"API Links:\s+(\d+) covered / (\d+) selected", report)
    assert scenarios and links, report[-20_000:]
    assert int(scenarios[1]) > 0, report[-20_000:]
    assert MIN_LINKS_COVERED <= int(links[1]) <= int(links[2]), report[-20_000:]
