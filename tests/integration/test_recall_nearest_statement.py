"""Prompt recall shows a long memory from the statement its vectors find nearest the prompt
(server/store/search.py `nearest_statements`, by the vector the hook's search computed) when
the prompt's words name only the memory's subject: the statement that answers shares no word
with the prompt. Through the real hook over a real service, database and model."""

from __future__ import annotations

import pytest

from server.core.config import Settings
from server.recall.hook import HookRecall
from server.service.memory import MemoryService
from tests.forecaster_notes import ANSWER, PROMPT, SUBJECT, filler

pytestmark = pytest.mark.integration

FILLER = filler(24)
NOTES = "\n".join([SUBJECT, *FILLER[:12], ANSWER, *FILLER[12:]])


async def test_a_long_memory_is_shown_from_its_statement_nearest_the_prompt(
    service: MemoryService, settings: Settings
) -> None:
    saved = await service.save(NOTES, project="loadcast", kind="distilled", force=True)

    answer = await HookRecall(service, settings).prompt("s-near", "", PROMPT)

    line = next(line for line in answer.markdown.splitlines() if f"#{saved.id}" in line)
    assert ANSWER in line
    assert FILLER[0] not in line and FILLER[20] not in line  # cut to its room, not shown whole
