"""The prompt hook reads once and writes once (#69): one UserPromptSubmit posted over real HTTP
to the real app takes one transaction that only reads (the project, the names no memory holds,
the hits, their evidence, what the session's budget has spent) and one that writes (the
receipt and the journal's prompt), counted on the real database's pool. The answer is the one
the hook always gave: the memory that answers, the index beneath, the receipt, the journal."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
import psycopg
import pytest

from server.core.models.journal import JournalFilter
from server.core.models.receipts import ReceiptFilter
from server.domain.context import INDEX_HEADING
from server.service.memory import MemoryService
from server.store.tx import Pool

pytestmark = pytest.mark.integration

CWD = "/home/dev/acme-api"
SESSION = "5e55a0e1-0000-4000-8000-000000000069"
ANSWER = "The staging database is restored from the nightly snapshot every Monday at 06:00 UTC."
NEARBY = (
    "Snapshots older than fourteen days are pruned by the retention job in the ops repository.",
    "Restoring a Postgres snapshot locally needs the pg_restore from the same major version.",
)
PROMPT = "when is the staging database restored from the nightly snapshot?"
WRITES = re.compile(r"^\s*(INSERT|UPDATE|DELETE)\b", re.IGNORECASE)


@dataclass
class Checkout:
    """One connection taken from the pool: one transaction (server/store/tx.py), and the
    statements run in it."""

    statements: list[str] = field(default_factory=list)

    @property
    def writes(self) -> bool:
        return any(WRITES.match(statement) for statement in self.statements)


class Recording(psycopg.AsyncCursor[Any]):
    """A cursor that notes each statement it runs in its connection's checkout."""

    checkout: Checkout

    async def execute(self, query: Any, params: Any = None, **kwargs: Any) -> Any:
        self.checkout.statements.append(str(query))
        return await super().execute(query, params, **kwargs)

    async def executemany(self, query: Any, params_seq: Any, **kwargs: Any) -> None:
        self.checkout.statements.append(str(query))
        await super().executemany(query, params_seq, **kwargs)


@contextmanager
def counted(pool: Pool) -> Iterator[list[Checkout]]:
    """Every checkout of `pool` while the block runs, with its statements."""
    checkouts: list[Checkout] = []
    original = pool.connection

    @asynccontextmanager
    async def connection(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        checkout = Checkout()
        checkouts.append(checkout)
        async with original(*args, **kwargs) as conn:
            factory = conn.cursor_factory
            cursor = type("Cursor", (Recording,), {"checkout": checkout})
            conn.cursor_factory = cursor
            try:
                yield conn
            finally:
                conn.cursor_factory = factory

    pool.connection = connection  # type: ignore[method-assign]
    try:
        yield checkouts
    finally:
        del pool.connection


async def test_one_prompt_is_one_read_and_one_write(app_url: str, service: MemoryService) -> None:
    answer = (await service.save(ANSWER, project="acme-api", project_path=CWD, force=True)).id
    for text in NEARBY:
        await service.save(text, project="acme-api", project_path=CWD, force=True)
    hook = {"session_id": SESSION, "cwd": CWD, "prompt": PROMPT, "prompt_id": "p-69"}

    async with httpx.AsyncClient(base_url=app_url, timeout=30) as http:
        with counted(service.pool) as checkouts:
            reply = await http.post("/api/hooks/prompt", json=hook)
            await asyncio.sleep(1.0)  # anything the route would leave to run after its answer
    assert reply.status_code == 200
    context = reply.json()["additionalContext"]

    # Unchanged: the answer in full, the index beneath, the receipt, the journaled prompt.
    assert f"#{answer}," in context and INDEX_HEADING in context
    receipt = (await service.receipts(ReceiptFilter(session_id=SESSION))).receipts[0]
    assert receipt.memory_ids == [answer] and receipt.listed_ids
    journal = await service.journal(JournalFilter(session_id=SESSION))
    assert [(entry.project, entry.prompt) for entry in journal.entries] == [("acme-api", PROMPT)]
    # The HTTP edge's one statement for every request (who is asking: server/adapters/auth.py),
    # then the hook's own: one read, one write.
    edge, read, write = checkouts
    assert len(edge.statements) == 1 and "FROM users" in edge.statements[0]
    assert len(read.statements) > 1 and not read.writes
    assert write.writes and all(WRITES.match(statement) for statement in write.statements)
    assert {table for statement in write.statements for table in written(statement)} == {
        "injections",
        "journal_prompts",
    }


def written(statement: str) -> set[str]:
    """The tables a statement inserts into or deletes from."""
    return set(re.findall(r"(?:INSERT INTO|DELETE FROM)\s+(\w+)", statement, re.IGNORECASE))
