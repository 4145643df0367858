"""A conversation turn is embedded together with the two turns said just before it.

A turn alone often does not say what it is about: "we got another cat named Bailey too"
answers "what pets do you have?" a turn earlier, and "yes, switch it to pnpm" answers the
agent's question about the lockfile. So the vector stored for a conversation turn (a `raw`
memory with a session id) is its own embedding plus those of the turn before it and the one
before that, at weights 0.5 and 0.25, normalised to unit length. On LoCoMo, with the
weights chosen on conversations 0-4, this raised semantic recall@10 from 0.401 to 0.471 on
the held-out conversations 5-9 (docs/benchmarks-history.md). Notes, distilled memories and other
kinds have no "before" and keep their own vector.

"Before" means earlier by (created_at, id) among the raw memories of the same session and
subagent, deleted and archived ones included: forgetting a turn does not change what was
said. The earlier turns are encoded again from their text, since what is stored for them is
itself a blend. Only the whole-text vector blends; a long turn's window vectors stay its own.

A turn edited later, or imported after turns that follow it, leaves the turns after it
blended with what was there before; `claude-memory reembed` rebuilds every blend.

Keyword search has the same idea in the database: `memories.context_tsv` holds the terms of
the two turns before, kept by triggers (migrations/006_turn_context_terms.sql).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from server.core.models.memories import Memory, NewMemory
from server.core.models.vectors import TURN_CONTEXT_WEIGHTS, DocumentVectors, TurnPlace
from server.service.embeddings import Embedder
from server.store import memories as memory_store
from server.store.tx import Pool, transaction


def turn_place(
    kind: str,
    session_id: str | None,
    metadata: Mapping[str, Any],
    created_at: datetime | None,
    memory_id: int | None = None,
) -> TurnPlace | None:
    """Where a memory sits in its conversation; None for anything but a raw session turn."""
    if kind != "raw" or not session_id:
        return None
    return TurnPlace(
        session_id=session_id,
        agent_id=str(metadata.get("agent_id") or ""),
        created_at=created_at or datetime.now(tz=UTC),
        memory_id=memory_id,
    )


def place_of_new(memory: NewMemory) -> TurnPlace | None:
    return turn_place(memory.kind, memory.session_id, memory.metadata, memory.created_at)


def place_of_stored(memory: Memory) -> TurnPlace | None:
    return turn_place(memory.kind, memory.session_id, memory.metadata, memory.created_at, memory.id)


def blend(own: np.ndarray, earlier: Sequence[np.ndarray]) -> np.ndarray:
    """`own` plus the earlier turns' vectors (nearest first), weighted, at unit length."""
    mixed = own.astype(np.float32, copy=True)
    for weight, vector in zip(TURN_CONTEXT_WEIGHTS, earlier, strict=False):
        mixed += np.float32(weight) * vector
    norm = float(np.linalg.norm(mixed))
    return mixed / norm if norm > 0 else own


def _present(vector: np.ndarray | None) -> np.ndarray:
    if vector is None:  # only documents_or_waiting leaves vectors out, and not here
        raise ValueError("the embedder returned no vector")
    return vector


async def embed_in_context(
    pool: Pool,
    embedder: Embedder,
    texts: Sequence[str],
    places: Sequence[TurnPlace | None],
    *,
    wait_if_down: bool = False,
) -> list[DocumentVectors]:
    """Vectors for `texts`, each conversation turn's blended with the turns before it.

    `places[i]` says where `texts[i]` sits (None: not a turn, its own vector). Turns of one
    session in the batch are each other's context, in (created_at, id, position) order; the
    turns before the first of them are read from the store and encoded in the same call as
    the batch. With `wait_if_down` (writes) an unreachable embeddings endpoint gives every
    text WAITING_FOR_VECTOR instead of an error.
    """
    turns = [(i, place) for i, place in enumerate(places) if place is not None]
    turns.sort(key=lambda turn: (turn[1].created_at, turn[1].order_id, turn[0]))
    sessions: dict[tuple[str, str], list[int]] = {}
    firsts: list[TurnPlace] = []
    for index, place in turns:
        key = (place.session_id, place.agent_id)
        if key not in sessions:
            sessions[key] = []
            firsts.append(place)
        sessions[key].append(index)
    stored_before: list[list[str]] = []
    if firsts:
        async with transaction(pool) as conn:
            stored_before = await memory_store.turns_before(conn, firsts, len(TURN_CONTEXT_WEIGHTS))
    everything = [*texts, *(text for earlier in stored_before for text in earlier)]
    if wait_if_down:
        encoded = await embedder.documents_or_waiting(everything, context_from=len(texts))
        if encoded and encoded[0].vector is None:
            return encoded[: len(texts)]
    else:
        encoded = await embedder.embed_documents_async(everything, context_from=len(texts))
    result = encoded[: len(texts)]
    earlier_vectors = iter(_present(document.vector) for document in encoded[len(texts) :])
    for members, earlier in zip(sessions.values(), stored_before, strict=True):
        history = [next(earlier_vectors) for _ in earlier]  # nearest first
        for index in members:
            own = _present(result[index].vector)
            result[index] = dataclasses.replace(result[index], vector=blend(own, history))
            history = [own, *history][: len(TURN_CONTEXT_WEIGHTS)]
    return result
