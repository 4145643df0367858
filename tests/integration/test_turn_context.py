"""Conversation turns are stored with the two turns before them blended into their vector.

Real database and model: the vectors read back are compared with the model's own encodings of
the turns, blended as server/service/turn_context.py says.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from server.core.config import Secret, Settings
from server.core.models.memories import MemoryDraft
from server.core.models.sessions import FileImport
from server.service.embeddings import Embedder
from server.service.memory import MemoryService
from server.service.reembed import reembed
from server.service.runtime import open_service
from server.service.turn_context import blend

START = datetime(2026, 10, 5, 9, 30, tzinfo=UTC)
TURNS = [
    ("user", "Which package manager should the CI pipeline use for installs?"),
    ("assistant", "pnpm, with the frozen lockfile flag so the lockfile is never rewritten."),
    ("user", "Good. Keep the Node version pinned to 20 in the workflow file as well."),
    ("assistant", "Done: the workflow now reads node-version 20 and runs pnpm install."),
]


def drafts(
    session: str, numbers: range, agent: str | None = None, suffix: str = ""
) -> list[MemoryDraft]:
    """Turns of TURNS as one session's drafts; `suffix` keeps their texts apart from s1's."""
    made = []
    for number in numbers:
        role, text = TURNS[number]
        metadata: dict[str, object] = {"record_uuid": f"{session}-{agent}-{number}"}
        if agent:
            metadata["agent_id"] = agent
        made.append(
            MemoryDraft(
                content=text + suffix,
                kind="raw",
                source="claude-code",
                session_id=session,
                role=role,
                created_at=START + timedelta(minutes=number),
                metadata=metadata,
            )
        )
    return made


def expected_vectors(embedder: Embedder, texts: list[str]) -> list[np.ndarray]:
    """Each text's own vector blended with the (up to) two texts before it."""
    own = list(embedder.encode(texts))
    return [
        blend(own[i], [own[j] for j in range(i - 1, max(i - 3, -1), -1)]) for i in range(len(own))
    ]


async def stored_vectors(service: MemoryService) -> dict[str, np.ndarray]:
    async with service.pool.connection() as conn:
        cur = await conn.execute("SELECT content, embedding::text FROM memories ORDER BY id")
        rows = await cur.fetchall()
    return {
        str(content): np.array(json.loads(str(text)), dtype=np.float32) for content, text in rows
    }


def assert_close(found: np.ndarray, expected: np.ndarray) -> None:
    assert float(np.dot(found, expected)) > 0.99999, float(np.dot(found, expected))


async def test_an_imported_turn_is_embedded_with_the_two_turns_before_it(
    service: MemoryService, embedder: Embedder
) -> None:
    await service.import_files([FileImport(drafts("s1", range(4)))])

    stored = await stored_vectors(service)

    texts = [text for _, text in TURNS]
    for text, expected in zip(texts, expected_vectors(embedder, texts), strict=True):
        assert_close(stored[text], expected)
    own_reply = embedder.encode([texts[1]])[0]
    assert float(np.dot(stored[texts[1]], own_reply)) < 0.99  # the blend did change it


async def test_a_session_read_in_two_imports_gets_the_same_vectors_as_in_one(
    service: MemoryService, embedder: Embedder
) -> None:
    await service.import_files([FileImport(drafts("s1", range(2)))])
    first_turn = (await service.list_memories(limit=10)).memories
    await service.soft_delete(next(m.id for m in first_turn if m.content == TURNS[0][1]))
    await service.import_files([FileImport(drafts("s1", range(2, 4)))])

    stored = await stored_vectors(service)

    texts = [text for _, text in TURNS]
    for text, expected in zip(texts, expected_vectors(embedder, texts), strict=True):
        assert_close(stored[text], expected)  # a deleted turn was still said


