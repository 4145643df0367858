"""Similarity cut-offs measured, not guessed: where true and unrelated pairs fall for the model.

Every default cut-off the product applies to cosine similarity (semantic search, the prompt
recall hook, find_duplicates) is read here against pairs whose answer is known, through the
product's own import paths and vectors (`search_store.similarities`: the memory's vector or
its best passage, as semantic search scores it):

- question -> answer, changes corpus (bench/changes_corpus, imported as
  bench/retrieval_changes.py does): per question, the best similarity of a memory that answers
  it ("true"), and the best similarity of any memory of an unrelated project ("unrelated": what
  a cut-off has to stop when the project asked about does not know the answer);
- question -> evidence, LoCoMo (../shared/bench/data/locomo10.json, stored as
  bench/retrieval_locomo.py stores it): the best evidence turn, and the best turn of another
  conversation;
- the same fact twice against two close but different facts (bench/calibration/
  duplicate_pairs.json), on the memory vectors that find_duplicates and the write guard compare.

For each cut-off in use it prints the share of true pairs kept and of unrelated pairs let
through, and the cut-off each rule proposes (CUTOFF_RULES). server/service/cutoffs.py holds the
defaults chosen from these figures; docs/benchmarks-history.md records them.

Usage: .venv/bin/python bench/similarity_calibration.py [--locomo PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import retrieval_changes  # noqa: E402
import retrieval_locomo  # noqa: E402
from retrieval_changes import family  # noqa: E402

from server.core.config import Settings  # noqa: E402
from server.core.models.memories import MemoryFilter  # noqa: E402
from server.domain.supersession_rules import redundant_near_copy  # noqa: E402
from server.ingest.documents import import_text  # noqa: E402
from server.ingest.importer import ImportFilters, SessionImporter  # noqa: E402
from server.service.cutoffs import cutoffs_for  # noqa: E402
from server.service.memory import MemoryService  # noqa: E402
from server.service.runtime import open_service  # noqa: E402
from server.store import search as search_store  # noqa: E402
from server.store.tx import transaction  # noqa: E402

PAIRS = ROOT / "bench" / "calibration" / "duplicate_pairs.json"
GRID = [round(0.05 * step, 2) for step in range(1, 20)]
PERCENTILES = (1, 5, 10, 25, 50, 75, 90, 95, 99)
CUTOFF_RULES = {
    "semantic": "highest step of 0.05 that keeps >= 99% of true question-answer pairs of each"
    " corpus: ranking orders what passes, so the cut-off only drops what cannot be an answer",
    "recall": "the step of 0.05 that best separates (largest share of true pairs kept minus"
    " share of unanswerable questions let through, both corpora); within one pair, the higher."
    " That is the cut-off for similarity alone: the hook in use weighs the prompt's words too,"
    " and its cut-offs are read off bench/recall_words.py",
    "duplicates": "the step of 0.05 that best separates same-fact pairs from different-fact"
    " pairs as find_duplicates reports them (versions of a fact left out); within one pair,"
    " the higher",
}


def describe(values: list[float]) -> dict[str, Any]:
    """Count, mean and percentiles, rounded for reading."""
    if not values:
        return {"n": 0}
    array = np.asarray(values)
    return {
        "n": len(values),
        "mean": round(float(array.mean()), 3),
        **{f"p{p}": round(float(np.percentile(array, p)), 3) for p in PERCENTILES},
    }


def share_at_or_above(values: list[float], cutoff: float) -> float:
    return round(sum(1 for v in values if v >= cutoff) / len(values), 3) if values else 0.0


async def best_elsewhere(service: MemoryService, vector: np.ndarray, projects: list[str]) -> float:
    """The highest similarity any memory of `projects` has to the query vector."""
    best = -1.0
    async with transaction(service.pool) as conn:
        for project in projects:
            hits = await search_store.semantic_candidates(
                conn, vector, MemoryFilter(project=project), 1
            )
            if hits:
                best = max(best, hits[0][1])
    return best


async def changes_pairs(service: MemoryService, corpus: Path) -> tuple[list[float], list[float]]:
    """(true, unrelated-best) similarities of the changes corpus's questions."""
    turns = await SessionImporter(service, ImportFilters()).run(corpus / "projects")
    notes = await import_text(service, [corpus / "notes"])
    if turns.errors or notes.errors:
        raise SystemExit(f"import failed: {turns.errors or notes.errors}")
    questions = retrieval_changes.load_questions(corpus)
    projects = sorted({q.project for q in questions})
    true: list[float] = []
    unrelated: list[float] = []
    for question in questions:
        [vector] = await service.embedder.encode_queries_async([question.text])
        async with transaction(service.pool) as conn:
            cur = await conn.execute(
                "SELECT id, lower(content) FROM memories WHERE deleted_at IS NULL AND project = %s",
                (question.project,),
            )
            answering = [
                int(row[0])
                for row in await cur.fetchall()
                if any(e.casefold() in row[1] for e in question.expect)
            ]
            scores = await search_store.similarities(conn, vector, answering)
        if scores:
            true.append(max(scores.values()))
        others = [p for p in projects if family(p) != family(question.project)]
        unrelated.append(await best_elsewhere(service, vector, others))
    return true, unrelated


