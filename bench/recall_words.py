"""Prompt recall's cut-offs, measured: how similar a hit must be, and how many of the prompt's
words it must hold when it is less similar.

The recall hook injects unasked, so it keeps a hit only when the hit is close enough to the
prompt. Similarity alone does not carry across writers: on sessions written in another voice
than the questions, answers score lower on the model while still holding the question's rare
words, and a near hit that holds none of the prompt's words is most often noise. This script
asks every question of a corpus twice, as the hook would (hybrid search, the question's project
with general memories), once in its own project and once in an unrelated one (where nothing
answers), and keeps for each hit its similarity, the share of the question's rarity-weighted
words it holds (`MemoryService.term_shares`) and whether it answers. Then, for each rule of a
grid, a hit passes at the rule's `threshold` or more on similarity alone, or at `floor` or more
when it holds the share of the words the rule asks at its similarity (`at_floor` at the floor,
falling in a straight line to none at the threshold, as `server/recall/cutoff.words_needed`;
a `step` rule asks `at_floor` all the way up, as the session 26 rule did; a question whose words
another project holds far better, `server/recall/cutoff.asked_elsewhere`, passes on similarity
alone, as in the hook); the first three hits that pass are what the hook would inject:

- `answered`: the share of questions whose injected hits hold an answer;
- `unrelated_injected`: the share of questions that, asked in an unrelated project, get any
  hit injected that does not answer them (what the rule lets through when nothing in scope
  answers);
- `negatives_injected`: for a corpus with negative questions (nothing answers them, asked in
  their own project), how many get anything injected.

Corpora: the team's changes corpus (bench/changes_corpus, the default) and any corpus in the
same layout (`--corpus`, e.g. ../shared/bench/outside-corpus); LoCoMo (`--locomo`, split into
the tuning conversations 0-4 and the held-out 5-9 as bench/retrieval_locomo.py does; the
unrelated project is the next conversation). Choose a rule on the team corpus and LoCoMo's
tuning split; read the others after. The product's own path (the real hook, its version rules
and text budget) is `recall_hook` in bench/retrieval_changes.py.

Usage: .venv/bin/python bench/recall_words.py [--corpus PATH]... [--locomo PATH]
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
sys.path.insert(0, str(ROOT / "bench"))

import retrieval_changes  # noqa: E402
import retrieval_locomo  # noqa: E402
from retrieval_changes import family  # noqa: E402

from server.core.config import Settings  # noqa: E402
from server.core.models.memories import MemoryFilter  # noqa: E402
from server.recall.cutoff import (  # noqa: E402
    RECALL_WORDS_AT_FLOOR,
    UNKNOWN_NAME_THRESHOLD,
    asked_elsewhere,
    words_needed,
)
from server.service.cutoffs import cutoffs_for  # noqa: E402
from server.service.memory import MemoryService  # noqa: E402
from server.service.runtime import open_service  # noqa: E402

CANDIDATES = 12
INJECTED = 3  # CLAUDE_MEMORY_RECALL_MAX_HITS
FLOORS = (0.3, 0.35)
THRESHOLDS = (0.45, 0.5, 0.55, 0.6)
AT_FLOOR = (0.5, 0.6, 0.7, 0.8, 1.0)
TUNING_CONVERSATIONS = 5
# The hook's search cuts its semantic list at its floor; the grid's lowest floor here.
SEARCH_CUT = min(FLOORS)


@dataclass(frozen=True, slots=True)
class Rule:
    threshold: float
    floor: float
    at_floor: float
    step: bool = False

    def needed(self, similarity: float) -> float | None:
        """The words' share a hit this similar must hold; None when nothing lets it pass."""
        if self.step:
            if similarity >= self.threshold:
                return 0.0
            return self.at_floor if similarity >= self.floor else None
        return words_needed(similarity, self.threshold, self.floor, self.at_floor)