async def test_other_sessions_subagents_and_notes_are_not_context(
    service: MemoryService, embedder: Embedder
) -> None:
    note = "This repository deploys from the release branch only."
    await service.save(note, kind="note")
    await service.import_files(
        [
            FileImport(drafts("s1", range(2))),
            FileImport(drafts("s2", range(1, 2), suffix=" (second session)")),
        ]
    )
    await service.import_files(
        [FileImport(drafts("s1", range(1, 2), agent="a7", suffix=" (subagent)"))]
    )

    stored = await stored_vectors(service)

    assert_close(stored[note], embedder.encode([note])[0])
    alone = TURNS[1][1]
    # s1's reply follows its question; s2 starts with the reply; the subagent has only it.
    assert float(np.dot(stored[alone], embedder.encode([alone])[0])) < 0.99
    subagent_text = f"{alone} (subagent)"
    assert_close(stored[subagent_text], embedder.encode([subagent_text])[0])
    second = f"{alone} (second session)"
    assert_close(stored[second], embedder.encode([second])[0])


async def test_an_edited_turn_is_blended_with_the_turns_before_it_again(
    service: MemoryService, embedder: Embedder
) -> None:
    await service.import_files([FileImport(drafts("s1", range(3)))])
    third = next(
        m for m in (await service.list_memories(limit=10)).memories if m.content == TURNS[2][1]
    )
    edited = "Good. Keep the Node version pinned to 22 in the workflow file as well."

    await service.update(third.id, content=edited, force=True)

    stored = await stored_vectors(service)
    texts = [TURNS[0][1], TURNS[1][1], edited]
    assert_close(stored[edited], expected_vectors(embedder, texts)[2])


async def test_the_reply_is_closer_to_the_question_it_answers_than_its_own_text_is(
    service: MemoryService, embedder: Embedder
) -> None:
    await service.import_files([FileImport(drafts("s1", range(4)))])
    question = "what package manager does continuous integration install with"

    result = await service.search_semantic(question, limit=4, min_similarity=0.0)

    reply = next(hit for hit in result.hits if hit.content == TURNS[1][1])
    query_vector, own_reply = embedder.encode([question, TURNS[1][1]])
    assert reply.similarity is not None
    assert reply.similarity > float(np.dot(query_vector, own_reply)) + 0.02


async def test_reembed_rebuilds_every_blend(
    fresh_database: Callable[[], str], embedder: Embedder, tmp_path: Path
) -> None:
    settings = Settings(database_url=Secret(fresh_database()), claude_memory_home=tmp_path)
    async with open_service(settings, embedder=embedder) as service:
        await service.import_files([FileImport(drafts("s1", range(4)))])
        before = await stored_vectors(service)
        result = await reembed(service.pool, embedder, batch_size=3)
        after = await stored_vectors(service)

    assert result.memories == 4
    assert before.keys() == after.keys()
    for text, vector in before.items():
        assert_close(after[text], vector)


async def context_terms(service: MemoryService, content: str) -> dict[str, set[str]]:
    """The context terms stored for the memory holding `content`, by weight label."""
    async with service.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT c.lexeme, w FROM memories m, unnest(m.context_tsv) AS c,"
            " unnest(c.weights) AS w WHERE m.content = %(content)s",
            {"content": content},
        )
        rows = await cur.fetchall()
    found: dict[str, set[str]] = {}
    for lexeme, weight in rows:
        found.setdefault(str(weight), set()).add(str(lexeme))
    return found


async def test_a_turn_keeps_the_words_of_the_two_turns_before_it_for_keyword_search(
    service: MemoryService,
) -> None:
    await service.import_files([FileImport(drafts("s1", range(4)))])

    third = await context_terms(service, TURNS[2][1])
    first = await context_terms(service, TURNS[0][1])

    assert {"pnpm", "lockfil", "rewritten"} <= third["B"]  # the turn before
    assert {"packag", "manag", "pipelin"} <= third["C"]  # the one before that
    assert "pipelin" not in third["B"]
    assert first == {}


