"""Facts that change over time: is the current (or the asked-for earlier) version found first?

The corpus in bench/changes_corpus/ (Claude Code transcripts and notes of four projects over
ten weeks; its README says what is in it) is imported into a fresh embedded database through
the product's own import paths (SessionImporter, `import --text`), which also link the
memories that supersede others. Each question of bench/changes_corpus/questions.json is then
asked with hybrid search, in its own project, through MemoryService (what `POST /api/search`
calls), twice: with the links as the import made them, and with every link removed, so the
difference is what supersession adds.

A hit answers a question if its content holds one of the question's `expect` strings (case
folded); it is stale if it holds one of its `stale` strings and none of `expect`.
- answered@1 / answered@5: an answering hit first / in the top 5;
- stale@1: the first hit is stale (an outdated version for a question about now; for a
  question about the past, a version of the wrong time);
per category (current, past, change, paraphrase, identifier) and for all.

Usage: .venv/bin/python bench/retrieval_changes.py [--corpus DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from server.core.config import Settings  # noqa: E402
from server.core.models import MemoryFilter  # noqa: E402
from server.ingest.documents import import_text  # noqa: E402
from server.ingest.importer import ImportFilters, SessionImporter  # noqa: E402
from server.service.memory import MemoryService  # noqa: E402
from server.service.runtime import open_service  # noqa: E402
from server.store.tx import transaction  # noqa: E402

DEFAULT_CORPUS = ROOT / "bench" / "changes_corpus"
CATEGORIES = ("current", "past", "change", "paraphrase", "identifier")
TOP_K = 10


@dataclass(frozen=True, slots=True)
class Question:
    id: str
    project: str
    category: str
    text: str
    expect: tuple[str, ...]
    stale: tuple[str, ...]


def load_questions(corpus: Path) -> list[Question]:
    raw = json.loads((corpus / "questions.json").read_text(encoding="utf-8"))
    return [
        Question(
            id=item["id"],
            project=item["project"],
            category=item["category"],
            text=item["question"],
            expect=tuple(s.lower() for s in item["expect"]),
            stale=tuple(s.lower() for s in item.get("stale", [])),
        )
        for item in raw
    ]


def judge(question: Question, contents: list[str]) -> dict[str, float]:
    """answered@1, answered@5 and stale@1 of one ranked list of hit contents."""
    folded = [content.lower() for content in contents]

    def answers(text: str) -> bool:
        return any(s in text for s in question.expect)

    top = folded[0] if folded else ""
    return {
        "answered@1": float(bool(folded) and answers(top)),
        "answered@5": float(any(answers(text) for text in folded[:5])),
        "stale@1": float(
            bool(folded) and not answers(top) and any(s in top for s in question.stale)
        ),
    }


def summarise(rows: list[dict[str, float]]) -> dict[str, Any]:
    summary: dict[str, Any] = {"questions": len(rows)}
    for key in ("answered@1", "answered@5", "stale@1"):
        summary[key] = round(statistics.fmean(r[key] for r in rows), 3) if rows else None
    return summary


async def ask_all(service: MemoryService, questions: list[Question]) -> dict[str, Any]:
    per_category: dict[str, list[dict[str, float]]] = {}
    latencies: list[float] = []
    for question in questions:
        started = time.perf_counter()
        result = await service.search_hybrid(
            question.text, limit=TOP_K, where=MemoryFilter(project=question.project)
        )
        latencies.append((time.perf_counter() - started) * 1000.0)
        scores = judge(question, [hit.content for hit in result.hits])
        per_category.setdefault(question.category, []).append(scores)
        per_category.setdefault("all", []).append(scores)
    ordered = sorted(latencies)
    return {
        **{name: summarise(per_category.get(name, [])) for name in (*CATEGORIES, "all")},
        "latency_ms_p50": round(ordered[len(ordered) // 2], 2),
        "latency_ms_p95": round(ordered[int(len(ordered) * 0.95) - 1], 2),
    }


async def run(corpus: Path, home: Path) -> dict[str, Any]:
    questions = load_questions(corpus)
    settings = Settings(claude_memory_home=home, cache_max_size=0)
    started = time.monotonic()
    async with open_service(settings) as service:
        turns = await SessionImporter(service, ImportFilters()).run(corpus / "projects")
        notes = await import_text(service, [corpus / "notes"])
        if turns.errors or notes.errors:
            raise SystemExit(f"import failed: {turns.errors or notes.errors}")
        async with transaction(service.pool) as conn:
            cur = await conn.execute(
                "SELECT count(*), count(supersedes) FROM memories WHERE deleted_at IS NULL"
            )
            memories, links = (int(v) for v in (await cur.fetchone() or (0, 0)))
        import_seconds = time.monotonic() - started
        async with service.pool.connection() as conn:  # as in retrieval_locomo.settle
            await conn.execute("ANALYZE memories")
        with_links = await ask_all(service, questions)
        async with transaction(service.pool) as conn:
            await conn.execute("UPDATE memories SET supersedes = NULL WHERE supersedes IS NOT NULL")
        without_links = await ask_all(service, questions)
    return {
        "benchmark": "retrieval-changes",
        "corpus": str(corpus.relative_to(ROOT) if corpus.is_relative_to(ROOT) else corpus),
        "memories": memories,
        "supersession_links": links,
        "questions": len(questions),
        "top_k": TOP_K,
        "hybrid_with_links": with_links,
        "hybrid_without_links": without_links,
        "seconds_import": round(import_seconds, 1),
        "seconds_total": round(time.monotonic() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="changes-bench-", ignore_cleanup_errors=True) as home:
        report = asyncio.run(run(args.corpus.resolve(), Path(home)))
    print(json.dumps(report, indent=2))  # noqa: T201


if __name__ == "__main__":
    main()
