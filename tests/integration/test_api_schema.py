"""Schemathesis against /api/openapi.json on a real server: no 5xx, no answer off its schema.

The run is bounded (examples per operation and a fixed seed) so it does the same work on every
machine, with a time limit as a backstop; its report is printed when it fails.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

from server.memory import MemoryService
from server.openapi import openapi_document

CHECKS = ",".join(
    [
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_schema_conformance",
    ]
)
MAX_EXAMPLES = 60
TIME_LIMIT_SECONDS = 600


async def test_the_api_keeps_to_its_openapi_document(
    app_url: str, service: MemoryService, tmp_path: Path
) -> None:
    await service.save("This repository uses pnpm, never npm.", project="acme-api")
    await service.save("GET /orders uses keyset pagination.", tags=["api"], kind="distilled")
    deleted = await service.save("An old note about webpack.", project="acme.web_ui")
    await service.soft_delete(deleted.id)
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
        "examples,coverage,fuzzing",
        "--max-examples",
        str(MAX_EXAMPLES),
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
