"""Does `claude-memory adapt` help search? Before and after on one corpus; prints one JSON object.

Imports a corpus into a fresh embedded store as a user would, measures search, runs the adapt
job on the store (its pairs come from what was imported: sessions, notes, chats; never the
questions), which re-embeds every memory, opens the store again with the adapted model as the
server would, and measures again. Reports the pairs, the training and re-embed time, and the
training time scaled to 10,000 memories (the pairs are capped at `--max-pairs`, so it grows
with the store only until the cap).

- `--corpus DIR`: a corpus in either shape bench/retrieval_changes.py reads (the team's
  changes corpus by default, or ../shared/bench/outside-corpus); its figures per category
  (answered@1/@5/@10, stale on top) for hybrid and semantic search, and the hook's
  (`recall_answered`, negatives and unrelated-project injections);
- `--locomo FILE`: LoCoMo's held-out conversations 5-9 only, their dialogue as turns
  (bench/retrieval_locomo.py's store), recall@k per category for hybrid and semantic.

Usage: .venv/bin/python bench/adapt_quality.py [--corpus DIR | --locomo FILE] [--epochs N]
           [--rate R] [--max-pairs N] [--freeze-layers N] [--batch-size N]
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import retrieval_changes as changes  # noqa: E402
import retrieval_locomo as locomo  # noqa: E402

from server.core.config import Settings  # noqa: E402
from server.domain.adaptation import AdaptOptions  # noqa: E402
from server.jobs.adapt import adapt  # noqa: E402
from server.service.memory import MemoryService  # noqa: E402
from server.service.runtime import open_service  # noqa: E402

HELD_OUT = range(5, 10)  # LoCoMo conversations never used for tuning search


def _trim(report: dict[str, Any]) -> dict[str, Any]:
    """The figures compared: hybrid and semantic per category, and the hook's."""
    return {mode: report[mode] for mode in ("hybrid", "semantic", "recall_hook") if mode in report}


async def measure_corpus(service: MemoryService, questions: list[changes.Question]) -> Any:
    async with service.pool.connection() as conn:
        await conn.execute("ANALYZE memories")
    return _trim(await changes.ask_all(service, questions, project_only=False))


async def measure_locomo(
    service: MemoryService,
    conversations: list[tuple[str, list[locomo.Turn], list[locomo.Question]]],
    stored: list[dict[int, set[str]]],
) -> dict[str, Any]:
    await locomo.settle(service)
    rows: dict[str, dict[str, list[dict[str, float]]]] = {}
    for (_, _, questions), dialog_ids in zip(conversations, stored, strict=True):
        for question in questions:
            for mode in ("hybrid", "semantic"):
                ids = await locomo.search(service, mode, question)
                found = [dialog_ids.get(i, set()) for i in ids]
                scores = locomo.score_question(found, question.evidence)
                for bucket in (locomo.CATEGORIES[question.category], "all"):
                    rows.setdefault(mode, {}).setdefault(bucket, []).append(scores)
    return {
        mode: {name: locomo.summarise(found, []) for name, found in sorted(by.items())}
        for mode, by in rows.items()
    }


async def run(args: argparse.Namespace, home: Path) -> dict[str, Any]:
    settings = Settings(claude_memory_home=home, cache_max_size=0)
    options = AdaptOptions(
        epochs=args.epochs,
        rate=args.rate,
        batch_size=args.batch_size,
        max_pairs=args.max_pairs,
        min_pairs=2,
        freeze_layers=args.freeze_layers,
    )
    report: dict[str, Any] = {"benchmark": "adapt-quality", "options": vars(options_json(args))}
    async with open_service(settings) as service:
        started = time.monotonic()
        if args.locomo:
            everything = locomo.load(args.locomo, None)
            conversations = [everything[i] for i in HELD_OUT if i < len(everything)]
            stored = [(await locomo.store_turns(service, n, t))[0] for n, t, _ in conversations]
            report["corpus"] = f"locomo conversations {HELD_OUT.start}-{HELD_OUT.stop - 1}"
            before = await measure_locomo(service, conversations, stored)
        else:
            questions = changes.load_questions(args.corpus)
            await changes.import_corpus(service, args.corpus)
            report["corpus"] = str(args.corpus)
            before = await measure_corpus(service, questions)
        report["seconds_import"] = round(time.monotonic() - started, 1)
        async with service.pool.connection() as conn:
            cur = await conn.execute("SELECT count(*) FROM memories WHERE deleted_at IS NULL")
            memories = int((await cur.fetchone() or (0,))[0])
        adapted = await adapt(settings, service.pool, options, training_progress=log_step)
    async with open_service(settings) as service:  # as the server starts: the adapted model
        report["model_after"] = service.embedder.name
        if args.locomo:
            after = await measure_locomo(service, conversations, stored)
        else:
            after = await measure_corpus(service, questions)
    scale = 10_000 / max(memories, 1)
    pairs_at_10k = min(args.max_pairs, round(adapted["pairs"] * scale))
    report.update(
        memories=memories,
        adapt=adapted,
        seconds_training_at_10k_memories=round(
            adapted["seconds_training"] * pairs_at_10k / max(adapted["pairs"], 1), 1
        ),
        seconds_reembed_at_10k_memories=round(adapted["seconds_reembed"] * scale, 1),
        before=before,
        after=after,
        delta=delta(before, after),
    )
    return report


def log_step(done: int, total: int) -> None:
    if done % 10 == 0 or done == total:
        print(f"training step {done}/{total} at {time.strftime('%H:%M:%S')}", file=sys.stderr)  # noqa: T201


def options_json(args: argparse.Namespace) -> argparse.Namespace:
    return argparse.Namespace(
        epochs=args.epochs,
        rate=args.rate,
        batch_size=args.batch_size,
        max_pairs=args.max_pairs,
        freeze_layers=args.freeze_layers,
    )


def delta(before: Any, after: Any) -> Any:
    """after - before for every number both hold, same shape."""
    if isinstance(before, dict) and isinstance(after, dict):
        return {k: delta(before[k], after[k]) for k in before if k in after}
    if isinstance(before, int | float) and isinstance(after, int | float):
        return round(after - before, 3)
    return None


def main() -> None:
    defaults = AdaptOptions()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--corpus", type=Path, default=changes.DEFAULT_CORPUS)
    source.add_argument("--locomo", type=Path, help="LoCoMo's locomo10.json")
    parser.add_argument("--epochs", type=int, default=defaults.epochs)
    parser.add_argument("--rate", type=float, default=defaults.rate)
    parser.add_argument("--batch-size", type=int, default=defaults.batch_size)
    parser.add_argument("--max-pairs", type=int, default=defaults.max_pairs)
    parser.add_argument("--freeze-layers", type=int, default=defaults.freeze_layers)
    args = parser.parse_args()
    args.corpus = args.corpus.resolve()
    with tempfile.TemporaryDirectory(prefix="adapt-bench-", ignore_cleanup_errors=True) as home:
        report = asyncio.run(run(args, Path(home)))
    print(json.dumps(report, indent=2))  # noqa: T201


if __name__ == "__main__":
    main()
