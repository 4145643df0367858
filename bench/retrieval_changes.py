"""Facts that change over time, on coding-session corpora: is the right version found first?

Takes a corpus folder in either of two shapes and imports it into a fresh embedded database
through the product's own import paths (SessionImporter, `import --claude-ai`, `import
--text`, which also link the memories that supersede others):
- the team's corpus (bench/changes_corpus/, the default): `projects/`, `notes/` and
  `questions.json` (`question`, `category`, `expect`: any one answers, `stale`);
- an outside author's corpus (../shared/bench/outside-corpus/): `claude-code/projects`,
  `claude-ai/conversations.json`, `notes/` and `queries.json` (`query`, `kind`, `expected`:
  all of them must be found, `must_not`; `negative` questions have no answer).

Each question is asked in its own project, as a user would through `POST /api/search`
(MemoryService), in every mode (hybrid, keyword, semantic), so hybrid can be compared with
the better of its two lists.

- answered@k: the top k hits hold the answer (team corpus: one hit holds one `expect`
  string; outside corpus: the top k together hold every `expected` string, case folded);
- stale@1: the first hit holds a stale string and not the answer; stale_first, stricter: the
  first hit that mentions the fact at all (holds an expected or a stale string) does;
per category and for all. Negative questions are asked of the prompt-recall hook instead
(what it would inject unasked, in the question's project): `negatives_injected` counts those
for which its confident part (memories shown in full) is not empty, `negatives_listed` those
given an index (candidates listed one line each). Positive questions are asked of it too,
from their project's folder (`recall_answered`: its text, either part, holds the answer;
`recall_answered_confident` and `recall_answered_index`: that part alone does) and from an
unrelated project's folder (`unrelated_injected`: its confident part is not empty and does
not answer; `unrelated_listed`: it is given an index). Tokens count the whole text.

Each search includes the memories of no project, as `POST /api/search` does by default;
`--project-only` keeps each search to its project alone. `--without-links` asks everything
again with every supersession link removed, so the difference is what stored links add.

`--misses FILE` writes the questions hybrid did not answer first, with its first three hits
(`search`), and those whose hook text does not hold the answer (`hook`: its text, the ids it
showed and listed, and hybrid's first ten with their similarity and the expected strings
each holds), for reading why (not for tuning to one corpus's sentences).

`--rerank PROVIDER` (cross-encoder, http, llm) puts a reranker over hybrid's first candidates
(server/service/rerank.py), with `--rerank-model PATH|NAME` (the cross-encoder's folder, or
the model an endpoint or the LLM is asked for) and `--rerank-url URL` (an http endpoint; the
llm provider uses CLAUDE_MEMORY_OLLAMA_URL's default unless `--llm-url` is given);
`--rerank-hooks` reranks the prompt hook's candidates too, and `--rerank-hook-min-score S`
lets the reranker's score decide what the hook injects. The report then says how many
hybrid searches the reranker ordered and how many it left in the fused order.

Usage: .venv/bin/python bench/retrieval_changes.py [--corpus DIR] [--without-links]
           [--project-only] [--misses FILE] [--rerank PROVIDER [--rerank-model M]
           [--rerank-url URL] [--llm-url URL] [--rerank-hooks [--rerank-hook-min-score S]]]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from server.core.config import Settings, load_settings  # noqa: E402
from server.core.models.memories import MemoryFilter  # noqa: E402
from server.core.models.search import SearchResult  # noqa: E402
from server.domain.context import INDEX_HEADING  # noqa: E402
from server.ingest.documents import import_claude_ai, import_text  # noqa: E402
from server.ingest.importer import ImportFilters, SessionImporter  # noqa: E402
from server.recall.hook import HookRecall, PromptAnswer  # noqa: E402
from server.service.memory import MemoryService  # noqa: E402
from server.service.runtime import open_service  # noqa: E402
from server.store.tx import transaction  # noqa: E402

DEFAULT_CORPUS = ROOT / "bench" / "changes_corpus"
MODES = ("hybrid", "keyword", "semantic")
TOP_K = 10


@dataclass(frozen=True, slots=True)
class Question:
    id: str
    project: str | None
    category: str
    text: str
    expect: tuple[str, ...]
    stale: tuple[str, ...]
    needs_all: bool  # every `expect` string must be found (outside corpus), or any one

    def answered_by(self, texts: Sequence[str]) -> bool:
        """Whether these (case-folded) texts together hold the answer."""
        if not self.expect:
            return False
        if self.needs_all:
            return all(any(s in text for text in texts) for s in self.expect)
        return any(s in text for s in self.expect for text in texts)

    def mentions(self, text: str) -> bool:
        return any(s in text for s in (*self.expect, *self.stale))


def load_questions(corpus: Path) -> list[Question]:
    if (corpus / "queries.json").exists():
        raw = json.loads((corpus / "queries.json").read_text(encoding="utf-8"))["queries"]
        return [
            Question(
                id=item["id"],
                project=item["project"],
                category=item["kind"],
                text=item["query"],
                expect=tuple(s.lower() for s in item["expected"]),
                stale=tuple(s.lower() for s in item.get("must_not", [])),
                needs_all=True,
            )
            for item in raw
        ]
    raw = json.loads((corpus / "questions.json").read_text(encoding="utf-8"))
    return [
        Question(
            id=item["id"],
            project=item["project"],
            category=item["category"],
            text=item["question"],
            expect=tuple(s.lower() for s in item["expect"]),
            stale=tuple(s.lower() for s in item.get("stale", [])),
            needs_all=False,
        )
        for item in raw
    ]


def judge(question: Question, contents: list[str]) -> dict[str, float]:
    """answered@1/@5/@10 and stale@1 of one ranked list of hit contents."""
    folded = [content.lower() for content in contents]
    first_on_topic = next((text for text in folded if question.mentions(text)), "")
    return {
        "answered@1": float(question.answered_by(folded[:1])),
        "answered@5": float(question.answered_by(folded[:5])),
        "answered@10": float(question.answered_by(folded[:10])),
        "stale@1": float(stale(question, folded[0] if folded else "")),
        "stale_first": float(stale(question, first_on_topic)),
    }


def stale(question: Question, text: str) -> bool:
    """The text holds a stale version and not the answer."""
    return any(s in text for s in question.stale) and not question.answered_by([text])


def summarise(rows: list[dict[str, float]]) -> dict[str, Any]:
    summary: dict[str, Any] = {"questions": len(rows)}
    for key in ("answered@1", "answered@5", "answered@10", "stale@1", "stale_first"):
        summary[key] = round(statistics.fmean(r[key] for r in rows), 3) if rows else None
    return summary


async def search(
    service: MemoryService, mode: str, question: Question, project_only: bool
) -> SearchResult:
    where = MemoryFilter(project=question.project, with_general=not project_only)
    if mode == "hybrid":
        return await service.search_hybrid(question.text, limit=TOP_K, where=where)
    if mode == "keyword":
        return await service.search_keyword(question.text, limit=TOP_K, where=where)
    return await service.search_semantic(question.text, limit=TOP_K, where=where)


async def ask_all(
    service: MemoryService,
    questions: list[Question],
    project_only: bool,
    misses: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Every mode's figures per category, and hybrid's latency. Hybrid's misses at rank 1
    (question, its first three hits) go to `misses` when one is given."""
    report: dict[str, Any] = {}
    hook_missed: list[dict[str, Any]] = []
    positive = [q for q in questions if q.category != "negative"]
    categories = sorted({q.category for q in positive})
    for mode in MODES:
        per_category: dict[str, list[dict[str, float]]] = {}
        latencies: list[float] = []
        reranked = skipped = 0
        for question in positive:
            started = time.perf_counter()
            result = await search(service, mode, question, project_only)
            latencies.append((time.perf_counter() - started) * 1000.0)
            reranked += result.reranked_by is not None
            skipped += result.rerank_skipped is not None
            scores = judge(question, [hit.content for hit in result.hits])
            if misses is not None and mode == "hybrid" and not scores["answered@1"]:
                misses.append(miss(question, result, scores))
            per_category.setdefault(question.category, []).append(scores)
            per_category.setdefault("all", []).append(scores)
        ordered = sorted(latencies)
        report[mode] = {
            **{name: summarise(per_category.get(name, [])) for name in (*categories, "all")},
            "latency_ms_p50": round(ordered[len(ordered) // 2], 2),
            "latency_ms_p95": round(ordered[max(int(len(ordered) * 0.95) - 1, 0)], 2),
        }
        if service.reranking.reranker is not None and mode == "hybrid":
            report[mode]["reranked"] = reranked
            report[mode]["rerank_skipped"] = skipped
    report["recall_hook"] = await ask_recall_hook(
        service, questions, None if misses is None else hook_missed
    )
    if misses is not None:
        misses.extend(hook_missed)
    return report


def miss(question: Question, result: SearchResult, scores: dict[str, float]) -> dict[str, Any]:
    """One question hybrid did not answer first: what it expected and what came first."""
    return {
        "id": question.id,
        "category": question.category,
        "question": question.text,
        "expect": question.expect,
        "stale": question.stale,
        "answered@5": scores["answered@5"],
        "stale@1": scores["stale@1"],
        "top": [
            {
                "id": hit.id,
                "created_at": hit.created_at.isoformat(),
                "score": round(hit.score, 3),
                "notes": [note for note in (hit.time_note, hit.version_note) if note],
                "content": hit.content[:300],
            }
            for hit in result.hits[:3]
        ],
    }


async def hook_miss(
    service: MemoryService, question: Question, answer: PromptAnswer
) -> dict[str, Any]:
    """One question the hook's text did not answer: what it showed and listed, and what
    hybrid search ranked first (which of the expected strings each hit holds)."""
    result = await search(service, "hybrid", question, project_only=False)
    return {
        "hook": True,
        "id": question.id,
        "category": question.category,
        "question": question.text,
        "expect": question.expect,
        "shown": answer.memory_ids,
        "listed": answer.listed_ids,
        "text": answer.markdown,
        "top": [
            {
                "id": hit.id,
                "similarity": round(hit.similarity or 0.0, 3),
                "superseded_by": hit.superseded_by,
                "holds": [s for s in question.expect if s in hit.content.lower()],
                "content": hit.content[:300],
            }
            for hit in result.hits[:10]
        ],
    }


def family(project: str) -> str:
    """Projects of one product (payrail, payrail-dashboard) are related, not unrelated."""
    return project.split("-")[0]


def hook_parts(answer: PromptAnswer) -> tuple[str, str]:
    """The hook's text as its confident part (the memories shown in full) and its index part
    (the candidates listed one line each beneath them), each lower-cased; "" for a part it
    does not have."""
    text = answer.markdown.lower()
    at = text.find(INDEX_HEADING.lower())
    if at < 0:
        return text, ""
    return (text[:at] if answer.memory_ids else ""), text[at:]


async def ask_recall_hook(
    service: MemoryService,
    questions: list[Question],
    misses: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """What the prompt-recall hook injects for each question, from its project's folder, and
    from the folder of an unrelated project (where nothing answers: what is shown in full
    there is noise). Its text is judged as a whole (either part) and by part: the confident
    part (memories shown in full) and the index (candidates listed one line each)."""
    # The hook as the environment's CLAUDE_MEMORY_* variables set it (e.g. RECALL_STATEMENTS),
    # with the reranker's settings the bench was given.
    rerank = {n: getattr(service.settings, n) for n in ("rerank_hooks", "rerank_hook_min_score")}
    recall = HookRecall(service, replace(load_settings(config_file=None), **rerank))
    # A project's folder: notes and chats of a project carry none, so they are skipped.
    folders = {p.project: p.project_path for p in await service.projects() if p.project_path}
    injected_negatives: list[str] = []
    listed_negatives: list[str] = []
    answered: dict[str, list[float]] = {"either": [], "confident": [], "index": []}
    astray: list[float] = []
    astray_listed: list[float] = []
    tokens: list[int] = []  # estimated (four characters each), of the prompts given any
    by_category: dict[str, dict[str, list[float]]] = {part: {} for part in answered}
    for position, question in enumerate(questions):
        cwd = folders.get(question.project or "", "")
        answer = await recall.prompt("", cwd, question.text)
        if answer.markdown:
            tokens.append(len(answer.markdown) // 4)
        confident, index = hook_parts(answer)
        if question.category == "negative":
            if confident:
                injected_negatives.append(question.id)
            if index:
                listed_negatives.append(question.id)
            continue
        answered["either"].append(float(question.answered_by([answer.markdown.lower()])))
        if misses is not None and not answered["either"][-1]:
            misses.append(await hook_miss(service, question, answer))
        answered["confident"].append(float(question.answered_by([confident])))
        answered["index"].append(float(question.answered_by([index])))
        for part, values in answered.items():
            by_category[part].setdefault(question.category, []).append(values[-1])
        others = sorted(p for p in folders if family(p) != family(question.project or ""))
        if others:
            away = folders[others[position % len(others)]]
            confident, index = hook_parts(await recall.prompt("", away, question.text))
            astray.append(float(bool(confident) and not question.answered_by([confident])))
            astray_listed.append(float(bool(index)))
    negatives = sum(1 for q in questions if q.category == "negative")

    def mean(values: list[float]) -> float | None:
        return round(statistics.fmean(values), 3) if values else None

    return {
        "threshold": recall.threshold,
        "index_lines": recall.index_lines,
        "recall_answered": mean(answered["either"]),
        "recall_answered_confident": mean(answered["confident"]),
        "recall_answered_index": mean(answered["index"]),
        "unrelated_injected": mean(astray),
        "unrelated_listed": mean(astray_listed),
        "negatives": negatives,
        "negatives_injected": len(injected_negatives),
        "negatives_injected_ids": injected_negatives,
        "negatives_listed": len(listed_negatives),
        "tokens_p50": round(statistics.median(tokens)) if tokens else 0,
        "tokens_p95": round(statistics.quantiles(tokens, n=20)[-1]) if len(tokens) > 1 else 0,
        **{
            f"recall_answered{'' if part == 'either' else '_' + part}_by_category": {
                name: mean(values) for name, values in sorted(by_category[part].items())
            }
            for part in answered
        },
    }


async def import_corpus(service: MemoryService, corpus: Path) -> None:
    sessions = corpus / "claude-code" / "projects"
    if not sessions.is_dir():
        sessions = corpus / "projects"
    summaries = [await SessionImporter(service, ImportFilters()).run(sessions)]
    chats = corpus / "claude-ai" / "conversations.json"
    if chats.exists():
        summaries.append(await import_claude_ai(service, chats))
    summaries.append(await import_text(service, [corpus / "notes"]))
    errors = [error for summary in summaries for error in summary.errors]
    if errors:
        raise SystemExit(f"import failed: {errors}")


async def run(
    corpus: Path,
    home: Path,
    without_links: bool,
    project_only: bool,
    misses: Path | None,
    rerank: Settings | None = None,
) -> dict[str, Any]:
    questions = load_questions(corpus)
    settings = Settings(claude_memory_home=home, cache_max_size=0)
    if rerank is not None:
        settings = replace(
            settings,
            **{
                name: getattr(rerank, name)
                for name in Settings.__dataclass_fields__
                if name.startswith("rerank_") or name == "ollama_url"
            },
        )
    started = time.monotonic()
    async with open_service(settings) as service:
        await import_corpus(service, corpus)
        async with transaction(service.pool) as conn:
            cur = await conn.execute(
                "SELECT count(*), count(supersedes) FROM memories WHERE deleted_at IS NULL"
            )
            memories, links = (int(v) for v in (await cur.fetchone() or (0, 0)))
        import_seconds = time.monotonic() - started
        async with service.pool.connection() as conn:  # as in retrieval_locomo.settle
            await conn.execute("ANALYZE memories")
        report: dict[str, Any] = {
            "benchmark": "retrieval-changes",
            "corpus": str(corpus.relative_to(ROOT) if corpus.is_relative_to(ROOT) else corpus),
            "memories": memories,
            "supersession_links": links,
            "questions": len(questions),
            "top_k": TOP_K,
            "project_only": project_only,
        }
        if rerank is not None:
            report["rerank"] = {
                "provider": rerank.rerank_provider,
                "model": rerank.rerank_model or None,
                "url": rerank.rerank_url or None,
                "depth": rerank.rerank_depth,
                "hooks": rerank.rerank_hooks,
                "hook_min_score": rerank.rerank_hook_min_score,
            }
        missed: list[dict[str, Any]] = []
        report["with_links"] = await ask_all(service, questions, project_only, missed)
        if misses is not None:
            misses.write_text(json.dumps(missed, indent=2, default=str), encoding="utf-8")
        if without_links:
            async with transaction(service.pool) as conn:
                await conn.execute(
                    "UPDATE memories SET supersedes = NULL WHERE supersedes IS NOT NULL"
                )
            report["without_links"] = await ask_all(service, questions, project_only)
    report["seconds_import"] = round(import_seconds, 1)
    report["seconds_total"] = round(time.monotonic() - started, 1)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--without-links", action="store_true")
    parser.add_argument(
        "--project-only",
        action="store_true",
        help="search each project alone (without the memories of no project)",
    )
    parser.add_argument(
        "--misses", type=Path, help="write hybrid's misses at rank 1 (with its top 3) as JSON here"
    )
    parser.add_argument("--rerank", choices=("cross-encoder", "http", "llm"))
    parser.add_argument("--rerank-model", default="")
    parser.add_argument("--rerank-url", default="")
    parser.add_argument("--llm-url", default="")
    parser.add_argument("--rerank-depth", type=int, default=Settings().rerank_depth)
    parser.add_argument("--rerank-hooks", action="store_true")
    parser.add_argument("--rerank-hook-min-score", type=float, default=None)
    args = parser.parse_args()
    rerank = None
    if args.rerank:
        rerank = Settings(
            rerank_provider=args.rerank,
            rerank_model=args.rerank_model,
            rerank_url=args.rerank_url,
            rerank_depth=args.rerank_depth,
            rerank_hooks=args.rerank_hooks,
            rerank_hook_min_score=args.rerank_hook_min_score,
            **({"ollama_url": args.llm_url} if args.llm_url else {}),
        )
        if args.rerank == "cross-encoder" and not args.rerank_model:
            parser.error("--rerank cross-encoder needs --rerank-model PATH")
        if args.rerank == "http" and not args.rerank_url:
            parser.error("--rerank http needs --rerank-url URL")
        if args.rerank_hook_min_score is not None and not args.rerank_hooks:
            parser.error("--rerank-hook-min-score needs --rerank-hooks")
    with tempfile.TemporaryDirectory(prefix="changes-bench-", ignore_cleanup_errors=True) as home:
        report = asyncio.run(
            run(
                args.corpus.resolve(),
                Path(home),
                args.without_links,
                args.project_only,
                args.misses,
                rerank,
            )
        )
    print(json.dumps(report, indent=2))  # noqa: T201


if __name__ == "__main__":
    main()
