"""Capture hybrid search's candidates with their signals and labels, for fitting fusion.

Imports a corpus as its own bench does (bench/retrieval_changes.py for the team's and the
outside corpus, bench/retrieval_locomo.py for LoCoMo), asks every question in hybrid mode,
and writes one JSON line per question: its corpus, split, category and tense, and every
candidate the fusion scored, with the signals it had (similarity, keyword score, the dated
lists' scores, kind, date, length, links), the product's own fused x prior score, and labels
(answers, holds a stale value).

Usage: .venv/bin/python bench/fusion_capture.py --corpus team|outside|locomo --out FILE
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import retrieval_changes as changes  # noqa: E402
import retrieval_locomo as locomo  # noqa: E402

from server.core.config import Settings  # noqa: E402
from server.core.models.memories import Memory, MemoryFilter  # noqa: E402
from server.domain.versions import question_tense  # noqa: E402
from server.service import search as search_module  # noqa: E402
from server.service.runtime import open_service  # noqa: E402

OUTSIDE = ROOT.parent / "shared" / "bench" / "outside-corpus"


class Recorder:
    """Keeps what the last hybrid call fused and ranked."""

    def __init__(self) -> None:
        self.lists: dict[str, dict[int, float]] = {}
        self.rows: list[Memory] = []
        self.scores: dict[int, float] = {}

    def install(self) -> None:
        fuse = search_module.score_fusion
        rank = search_module.Searcher._rank
        recorder = self

        def recording_fusion(
            scored_lists: Mapping[str, Mapping[int, float]], weights: Mapping[str, float]
        ) -> dict[int, float]:
            recorder.lists = {name: dict(scores) for name, scores in scored_lists.items()}
            return fuse(scored_lists, weights)

        def recording_rank(
            self: search_module.Searcher,
            rows: Sequence[Memory],
            base_score: Callable[[Memory], float],
            use_prior: bool,
            **maps: Any,
        ) -> list[Any]:
            hits = rank(self, rows, base_score, use_prior, **maps)
            if maps.get("fused") is not None:
                recorder.rows = list(rows)
                recorder.scores = {hit.id: hit.score for hit in hits}
            return hits

        search_module.score_fusion = recording_fusion  # type: ignore[assignment]
        search_module.Searcher._rank = recording_rank  # type: ignore[method-assign]

    def candidates(self, label: Callable[[Memory], dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for m in self.rows:
            out.append(
                {
                    "id": m.id,
                    "similarity": self.lists["semantic"].get(m.id, 0.0),
                    "keyword": self.lists["keyword"].get(m.id, 0.0),
                    "semantic_dated": self.lists.get("semantic_dated", {}).get(m.id),
                    "keyword_dated": self.lists.get("keyword_dated", {}).get(m.id),
                    "has_dated": "semantic_dated" in self.lists,
                    "kind": m.kind,
                    "created_at": m.created_at.isoformat(),
                    "length": len(m.content),
                    "asks": m.kind == "raw" and m.content.rstrip().endswith("?"),
                    "general": m.project is None,
                    "supersedes": m.supersedes is not None,
                    "superseded": m.superseded_by is not None,
                    "product_score": self.scores.get(m.id, 0.0),
                    **label(m),
                }
            )
        return out


async def capture_changes(corpus: Path, out: Any, name: str) -> None:
    recorder = Recorder()
    recorder.install()
    questions = changes.load_questions(corpus)
    with tempfile.TemporaryDirectory(prefix="fusion-", ignore_cleanup_errors=True) as home:
        settings = Settings(claude_memory_home=Path(home), cache_max_size=0)
        async with open_service(settings) as service:
            await changes.import_corpus(service, corpus)
            async with service.pool.connection() as conn:
                await conn.execute("ANALYZE memories")
            for q in questions:
                if q.category == "negative":
                    continue
                where = MemoryFilter(project=q.project, with_general=True)
                result = await service.search_hybrid(q.text, limit=10, where=where)

                def label(m: Memory, q: changes.Question = q) -> dict[str, Any]:
                    text = m.content.lower()
                    return {
                        "answers": q.answered_by([text]),
                        "partial": any(s in text for s in q.expect),
                        "stale": changes.stale(q, text),
                    }

                row = {
                    "corpus": name,
                    "split": name,
                    "question": q.id,
                    "category": q.category,
                    "tense": question_tense(q.text),
                    "final": [hit.id for hit in result.hits],
                    "candidates": recorder.candidates(label),
                }
                out.write(json.dumps(row) + "\n")


async def capture_locomo(out: Any) -> None:
    recorder = Recorder()
    recorder.install()
    conversations = locomo.load(locomo.DEFAULT_DATA, None)
    with tempfile.TemporaryDirectory(prefix="fusion-", ignore_cleanup_errors=True) as home:
        settings = Settings(claude_memory_home=Path(home), cache_max_size=0)
        async with open_service(settings) as service:
            stored = []
            for conv_name, turns, _ in conversations:
                dialog_ids, _ = await locomo.store_turns(service, conv_name, turns)
                stored.append(dialog_ids)
            await locomo.settle(service)
            for index, (_, _, questions) in enumerate(conversations):
                split = "tuning" if index < 5 else "held_out"
                for number, q in enumerate(questions):
                    where = MemoryFilter(project=q.conversation)
                    result = await service.search_hybrid(q.text, limit=10, where=where)

                    def label(
                        m: Memory, q: locomo.Question = q, ids: dict[int, set[str]] = stored[index]
                    ) -> dict[str, Any]:
                        return {"answers": bool(ids.get(m.id, set()) & q.evidence)}

                    row = {
                        "corpus": "locomo",
                        "split": split,
                        "question": f"{q.conversation}/{number}",
                        "category": locomo.CATEGORIES[q.category],
                        "tense": question_tense(q.text),
                        "evidence": len(q.evidence),
                        "final": result.hits and [hit.id for hit in result.hits],
                        "candidates": recorder.candidates(label),
                    }
                    out.write(json.dumps(row) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", choices=("team", "outside", "locomo"), required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    with args.out.open("w", encoding="utf-8") as out:
        if args.corpus == "locomo":
            asyncio.run(capture_locomo(out))
        else:
            corpus = changes.DEFAULT_CORPUS if args.corpus == "team" else OUTSIDE
            asyncio.run(capture_changes(corpus, out, args.corpus))


if __name__ == "__main__":
    main()
