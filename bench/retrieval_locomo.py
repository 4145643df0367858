"""Retrieval quality and latency on LoCoMo, through MemoryService; prints one JSON object.

All of LoCoMo's 10 conversations are loaded into a fresh embedded database (then ANALYZEd, so
the keyword statistics do not depend on when autovacuum runs), one memory per dialog turn
(`speaker: text`, timestamped with its session's date, project = the conversation id, one
session id per LoCoMo session, so turns are embedded with the two before them as the
importers do). Every question of categories 1-4 is asked within its conversation in each mode
(semantic, keyword, hybrid); a BM25 baseline (k1 1.2, b 0.75, computed here in Python) ranks
the same turns for comparison. Figures per split: conversations 0-4 (tuning), 5-9 (held
back: not used for tuning), and all ten.

- recall@k: the share of a question's evidence turns found in the top k, averaged;
- session recall_any@5: whether any top-5 hit comes from a session holding evidence;
- mrr: 1 / rank of the first evidence turn in the top 10 (0 when none);
- latency p50/p95 in milliseconds, per query through the service (read cache off).

The embeddings come from the bundled model in-process (`--provider local`, the default) or
from any OpenAI-compatible endpoint (`--provider openai --base-url URL --model NAME`, with
`--api-key` if it needs one). `--stand-in` starts tests/embeddings_stub.py (the bundled model
served over `/v1/embeddings`) on a free port and uses it, to show an endpoint-backed store
scores as the local one does.

Usage: .venv/bin/python bench/retrieval_locomo.py [--data PATH] [--conversations N]
           [--provider local|openai] [--base-url URL] [--model NAME] [--api-key KEY] [--stand-in]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from server.core.config import Secret, Settings  # noqa: E402
from server.core.models.memories import MemoryFilter, NewMemory  # noqa: E402
from server.core.validation import content_hash  # noqa: E402
from server.service.memory import MemoryService  # noqa: E402
from server.service.runtime import open_service  # noqa: E402
from server.service.supersessions import link_new_memories  # noqa: E402
from server.service.turn_context import embed_in_context, place_of_new  # noqa: E402
from server.store import memories as memory_store  # noqa: E402
from server.store.tx import transaction  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "bench" / "data" / "locomo10.json"
MODES = ("semantic", "keyword", "hybrid")
TOP_K = 10
# LoCoMo's question categories, as its paper names them.
CATEGORIES = {1: "multi_hop", 2: "temporal", 3: "open_domain", 4: "single_hop"}
DIALOG_ID = re.compile(r"D(\d+):(\d+)")
WORD = re.compile(r"[a-z0-9]+")


@dataclass
class Question:
    conversation: str
    text: str
    category: int
    evidence: set[str]


@dataclass
class Turn:
    dialog_id: str
    content: str
    created_at: datetime


def session_of(dialog_id: str) -> str:
    return dialog_id.split(":")[0]


def parse_session_time(text: str) -> datetime:
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def load(path: Path, limit: int | None) -> list[tuple[str, list[Turn], list[Question]]]:
    conversations = []
    for sample in json.loads(path.read_text())[:limit]:
        name = sample["sample_id"]
        dialog = sample["conversation"]
        turns: list[Turn] = []
        sessions = sorted(
            (int(key.split("_")[1]), key) for key in dialog if re.fullmatch(r"session_\d+", key)
        )
        for _, key in sessions:
            start = parse_session_time(dialog[f"{key}_date_time"])
            for offset, turn in enumerate(dialog[key]):
                turns.append(
                    Turn(
                        dialog_id=turn["dia_id"],
                        content=f"{turn['speaker']}: {turn['text']}",
                        created_at=start + timedelta(seconds=offset),
                    )
                )
        questions = []
        for qa in sample["qa"]:
            evidence = {
                f"D{m.group(1)}:{m.group(2)}"
                for item in qa.get("evidence", [])
                for m in DIALOG_ID.finditer(str(item))
            }
            if qa.get("category") in (1, 2, 3, 4) and evidence:
                questions.append(Question(name, qa["question"], qa["category"], evidence))
        conversations.append((name, turns, questions))
    return conversations


async def store_turns(
    service: MemoryService, name: str, turns: list[Turn]
) -> tuple[dict[int, set[str]], int]:
    """Insert every turn (bypassing the write guard, so near-identical turns all stay).

    Each LoCoMo session is a session of raw turns, so every turn is embedded with the turns
    before it by the importers' own code (server/service/turn_context.py). Returns the dialog ids of
    each memory and how many supersession links the turns formed.
    """
    memories = [
        NewMemory(
            content=turn.content,
            content_hash=content_hash(f"{name}\n{turn.dialog_id}\n{turn.content}"),
            kind="raw",
            source="locomo",
            project=name,
            session_id=f"{name}/{session_of(turn.dialog_id)}",
            created_at=turn.created_at,
            metadata={"dialog_id": turn.dialog_id},
        )
        for turn in turns
    ]
    documents = await embed_in_context(
        service.pool,
        service.embedder,
        [memory.content for memory in memories],
        [place_of_new(memory) for memory in memories],
    )
    dialog_ids: dict[int, set[str]] = {}
    async with transaction(service.pool) as conn:
        for turn, memory, vectors in zip(turns, memories, documents, strict=True):
            inserted = await memory_store.insert(conn, memory, vectors)
            if inserted is not None:
                dialog_ids.setdefault(inserted.id, set()).add(turn.dialog_id)
        # As every import path does: link turns that change a fact an earlier turn stated.
        links = await link_new_memories(conn, sorted(dialog_ids))
    return dialog_ids, len(links)


class Bm25:
    """Plain BM25 over lower-cased alphanumeric words, the usual reference point."""

    def __init__(self, documents: list[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.tokens = [WORD.findall(doc.lower()) for doc in documents]
        self.lengths = [len(t) for t in self.tokens]
        self.average = sum(self.lengths) / max(len(self.lengths), 1)
        self.frequencies = [Counter(t) for t in self.tokens]
        document_frequency: Counter[str] = Counter()
        for tokens in self.tokens:
            document_frequency.update(set(tokens))
        n = len(documents)
        self.idf = {
            term: math.log(1 + (n - df + 0.5) / (df + 0.5))
            for term, df in document_frequency.items()
        }

    def rank(self, query: str, k: int) -> list[int]:
        terms = set(WORD.findall(query.lower()))
        scores = []
        for index, counts in enumerate(self.frequencies):
            score = 0.0
            for term in terms:
                tf = counts.get(term, 0)
                if tf:
                    norm = self.k1 * (1 - self.b + self.b * self.lengths[index] / self.average)
                    score += self.idf[term] * tf * (self.k1 + 1) / (tf + norm)
            if score > 0:
                scores.append((score, index))
        scores.sort(reverse=True)
        return [index for _, index in scores[:k]]


def score_question(ranked: list[set[str]], evidence: set[str]) -> dict[str, float]:
    def recall(k: int) -> float:
        found = set().union(*ranked[:k]) if ranked[:k] else set()
        return len(found & evidence) / len(evidence)

    evidence_sessions = {session_of(d) for d in evidence}
    top5_sessions = {session_of(d) for ids in ranked[:5] for d in ids}
    reciprocal = 0.0
    for rank, ids in enumerate(ranked[:TOP_K], start=1):
        if ids & evidence:
            reciprocal = 1.0 / rank
            break
    return {
        "recall@5": recall(5),
        "recall@10": recall(10),
        "session_recall_any@5": float(bool(top5_sessions & evidence_sessions)),
        "mrr": reciprocal,
    }


def summarise(rows: list[dict[str, float]], latencies: list[float]) -> dict[str, Any]:
    summary: dict[str, Any] = {"questions": len(rows)}
    for key in ("recall@5", "recall@10", "session_recall_any@5", "mrr"):
        summary[key] = round(statistics.fmean(r[key] for r in rows), 4) if rows else None
    if latencies:
        ordered = sorted(latencies)
        summary["latency_ms_p50"] = round(ordered[len(ordered) // 2], 2)
        summary["latency_ms_p95"] = round(ordered[int(len(ordered) * 0.95) - 1], 2)
    return summary


async def search(service: MemoryService, mode: str, question: Question) -> list[int]:
    where = MemoryFilter(project=question.conversation)
    if mode == "semantic":
        result = await service.search_semantic(
            question.text, limit=TOP_K, min_similarity=0.0, where=where
        )
    elif mode == "keyword":
        result = await service.search_keyword(question.text, limit=TOP_K, where=where)
    else:
        result = await service.search_hybrid(question.text, limit=TOP_K, where=where)
    return [hit.id for hit in result.hits]


async def settle(service: MemoryService) -> None:
    """ANALYZE the loaded store, as autovacuum soon does on a user's machine: keyword IDF reads
    the planner's term statistics once they exist, so without this the figures depend on when
    autovacuum happened to run during the bench."""
    async with service.pool.connection() as conn:
        await conn.execute("ANALYZE memories")


async def run(
    data: Path, conversations_limit: int | None, home: Path, embedding: dict[str, Any]
) -> dict[str, Any]:
    conversations = load(data, conversations_limit)
    settings = Settings(claude_memory_home=home, cache_max_size=0, **embedding)
    per_split: dict[str, dict[str, list[dict[str, float]]]] = {}
    latencies: dict[str, dict[str, list[float]]] = {}
    per_category: dict[str, dict[str, dict[str, list[dict[str, float]]]]] = {}
    link_count = 0
    started = time.monotonic()
    async with open_service(settings) as service:
        model = {
            "provider": service.embedder.provider,
            "model": service.embedder.name,
            "dimension": service.embedder.dimension,
        }
        load_started = time.monotonic()
        stored: list[dict[int, set[str]]] = []
        for name, turns, _ in conversations:
            dialog_ids, links = await store_turns(service, name, turns)
            stored.append(dialog_ids)
            link_count += links
        await settle(service)
        for index, (_, turns, questions) in enumerate(conversations):
            split = "tuning" if index < 5 else "held_out"
            dialog_ids = stored[index]
            bm25 = Bm25([t.content for t in turns])
            for question in questions:
                evidence = question.evidence
                ranked_bm25 = [{turns[i].dialog_id} for i in bm25.rank(question.text, TOP_K)]
                for bucket in (split, "all"):
                    per_split.setdefault(bucket, {}).setdefault("bm25", []).append(
                        score_question(ranked_bm25, evidence)
                    )
                for mode in MODES:
                    t0 = time.perf_counter()
                    ids = await search(service, mode, question)
                    elapsed = (time.perf_counter() - t0) * 1000.0
                    ranked = [dialog_ids.get(i, set()) for i in ids]
                    scores = score_question(ranked, evidence)
                    for bucket in (split, "all"):
                        per_split.setdefault(bucket, {}).setdefault(mode, []).append(scores)
                        latencies.setdefault(bucket, {}).setdefault(mode, []).append(elapsed)
                        per_category.setdefault(bucket, {}).setdefault(mode, {}).setdefault(
                            CATEGORIES[question.category], []
                        ).append(scores)
        query_seconds = time.monotonic() - load_started
    splits = {
        bucket: {
            mode: summarise(rows, latencies.get(bucket, {}).get(mode, []))
            for mode, rows in modes.items()
        }
        for bucket, modes in per_split.items()
    }
    return {
        "benchmark": "locomo-retrieval",
        "conversations": len(conversations),
        "turns": sum(len(t) for _, t, _ in conversations),
        "questions": sum(len(q) for _, _, q in conversations),
        "top_k": TOP_K,
        "embedding": model,
        "supersession_links": link_count,
        "splits": {key: splits[key] for key in ("tuning", "held_out", "all") if key in splits},
        "categories": {
            bucket: {
                mode: {name: summarise(rows, []) for name, rows in sorted(names.items())}
                for mode, names in modes.items()
            }
            for bucket, modes in per_category.items()
        },
        "seconds_total": round(time.monotonic() - started, 1),
        "seconds_load_and_query": round(query_seconds, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--conversations", type=int, default=None, help="first N only")
    parser.add_argument("--provider", choices=("local", "openai"), default="local")
    parser.add_argument("--base-url", help="the endpoint, up to /v1 (--provider openai)")
    parser.add_argument("--model", help="the embedding model (default: the bundled one)")
    parser.add_argument("--api-key", help="the endpoint's key, if it needs one")
    parser.add_argument(
        "--stand-in",
        action="store_true",
        help="serve the bundled model over /v1/embeddings here and use it (--provider openai)",
    )
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        embedding = embedding_settings(args, stack)
        home = stack.enter_context(
            tempfile.TemporaryDirectory(prefix="locomo-bench-", ignore_cleanup_errors=True)
        )
        report = asyncio.run(run(args.data, args.conversations, Path(home), embedding))
    print(json.dumps(report, indent=2))  # noqa: T201


def embedding_settings(args: argparse.Namespace, stack: contextlib.ExitStack) -> dict[str, Any]:
    """Settings fields for the chosen provider; `--stand-in` starts the bundled model's server."""
    chosen: dict[str, Any] = {"embedding_provider": "openai" if args.stand_in else args.provider}
    if args.model:
        chosen["embedding_model"] = args.model
    if args.stand_in:
        from server.service.embeddings import LocalEmbedder
        from tests.embeddings_stub import SERVED_MODEL, EmbeddingServer

        server = stack.enter_context(EmbeddingServer(LocalEmbedder.load(SERVED_MODEL)))
        chosen.update(embedding_base_url=server.base_url, embedding_model=SERVED_MODEL)
    elif args.provider == "openai":
        if not args.base_url:
            raise SystemExit("--provider openai needs --base-url (or use --stand-in)")
        chosen["embedding_base_url"] = args.base_url.rstrip("/")
    if args.api_key:
        chosen["embedding_api_key"] = Secret(args.api_key)
    return chosen


if __name__ == "__main__":
    main()