# As many lockfile mentions as the reply and shorter: only the reply's context can lift it.
CONTROL = "Rebase so the lockfile matches main, then commit the lockfile."
OTHER_NOTES = [
    "The staging database is restored from the nightly snapshot every Monday.",
    "Feature flags are read from the config service at start-up.",
    "The API rate limit is 100 requests per minute per token.",
    "Release notes are written in the CHANGELOG before tagging.",
    "Integration tests run against a real PostgreSQL started by the test script.",
    "The web UI is built with Vite and served from /ui by the same process.",
    "Backups are written nightly to the data folder and kept for two weeks.",
    "Secrets are redacted before anything is stored.",
]


async def test_keyword_search_ranks_a_reply_by_the_question_before_it(
    service: MemoryService,
) -> None:
    for note in OTHER_NOTES:  # a term in over a quarter of all memories is not searched for
        await service.save(note, kind="note")
    await service.import_files(
        [
            FileImport(drafts("s1", range(2))),
            FileImport(
                [
                    MemoryDraft(
                        content=CONTROL,
                        kind="raw",
                        session_id="s2",
                        role="assistant",
                        created_at=START,
                        metadata={"record_uuid": "s2-0"},
                    )
                ]
            ),
        ]
    )

    result = await service.search_keyword("package manager lockfile", limit=5, use_prior=False)

    order = [hit.content for hit in result.hits]
    assert order.index(TURNS[1][1]) < order.index(CONTROL)


ANALYSIS = (
    "Three things slow the invoice renderer at month end: the render queue has 4 workers, each"
    " worker renders one invoice PDF at a time, and a failed render is retried twice with no"
    " backoff. Raising the render workers to 8 halves the queue; adding a backoff stops the"
    " retries from piling up behind the slow renders."
)
REPLY = "Yes, go with 8 workers."


async def test_a_short_reply_does_not_outscore_the_turn_it_answers_on_that_turns_words(
    service: MemoryService,
) -> None:
    for note in OTHER_NOTES:
        await service.save(note, kind="note")
    turns = [("assistant", ANALYSIS), ("user", REPLY)]
    await service.import_files(
        [
            FileImport(
                [
                    MemoryDraft(
                        content=text,
                        kind="raw",
                        session_id="s-render",
                        role=role,
                        created_at=START + timedelta(minutes=number),
                        metadata={"record_uuid": f"s-render-{number}"},
                    )
                    for number, (role, text) in enumerate(turns)
                ]
            )
        ]
    )

    result = await service.search_keyword(
        "how many render workers does the invoice render queue have?", limit=5, use_prior=False
    )

    order = [hit.content for hit in result.hits]
    assert REPLY in order  # found on its own word and the turn it answers
    assert order.index(ANALYSIS) < order.index(REPLY)


async def test_editing_or_purging_a_turn_refreshes_the_words_of_the_turns_after_it(
    service: MemoryService,
) -> None:
    await service.import_files([FileImport(drafts("s1", range(4)))])
    memories = {m.content: m.id for m in (await service.list_memories(limit=10)).memories}
    edited = "yarn, with the immutable flag so the lockfile is never rewritten."

    await service.update(memories[TURNS[1][1]], content=edited, force=True)
    after_edit = await context_terms(service, TURNS[2][1])
    await service.soft_delete(memories[TURNS[1][1]])
    after_delete = await context_terms(service, TURNS[2][1])
    await service.purge(memories[TURNS[1][1]])
    after_purge = [await context_terms(service, TURNS[n][1]) for n in (2, 3)]

    assert "yarn" in after_edit["B"] and "pnpm" not in after_edit["B"]
    assert "yarn" in after_delete["B"]  # a deleted turn was still said
    assert all("yarn" not in terms.get(w, set()) for terms in after_purge for w in ("B", "C"))
    assert "packag" in after_purge[0]["B"]  # the question is now the turn before
