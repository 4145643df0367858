"""The real model: vectors for one text at a time equal those of a batch, threads restored."""

from __future__ import annotations

import numpy as np
import torch

from server.service.embeddings import Embedder

TEXTS = [
    "what did we decide about pagination cursors?",
    "Use pnpm, never npm, in acme-api.",
    "ERR_POOL_TIMEOUT after the migration to pg 18",
    "Rate limit POST /invoices per API key at 30/min.",
    "The liveness probe hits /healthz every ten seconds.",
]


def test_single_queries_on_one_thread_get_the_vectors_a_batch_gets(embedder: Embedder) -> None:
    # Two threads for the batch, whatever the suite runs with (tests/conftest.py sets one), so
    # one-thread vectors are compared with two-thread ones and the restore is seen.
    suite_threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        batch = embedder.encode(TEXTS)
        singles = np.vstack([embedder.encode([text]) for text in TEXTS])
        threads_after = torch.get_num_threads()
    finally:
        torch.set_num_threads(suite_threads)

    np.testing.assert_allclose(singles, batch, atol=1e-5)
    assert np.allclose(np.linalg.norm(singles, axis=1), 1.0, atol=1e-5)
    assert threads_after == 2
