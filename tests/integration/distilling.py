"""Distilling against the scripted OpenAI-compatible server (tests/llm_stub.py), the way the
distill tests and the users tests both run it.

lessons_for    the stub's answer to a distill request: it reads the transcript it is sent
               (turn numbers and text), the way a model would, and reports LESSONS' entries
               for the turns that hold their phrase, each linked to its turn
lesson_model   a ScriptedLLM answering every request with `lessons_for`
distill        Distiller.run over the stub, two workers
"""

from __future__ import annotations

import re
from typing import Any

from server.learning.distill import Distiller
from server.learning.llm import ChatClient
from server.service.memory import MemoryService
from tests.llm_stub import Reply, ScriptedLLM, ScriptedReply

TURN = re.compile(r"^\[T(\d+)\] (User|Assistant): (.*?)(?=^\[T\d+\]|</transcript>)", re.M | re.S)

# What a model would learn, keyed by a phrase of the turn it comes from.
LESSONS = {
    "this repo uses pnpm": (
        "acme-api uses pnpm, never npm; npm would drop the lockfile.",
        "preference",
    ),
    "microsecond precision": (
        "Keyset cursors in acme-api must carry created_at::text: a JS Date drops Postgres"
        " microseconds and skips rows that tie on created_at.",
        "bug",
    ),
    "**Root cause:**": (
        "withTransaction in acme-api released pool clients only on success; every failed"
        " transaction leaked one until the pool (max 10) was exhausted. Fixed with finally.",
        "fix",
    ),
    "don't run anything against staging": (
        "Never run load tests against staging; use the local stack (pnpm db:up).",
        "preference",
    ),
}


def lessons_for(messages: list[dict[str, Any]]) -> ScriptedReply:
    transcript = messages[-1]["content"]
    items = []
    for number, _, text in TURN.findall(transcript):
        for phrase, (content, kind) in LESSONS.items():
            if phrase in text:
                items.append(
                    {"content": content, "kind": kind, "tags": ["acme"], "turns": [int(number)]}
                )
    return Reply.json({"memories": items})


def lesson_model() -> ScriptedLLM:
    return ScriptedLLM(default=Reply.by_prompt(lessons_for))


async def distill(service: MemoryService, llm: ScriptedLLM, **options: Any) -> Any:
    async with ChatClient(llm.base_url, timeout=5) as client:
        distiller = Distiller(service, client, model="qwen2.5:7b", workers=2)
        return await distiller.run(**options)