_MODEL = cutoffs_for(Settings().embedding_model)
# The rule in the product (server/service/cutoffs.py, server/recall/hook.py).
KEPT = Rule(_MODEL.recall, _MODEL.recall_with_words, RECALL_WORDS_AT_FLOOR)
# Before session 26: similarity alone at 0.45; session 26: 0.45, or 0.35 with half the words.
SIMILARITY_ONLY = Rule(0.45, 0.45, 0.0)
SESSION_26 = Rule(0.45, 0.35, 0.5, step=True)


@dataclass(frozen=True, slots=True)
class Hit:
    similarity: float
    share: float
    answers: bool


@dataclass(frozen=True, slots=True)
class Candidates:
    """The hook's candidates for a question in one project, and whether the question's words
    belong to another project there (server/recall/cutoff.asked_elsewhere)."""

    hits: list[Hit]
    elsewhere: bool = False


@dataclass(frozen=True, slots=True)
class Asked:
    """One question's candidates in its own project and in an unrelated one."""

    negative: bool
    category: str
    unknown: bool  # the question names something no memory holds: the hook asks for more
    own: Candidates
    unrelated: Candidates


async def hits_for(
    service: MemoryService, text: str, project: str | None, answers: Any
) -> Candidates:
    """The hook's candidates for `text` in `project`, each with its words' share."""
    # As the hook searches: the semantic list cut at the similarity threshold, so a hit below
    # it is one the keyword list found.
    result = await service.search_hybrid(
        text,
        limit=CANDIDATES,
        min_similarity=SEARCH_CUT,
        where=MemoryFilter(project=project, with_general=True),
    )
    evidence = await service.recall_evidence(text, [hit.id for hit in result.hits], project)
    shares = evidence.term_shares
    return Candidates(
        [Hit(hit.similarity or 0.0, shares.get(hit.id, 0.0), answers(hit)) for hit in result.hits],
        asked_elsewhere(evidence.words_here, evidence.words_elsewhere),
    )


def injected(candidates: Candidates, rule: Rule, unknown: bool) -> list[Hit]:
    """What the hook would inject under the rule (for a question naming something unknown,
    only what reaches UNKNOWN_NAME_THRESHOLD; for one whose words belong to another project,
    only what reaches the threshold; as the hook does)."""
    hits = candidates.hits
    if unknown:
        strict = max(rule.threshold, UNKNOWN_NAME_THRESHOLD)
        return [hit for hit in hits if hit.similarity >= strict][:INJECTED]
    if candidates.elsewhere:
        return [hit for hit in hits if hit.similarity >= rule.threshold][:INJECTED]
    passing = []
    for hit in hits:
        needed = rule.needed(hit.similarity)
        if needed is not None and hit.share >= needed:
            passing.append(hit)
    return passing[:INJECTED]


def figures(asked: list[Asked], rule: Rule) -> dict[str, Any]:
    positive = [a for a in asked if not a.negative]
    negative = [a for a in asked if a.negative]
    answered = [any(h.answers for h in injected(a.own, rule, a.unknown)) for a in positive]
    astray = [any(not h.answers for h in injected(a.unrelated, rule, a.unknown)) for a in positive]
    report: dict[str, Any] = {
        "answered": round(statistics.fmean(answered), 3),
        "unrelated_injected": round(statistics.fmean(astray), 3),
    }
    if negative:
        report["negatives_injected"] = sum(bool(injected(a.own, rule, a.unknown)) for a in negative)
        report["negatives"] = len(negative)
    return report


def grid(asked: list[Asked]) -> dict[str, Any]:
    categories = sorted({a.category for a in asked if not a.negative})
    named = {"similarity_only": SIMILARITY_ONLY, "session_26": SESSION_26, "kept": KEPT}
    return {
        "questions": sum(1 for a in asked if not a.negative),
        **{name: figures(asked, rule) for name, rule in named.items()},
        "by_category": {
            category: {
                "questions": len(chosen),
                **{name: figures(chosen, rule) for name, rule in named.items()},
            }
            for category in categories
            for chosen in [[a for a in asked if a.category == category]]
        },
        "rules": [
            {"floor": floor, "threshold": threshold, "at_floor": share}
            | figures(asked, Rule(threshold, floor, share))
            for floor in FLOORS
            for threshold in THRESHOLDS
            for share in AT_FLOOR
        ],
    }


