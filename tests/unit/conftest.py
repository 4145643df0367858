"""Fixtures for the unit tests of the LLM client and the distill core, over the scripted
OpenAI-compatible server (tests/llm_stub.py; real HTTP, no mock):

llm (function)      a ScriptedLLM on a free port, answering `{"memories": []}` unless scripted
client (function)   a ChatClient on `llm`, with a 5-second timeout
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from server.learning.llm import ChatClient
from tests.llm_stub import ScriptedLLM


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    with ScriptedLLM() as server:
        yield server


@pytest.fixture
async def client(llm: ScriptedLLM) -> AsyncIterator[ChatClient]:
    async with ChatClient(llm.base_url, timeout=5) as chat:
        yield chat
