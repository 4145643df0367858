"""Ingest through an embeddings endpoint against the local model, one run; prints one JSON object.

`CLAUDE_MEMORY_EMBEDDING_PROVIDER=openai` sends every text to an OpenAI-compatible
`/v1/embeddings`; `local`
(the default) runs the bundled all-MiniLM-L6-v2 in this process. The same texts are imported
both ways, one after the other in one process, each into a fresh embedded database in its own
temp CLAUDE_MEMORY_HOME: LoCoMo's 5,882 dialog turns (read as bench/retrieval_locomo.py reads
them), one raw memory per turn, through the importers' path `MemoryService.import_files` (one
FileImport per LoCoMo session, gathered into batches of >= the importer's BATCH_TURNS; each
turn embedded with the turns before it). The embedder is the one `open_service` loads
(`load_embedder`), wrapped to count the texts that reach the model.

By default the endpoint is tests/embeddings_stub.py's EmbeddingServer, started here on a free
port serving the model the local run used: both stores must hold the same vectors, and the
difference in time is the cost of HTTP and JSON. `--base-url URL --model NAME [--api-key KEY]`
measures a real endpoint instead.

Per provider: memories, seconds, memories/s, texts embedded/s (context turns included), encode
calls, CPU seconds of this process (the stand-in's work included), load average after; for the
endpoint, HTTP requests and batch size; then the ratio endpoint / local, and whether the top-5
semantic hits of `--queries` LoCoMo questions are identical in both stores.

Usage: .venv/bin/python bench/embedding_endpoint.py [--conversations N] [--queries 20]
           [--base-url URL --model NAME [--api-key KEY]]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.retrieval_locomo import DEFAULT_DATA, Question, Turn, load, session_of  # noqa: E402
from server.core.config import Secret, Settings  # noqa: E402
from server.core.models.memories import MemoryDraft, MemoryFilter  # noqa: E402
from server.core.models.sessions import FileImport  # noqa: E402
from server.core.models.vectors import Window  # noqa: E402
from server.ingest.importer import BATCH_TURNS  # noqa: E402
from server.service.embeddings import Embedder, LocalEmbedder  # noqa: E402
from server.service.runtime import load_embedder, open_service  # noqa: E402

TOP = 5


class Counted(Embedder):
    """`inner` with a count of the texts and calls that reach the model (or the endpoint)."""

    def __init__(self, inner: Embedder) -> None:
        super().__init__(inner.name, inner.dimension, inner.batch_size, inner.profile)
        self.provider = inner.provider
        self.inner = inner
        self.texts = self.calls = self.requests = 0

    @property
    def reachable(self) -> bool:
        return self.inner.reachable

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        self.texts += len(texts)
        # RemoteEmbedder sends one request per `batch_size` texts of a call.
        self.requests += math.ceil(len(texts) / self.inner.batch_size)
        vectors = self.inner._encode(texts)
        self.dimension = self.inner.dimension
        return vectors

    def windows(self, text: str) -> list[Window]:
        return self.inner.windows(text)


def batches(conversations: list[tuple[str, list[Turn], list[Question]]]) -> list[list[FileImport]]:
    """One FileImport per LoCoMo session, gathered as the importer gathers files."""
    files: list[FileImport] = []
    for name, turns, _ in conversations:
        by_session: dict[str, list[MemoryDraft]] = {}
        for turn in turns:
            session = f"{name}/{session_of(turn.dialog_id)}"
            by_session.setdefault(session, []).append(
                MemoryDraft(
                    content=turn.content,
                    kind="raw",
                    source="locomo",
                    project=name,
                    session_id=session,
                    created_at=turn.created_at,
                    metadata={"dialog_id": turn.dialog_id},
                )
            )
        files.extend(FileImport(drafts=drafts) for drafts in by_session.values())
    gathered: list[list[FileImport]] = [[]]
    pending = 0
    for item in files:
        if pending >= BATCH_TURNS:
            gathered.append([])
            pending = 0
        gathered[-1].append(item)
        pending += len(item.drafts)
    return gathered


async def ingest(
    settings: Settings,
    imports: list[list[FileImport]],
    queries: list[Question],
    served: Callable[[], tuple[int, int]] | None = None,
) -> tuple[dict[str, Any], list[list[tuple[str, float]]], Embedder]:
    """Import every batch into a fresh store; the figures, each query's top hits, the model.

    `served` reads the stand-in's (requests, texts) answered so far, to check the counts.
    """
    inner, unreachable = await load_embedder(settings)
    if unreachable:
        raise SystemExit(unreachable)
    counted = Counted(inner)
    warm_up = [d.content for d in imports[0][0].drafts[:16]]
    await inner.encode_async(warm_up)  # model and connection warm, not counted
    async with open_service(settings, embedder=counted) as service:
        before = served() if served else (0, 0)
        wall, cpu = time.perf_counter(), time.process_time()
        saved = errors = 0
        for batch in imports:
            for outcome in await service.import_files(batch):
                saved += outcome.saved
                errors += len(outcome.errors)
        seconds = time.perf_counter() - wall
        cpu_seconds = time.process_time() - cpu
        figures: dict[str, Any] = {
            "provider": inner.provider,
            "model": inner.name,
            "dimension": inner.dimension,
            "memories": saved,
            "errors": errors,
            "seconds": round(seconds, 2),
            "memories_per_s": round(saved / seconds, 1),
            "texts_embedded": counted.texts,
            "texts_per_s": round(counted.texts / seconds, 1),
            "encode_calls": counted.calls,
            "cpu_seconds": round(cpu_seconds, 1),
            "load_1m_after": round(os.getloadavg()[0], 2),
        }
        if inner.provider != "local":
            figures["http_requests"] = counted.requests
            figures["batch_size"] = inner.batch_size
            figures["texts_per_request"] = round(counted.texts / max(counted.requests, 1), 1)
        if served:
            after = served()
            figures["served"] = {"requests": after[0] - before[0], "texts": after[1] - before[1]}
        hits = []
        for question in queries:
            result = await service.search_semantic(
                question.text,
                limit=TOP,
                min_similarity=0.0,
                where=MemoryFilter(project=question.conversation),
            )
            hits.append(
                [
                    (f"{h.session_id}@{h.created_at.isoformat()}", h.similarity or 0.0)
                    for h in result.hits
                ]
            )
    return figures, hits, inner


def compare(
    queries: list[Question],
    local: list[list[tuple[str, float]]],
    endpoint: list[list[tuple[str, float]]],
) -> dict[str, Any]:
    """Whether both stores return the same top hits in the same order, and how close."""
    differing = []
    largest = 0.0
    for question, ours, theirs in zip(queries, local, endpoint, strict=True):
        if [key for key, _ in ours] != [key for key, _ in theirs]:
            differing.append(
                {
                    "question": question.text,
                    "local": [key for key, _ in ours],
                    "endpoint": [key for key, _ in theirs],
                }
            )
            continue
        for (_, a), (_, b) in zip(ours, theirs, strict=True):
            largest = max(largest, abs(a - b))
    return {
        "queries": len(queries),
        "top": TOP,
        "identical": len(queries) - len(differing),
        "all_identical": not differing,
        "max_similarity_difference": float(f"{largest:.2e}"),
        "differing": differing,
    }


async def run(args: argparse.Namespace, scratch: Path) -> dict[str, Any]:
    started = time.monotonic()
    conversations = load(args.data, args.conversations)
    imports = batches(conversations)
    per_conversation = max(1, math.ceil(args.queries / len(conversations)))
    queries = [q for _, _, questions in conversations for q in questions[:per_conversation]]
    queries = queries[: args.queries]
    report: dict[str, Any] = {
        "benchmark": "embedding-endpoint",
        "cpus": os.cpu_count(),
        "load_1m_at_start": round(os.getloadavg()[0], 2),
        "corpus": {
            "conversations": len(conversations),
            "turns": sum(len(turns) for _, turns, _ in conversations),
            "files": sum(len(batch) for batch in imports),
            "import_batches": len(imports),
        },
    }
    local_settings = Settings(claude_memory_home=scratch / "local", cache_max_size=0)
    local, local_hits, model = await ingest(local_settings, imports, queries)
    with contextlib.ExitStack() as stack:
        endpoint: dict[str, Any] = {"embedding_provider": "openai"}
        server = None
        if args.base_url:
            endpoint["embedding_base_url"] = args.base_url.rstrip("/")
            endpoint["embedding_model"] = args.model or local_settings.embedding_model
            if args.api_key:
                endpoint["embedding_api_key"] = Secret(args.api_key)
        else:
            from tests.embeddings_stub import SERVED_MODEL, EmbeddingServer

            assert isinstance(model, LocalEmbedder)  # the local run loaded the bundled model
            server = stack.enter_context(EmbeddingServer(model))
            endpoint.update(embedding_base_url=server.base_url, embedding_model=SERVED_MODEL)
        settings = Settings(claude_memory_home=scratch / "endpoint", cache_max_size=0, **endpoint)
        stand_in = server
        counts = (lambda: (len(stand_in.requests), sum(stand_in.requests))) if stand_in else None
        remote, remote_hits, _ = await ingest(settings, imports, queries, counts)
        report["endpoint"] = {"base_url": settings.embedding_base_url, "stand_in": bool(server)}
    report["providers"] = {"local": local, "endpoint": remote}
    report["ratio_endpoint_to_local"] = {
        "memories_per_s": round(remote["memories_per_s"] / local["memories_per_s"], 3),
        "seconds": round(remote["seconds"] / local["seconds"], 3),
        "cpu_seconds": round(remote["cpu_seconds"] / max(local["cpu_seconds"], 0.1), 3),
    }
    report["top5_semantic"] = compare(queries, local_hits, remote_hits)
    report["seconds_total"] = round(time.monotonic() - started, 1)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--conversations", type=int, default=None, help="first N only")
    parser.add_argument("--queries", type=int, default=20, help="questions whose top 5 compare")
    parser.add_argument("--base-url", help="a real endpoint, up to /v1 (default: the stand-in)")
    parser.add_argument("--model", help="the model it serves (with --base-url)")
    parser.add_argument("--api-key", help="the endpoint's key, if it needs one")
    args = parser.parse_args()
    if args.model and not args.base_url:
        parser.error("--model needs --base-url (the stand-in serves the bundled model)")
    with tempfile.TemporaryDirectory(prefix="endpoint-bench-", ignore_cleanup_errors=True) as tmp:
        report = asyncio.run(run(args, Path(tmp)))
    print(json.dumps(report, indent=2))  # noqa: T201


if __name__ == "__main__":
    main()