async def changes_corpus(corpus: Path, home: Path) -> list[Asked]:
    questions = retrieval_changes.load_questions(corpus)
    async with open_service(Settings(claude_memory_home=home, cache_max_size=0)) as service:
        await retrieval_changes.import_corpus(service, corpus)
        async with service.pool.connection() as conn:
            await conn.execute("ANALYZE memories")
        projects = sorted({p.project for p in await service.projects() if p.project})
        asked: list[Asked] = []
        for position, question in enumerate(questions):
            # A project of another product (payrail and payrail-dashboard are one).
            others = [p for p in projects if family(p) != family(question.project or "")]
            other = others[position % len(others)] if others else None

            def answers(hit: Any, question: Any = question) -> bool:
                return bool(question.answered_by([hit.content.lower()]))

            own = await hits_for(service, question.text, question.project or None, answers)
            away = (
                await hits_for(service, question.text, other, answers) if other else Candidates([])
            )
            unknown = bool(await service.unknown_names(question.text))
            negative = question.category == "negative"
            asked.append(Asked(negative, question.category, unknown, own, away))
    return asked


async def locomo(data: Path, home: Path) -> tuple[list[Asked], list[Asked]]:
    """LoCoMo's tuning and held-out questions, each asked in its conversation and the next."""
    conversations = retrieval_locomo.load(data, None)
    tuning: list[Asked] = []
    held_out: list[Asked] = []
    async with open_service(Settings(claude_memory_home=home, cache_max_size=0)) as service:
        ids_of: dict[str, dict[str, int]] = {}
        for name, turns, _ in conversations:
            dialog_ids, _ = await retrieval_locomo.store_turns(service, name, turns)
            ids_of[name] = {d: memory_id for memory_id, ds in dialog_ids.items() for d in ds}
        await retrieval_locomo.settle(service)
        names = [name for name, _, _ in conversations]
        for position, (name, _, questions) in enumerate(conversations):
            other = names[(position + 1) % len(names)]
            for question in questions:
                evidence = {ids_of[name][d] for d in question.evidence if d in ids_of[name]}
                if not evidence:
                    continue

                def answers(hit: Any, evidence: set[int] = evidence) -> bool:
                    return hit.id in evidence

                own = await hits_for(service, question.text, name, answers)
                away = await hits_for(service, question.text, other, answers)
                unknown = bool(await service.unknown_names(question.text))
                category = retrieval_locomo.CATEGORIES[question.category]
                (tuning if position < TUNING_CONVERSATIONS else held_out).append(
                    Asked(False, category, unknown, own, away)
                )
    return tuning, held_out


async def run(corpora: list[Path], locomo_data: Path | None) -> dict[str, Any]:
    report: dict[str, Any] = {
        "benchmark": "recall-words",
        "kept": {"threshold": KEPT.threshold, "floor": KEPT.floor, "at_floor": KEPT.at_floor},
    }
    started = time.monotonic()
    for corpus in corpora:
        with tempfile.TemporaryDirectory() as home:
            asked = await changes_corpus(corpus, Path(home))
        name = str(corpus.relative_to(ROOT) if corpus.is_relative_to(ROOT) else corpus)
        report[name] = grid(asked)
        print(f"{name}: {len(asked)} questions", file=sys.stderr)  # noqa: T201
    if locomo_data is not None:
        with tempfile.TemporaryDirectory() as home:
            tuning, held_out = await locomo(locomo_data, Path(home))
        report["locomo_tuning"] = grid(tuning)
        report["locomo_held_out"] = grid(held_out)
    report["seconds"] = round(time.monotonic() - started, 1)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, action="append")
    parser.add_argument("--locomo", type=Path)
    args = parser.parse_args()
    corpora = [path.resolve() for path in (args.corpus or [ROOT / "bench" / "changes_corpus"])]
    print(json.dumps(asyncio.run(run(corpora, args.locomo)), indent=2))  # noqa: T201


if __name__ == "__main__":
    main()