async def locomo_pairs(service: MemoryService, data: Path) -> tuple[list[float], list[float]]:
    """(true, unrelated-best) similarities of LoCoMo questions to their evidence turns."""
    conversations = retrieval_locomo.load(data, None)
    ids_of: dict[str, dict[str, int]] = {}
    for name, turns, _ in conversations:
        dialog_ids, _ = await retrieval_locomo.store_turns(service, name, turns)
        ids_of[name] = {d: memory_id for memory_id, ds in dialog_ids.items() for d in ds}
    names = [name for name, _, _ in conversations]
    true: list[float] = []
    unrelated: list[float] = []
    for position, (name, _, questions) in enumerate(conversations):
        other = names[(position + 1) % len(names)]
        texts = [q.text for q in questions]
        vectors = await service.embedder.encode_async(texts)
        for question, vector in zip(questions, vectors, strict=True):
            evidence = [ids_of[name][d] for d in question.evidence if d in ids_of[name]]
            async with transaction(service.pool) as conn:
                scores = await search_store.similarities(conn, vector, evidence)
            if scores:
                true.append(max(scores.values()))
            unrelated.append(await best_elsewhere(service, vector, [other]))
    return true, unrelated


def duplicate_pairs(service: MemoryService) -> tuple[list[float], list[float]]:
    """(same fact, different facts) similarities of the hand-written pairs' memory vectors,
    as find_duplicates scores them: a pair whose second text states a changed value of the
    first's fact is a version, never reported, so it counts as 0."""
    pairs = json.loads(PAIRS.read_text())

    def similarity(pair: list[str]) -> float:
        first, second = service.embedder.embed_documents(pair)
        score = float(np.dot(first.vector, second.vector))
        return score if redundant_near_copy(pair[1], pair[0], score, 0.0) else 0.0

    return [similarity(p) for p in pairs["same"]], [similarity(p) for p in pairs["different"]]


def best_separating(kept: list[float], passing: list[float]) -> float:
    """The highest grid step whose share of `kept` minus share of `passing` is within one
    pair of the best: a difference smaller than one example's share is not evidence."""

    def separation(cutoff: float) -> float:
        return share_at_or_above(kept, cutoff) - share_at_or_above(passing, cutoff)

    best = max(separation(c) for c in GRID)
    one_pair = 1.0 / min(len(kept), len(passing))
    return max(c for c in GRID if separation(c) >= best - one_pair)


def proposals(
    corpora: list[tuple[list[float], list[float]]], same: list[float], different: list[float]
) -> dict[str, float]:
    """The cut-off each of CUTOFF_RULES gives for these figures."""
    semantic = max(
        c for c in GRID if all(share_at_or_above(true, c) >= 0.99 for true, _ in corpora)
    )
    true = [v for t, _ in corpora for v in t]
    unrelated = [v for _, u in corpora for v in u]
    return {
        "semantic": semantic,
        "recall": best_separating(true, unrelated),
        "duplicates": best_separating(same, different),
    }


async def run(corpus: Path, locomo: Path, home: Path) -> dict[str, Any]:
    started = time.monotonic()
    settings = Settings(claude_memory_home=home, cache_max_size=0)
    async with open_service(settings) as service:
        changes_true, changes_unrelated = await changes_pairs(service, corpus)
        locomo_true, locomo_unrelated = await locomo_pairs(service, locomo)
        same, different = duplicate_pairs(service)
        model = service.embedder.name
    true = changes_true + locomo_true
    unrelated = changes_unrelated + locomo_unrelated
    defaults = cutoffs_for(model)
    in_use = {
        "semantic": defaults.semantic,
        "recall": defaults.recall,
        "duplicates": defaults.duplicates,
    }
    return {
        "benchmark": "similarity-calibration",
        "model": model,
        "question_answer": {
            "changes": {
                "true": describe(changes_true),
                "unrelated_best": describe(changes_unrelated),
            },
            "locomo": {
                "true": describe(locomo_true),
                "unrelated_best": describe(locomo_unrelated),
            },
        },
        "duplicates": {"same_fact": describe(same), "different_facts": describe(different)},
        "in_use": {
            name: {
                "cutoff": cutoff,
                "true_kept": share_at_or_above(same if name == "duplicates" else true, cutoff),
                "unrelated_passing": share_at_or_above(
                    different if name == "duplicates" else unrelated, cutoff
                ),
            }
            for name, cutoff in in_use.items()
        },
        "rules": CUTOFF_RULES,
        "proposed": proposals(
            [(changes_true, changes_unrelated), (locomo_true, locomo_unrelated)], same, different
        ),
        "grid": [
            {
                "cutoff": cutoff,
                "changes_true_kept": share_at_or_above(changes_true, cutoff),
                "changes_unrelated_passing": share_at_or_above(changes_unrelated, cutoff),
                "locomo_true_kept": share_at_or_above(locomo_true, cutoff),
                "locomo_unrelated_passing": share_at_or_above(locomo_unrelated, cutoff),
                "same_fact_kept": share_at_or_above(same, cutoff),
                "different_facts_passing": share_at_or_above(different, cutoff),
            }
            for cutoff in GRID
        ],
        "seconds_total": round(time.monotonic() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=retrieval_changes.DEFAULT_CORPUS)
    parser.add_argument("--locomo", type=Path, default=retrieval_locomo.DEFAULT_DATA)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="calibration-", ignore_cleanup_errors=True) as home:
        report = asyncio.run(run(args.corpus.resolve(), args.locomo.resolve(), Path(home)))
    print(json.dumps(report, indent=2))  # noqa: T201


if __name__ == "__main__":
    main()
