"""Vectors: the recorded model, the windows a text is embedded as, and a turn's context."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import numpy as np


@dataclass(frozen=True, slots=True)
class EmbeddingModelRecord:
    """The model the stored vectors were made with (table `embedding_model`)."""

    provider: str
    model: str
    dimension: int
    state: str
    recorded_at: datetime


@dataclass(frozen=True, slots=True)
class Window:
    """A passage of a text: characters [start, end)."""

    start: int
    end: int


# How much the turn before a conversation turn, and the one before that, count towards it: in
# its vector (server/service/turn_context.py) and in its keyword score (server/store/search.py).
TURN_CONTEXT_WEIGHTS = (0.5, 0.25)


@dataclass(frozen=True, slots=True)
class TurnPlace:
    """Where a conversation turn sits: its session and subagent, its time, its id if stored.

    Turns are ordered by (created_at, id) within a (session_id, agent_id) pair; a turn not
    stored yet (`memory_id` None) comes after every stored turn of the same time.
    """

    session_id: str
    agent_id: str
    created_at: datetime
    memory_id: int | None = None

    @property
    def order_id(self) -> int:
        """The id the turn sorts by: past every stored id while it is not stored."""
        return self.memory_id if self.memory_id is not None else 2**63 - 1


@dataclass(frozen=True, slots=True)
class DocumentVectors:
    """A text's vector, and its windows' vectors when it is longer than the model reads.

    `vector` is the text's own embedding for short texts, and the normalised mean of its
    window vectors for long ones (what the write guard and related-memory look-ups compare);
    a conversation turn's is then blended with the turns before it (server/service/turn_context.py).
    `vector` is None while the embeddings endpoint is down: the memory is stored without one
    and server/service/vector_backfill.py embeds it later.
    """

    vector: np.ndarray | None
    windows: list[tuple[Window, np.ndarray]]
    # One vector per statement of a text stating several things (server/domain/statements.py),
    # searched beside the windows but not part of `vector`.
    units: list[tuple[Window, np.ndarray]] = field(default_factory=list)

    @property
    def searched(self) -> list[tuple[str, Window, np.ndarray]]:
        """The rows memory_chunks holds for the text: its passages, then its statements."""
        return [("passage", w, v) for w, v in self.windows] + [
            ("statement", w, v) for w, v in self.units
        ]


WAITING_FOR_VECTOR = DocumentVectors(None, [])
