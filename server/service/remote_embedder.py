"""Embeddings from an OpenAI-compatible endpoint: Ollama, LM Studio, vLLM, llama.cpp, a hosted API.

`CLAUDE_MEMORY_EMBEDDING_PROVIDER=openai` sends texts to
`<CLAUDE_MEMORY_EMBEDDING_BASE_URL>/embeddings` through the `openai` package (the same client
distillation uses), in batches of `CLAUDE_MEMORY_EMBEDDING_BATCH_SIZE`.
The package retries 408, 429 and 5xx answers and dropped connections with exponential
back-off (honouring Retry-After); when those retries are spent, or the model is missing, the
error names the URL and the model. After a failure the endpoint is not asked again for
`QUIET_SECONDS`, so every save during an outage fails over at once (stored without a vector,
embedded later by server/service/vector_backfill.py) instead of waiting through the retries.

The vector dimension is read from the first answer. The server does not tokenise for a remote
model, so long texts are split into windows of characters (about 512 tokens of English).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence

import numpy as np
import openai

from server.core.config import Settings
from server.core.errors import EmbeddingUnavailable
from server.core.models.vectors import Window
from server.service.embedding_profiles import EmbeddingProfile, profile_for
from server.service.embeddings import Embedder, token_windows

logger = logging.getLogger(__name__)

# Ollama and most local servers ignore the key, but the openai package requires one.
NO_KEY = "no-key"
RETRIES = 4
QUIET_SECONDS = 30.0
WINDOW_CHARS = 2_000
WINDOW_OVERLAP_CHARS = 400
PROBE_TEXT = "dimension probe"


class RemoteEmbedder(Embedder):
    """An embedding model behind an OpenAI-compatible `/v1/embeddings` route."""

    provider = "openai"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        batch_size: int = 64,
        timeout_seconds: float = 60.0,
        profile: EmbeddingProfile | None = None,
        retries: int = RETRIES,
        quiet_seconds: float = QUIET_SECONDS,
    ) -> None:
        super().__init__(model, 0, batch_size, profile or profile_for(model))
        self.base_url = base_url.rstrip("/")
        self._client = openai.OpenAI(
            base_url=self.base_url,
            api_key=api_key or NO_KEY,
            timeout=timeout_seconds,
            max_retries=retries,
        )
        self.quiet_seconds = quiet_seconds
        self._quiet_until = 0.0
        self._last_problem = ""
        self._guard = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Settings) -> RemoteEmbedder:
        key = settings.embedding_api_key.reveal() if settings.embedding_api_key else None
        return cls(
            settings.embeddings_url,
            settings.embedding_model,
            api_key=key,
            batch_size=settings.embedding_batch_size,
            timeout_seconds=settings.embedding_timeout_seconds,
            profile=profile_for(
                settings.embedding_model,
                query_prefix=settings.embedding_query_prefix,
                document_prefix=settings.embedding_document_prefix,
            ),
        )

    def probe(self) -> int:
        """Ask for one vector and keep its dimension; raises EmbeddingUnavailable."""
        self._quiet_until = 0.0
        vector = self._encode([PROBE_TEXT])
        return int(vector.shape[1])

    @property
    def reachable(self) -> bool:
        """False while a recent failure keeps the endpoint from being asked."""
        return time.monotonic() >= self._quiet_until

    def windows(self, text: str) -> list[Window]:
        if len(text) <= WINDOW_CHARS:
            return [Window(0, len(text))]
        characters = [(i, i + 1) for i in range(len(text))]
        return token_windows(characters, len(text), WINDOW_CHARS, WINDOW_OVERLAP_CHARS)

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        with self._guard:
            if not self.reachable:
                raise EmbeddingUnavailable(
                    f"{self._last_problem} (not asked again for a few seconds)"
                )
        # Texts of similar length share a request: servers pad a batch to its longest text, so
        # mixed batches cost up to 1.7x the compute (docs/benchmarks-history.md).
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        try:
            batches = [
                self._batch([texts[i] for i in order[start : start + self.batch_size]])
                for start in range(0, len(order), self.batch_size)
            ]
        except EmbeddingUnavailable as exc:
            with self._guard:
                self._quiet_until = time.monotonic() + self.quiet_seconds
                self._last_problem = exc.message
            raise
        if not batches:
            return np.zeros((0, self.dimension), np.float32)
        vectors = np.empty_like(np.concatenate(batches))
        vectors[order] = np.concatenate(batches)
        return vectors

    def _batch(self, texts: list[str]) -> np.ndarray:
        where = f"the embeddings endpoint {self.base_url} (model {self.name!r})"
        try:
            answer = self._client.embeddings.create(
                model=self.name, input=texts, encoding_format="float"
            )
        except openai.NotFoundError as exc:
            raise EmbeddingUnavailable(
                f"{self.base_url} does not serve the embedding model {self.name!r} "
                f"({_said(exc)}); pull it first (Ollama: `ollama pull {self.name}`) or set "
                "CLAUDE_MEMORY_EMBEDDING_MODEL"
            ) from exc
        except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
            raise EmbeddingUnavailable(
                f"{where} refused the request ({_said(exc)}); check CLAUDE_MEMORY_EMBEDDING_API_KEY"
            ) from exc
        except openai.APIConnectionError as exc:  # timeouts too
            raise EmbeddingUnavailable(f"cannot reach {where}: {exc}") from exc
        except openai.APIStatusError as exc:
            raise EmbeddingUnavailable(
                f"{where} answered HTTP {exc.status_code} ({_said(exc)})"
            ) from exc
        except openai.OpenAIError as exc:  # an answer the package could not read
            raise EmbeddingUnavailable(f"{where} answered something unreadable: {exc}") from exc
        return self._vectors(answer, len(texts), where)

    def _vectors(self, answer: object, expected: int, where: str) -> np.ndarray:
        """The answer's vectors in input order, checked and scaled to unit length."""
        rows = getattr(answer, "data", None)
        try:
            ordered = sorted(rows or [], key=lambda row: int(row.index))
            vectors = np.asarray([row.embedding for row in ordered], dtype=np.float32)
        except (TypeError, ValueError, AttributeError) as exc:
            raise EmbeddingUnavailable(f"{where} answered malformed vectors: {exc}") from exc
        if vectors.ndim != 2 or len(vectors) != expected or vectors.shape[1] == 0:
            raise EmbeddingUnavailable(
                f"{where} answered {len(rows or [])} vectors for {expected} texts"
            )
        if self.dimension and vectors.shape[1] != self.dimension:
            raise EmbeddingUnavailable(
                f"{where} answered {vectors.shape[1]}-d vectors, but the store holds "
                f"{self.dimension}-d ones: was the model changed? Run `claude-memory reembed`"
            )
        if not np.isfinite(vectors).all():
            raise EmbeddingUnavailable(f"{where} answered vectors with NaN or infinite values")
        self.dimension = self.dimension or int(vectors.shape[1])
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return np.asarray(vectors / np.maximum(norms, 1e-12), dtype=np.float32)


def _said(exc: openai.APIStatusError) -> str:
    """The server's own words, shortened: Ollama says `model "x" not found, try pulling it`."""
    body = exc.body
    if isinstance(body, dict):
        message = body.get("message") or body.get("error")
        if isinstance(message, dict):
            message = message.get("message")
        if isinstance(message, str) and message:
            return message[:200]
    return str(exc.message)[:200]
