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

`--hook` then asks every question of the prompt-recall hook through the product's own path
(`HookRecall.prompt` of server/recall/hook.py with the default settings, as `ask_recall_hook`
in bench/retrieval_changes.py does): each conversation's turns carry a project folder
(`/locomo/<conversation>`), and each question is asked from its conversation's folder and from
the next conversation's (unrelated: nothing there answers it, as in bench/recall_words.py).
Figures under `hook`, per split and per category:

- recall_answered: the injected text holds the text of one of the question's evidence turns
  (`speaker: text`, whitespace collapsed as the hook shows it): whole, or, when the hook cut
  that turn to fit its budget, a run of at least 80 characters of it (all of it when shorter);
  recall_answered_confident and recall_answered_index: that part of the text alone does (the
  memories shown in full; the candidates listed one line each beneath them);
  recall_answered_whole counts whole turns only, recall_all_evidence every evidence turn;
- unrelated_injected: the share of questions whose confident part is not empty when asked
  from the unrelated conversation's folder; unrelated_listed: given an index there;
- tokens per prompt p50/p95/mean, by the product's estimate (4 characters a token,
  server/core/models/receipts.py) of the injected text asked from the question's own folder,
  a prompt given nothing counting 0; given_anything: the share of those prompts given any text.

`--hook-held-out` asks the hook the held-out conversations' questions only (5-9: half the time;
the figures no setting was chosen on).

LoCoMo has no negative questions (every question has an answer in its conversation), so no
negatives figure is given; unrelated_injected is the nearest to it.

Usage: .venv/bin/python bench/retrieval_locomo.py [--data PATH] [--conversations N]
           [--provider local|openai] [--base-url URL] [--model NAME] [--api-key KEY] [--stand-in]
           [--hook [--hook-held-out]]
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

from server.core.config import Secret, Settings, load_settings  # noqa: E402
from server.core.models.memories import MemoryFilter, NewMemory  # noqa: E402
from server.core.models.receipts import estimated_tokens  # noqa: E402
from server.core.validation import content_hash  # noqa: E402
from server.domain.context import INDEX_HEADING, flat  # noqa: E402
from server.recall.hook import HookRecall, PromptAnswer  # noqa: E402
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
# The shortest run of a cut evidence turn that counts as holding it (--hook).
MIN_SHOWN_CHARS = 80


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
    service: MemoryService, name: str, turns: list[Turn], folder: str = ""
) -> tuple[dict[int, set[str]], int]:
    """Insert every turn (bypassing the write guard, so near-identical turns all stay).

    Each LoCoMo session is a session of raw turns, so every turn is embedded with the turns
    before it by the importers' own code (server/service/turn_context.py). Returns the dialog ids of
    each memory and how many supersession links the turns formed. `folder`, when given, is the
    turns' project folder, so the hook finds the conversation from it as from a session's cwd.
    """
    memories = [
        NewMemory(
            content=turn.content,
            content_hash=content_hash(f"{name}\n{turn.dialog_id}\n{turn.content}"),
            kind="raw",
            source="locomo",
            project=name,
            project_path=folder,
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


def folder_of(name: str) -> str:
    """The project folder a conversation's turns carry under --hook."""
    return f"/locomo/{name}"


def holds_turn(injected: str, turn: str) -> tuple[bool, bool]:
    """Whether `injected` holds `turn`'s text (see the module's docstring), and whether whole."""
    text = flat(turn)
    if text in injected:
        return True, True
    need = min(len(text), MIN_SHOWN_CHARS)
    # A cut turn shows one run of its text, so some `need` characters of it appear as they are.
    return any(text[i : i + need] in injected for i in range(len(text) - need + 1)), False


def percentile(values: list[int], share: float) -> int:
    ordered = sorted(values)
    return ordered[max(int(len(ordered) * share) - 1, 0)]


def summarise_hook(rows: list[dict[str, float]]) -> dict[str, Any]:
    tokens = [int(r["tokens"]) for r in rows]
    summary: dict[str, Any] = {"questions": len(rows)}
    for key in (
        "recall_answered",
        "recall_answered_confident",
        "recall_answered_index",
        "recall_answered_whole",
        "recall_all_evidence",
        "unrelated_injected",
        "unrelated_listed",
        "given_anything",
    ):
        summary[key] = round(statistics.fmean(r[key] for r in rows), 3) if rows else None
    if tokens:
        summary["tokens_per_prompt"] = {
            "p50": percentile(tokens, 0.5),
            "p95": percentile(tokens, 0.95),
            "mean": round(statistics.fmean(tokens), 1),
        }
        away = [int(r["unrelated_tokens"]) for r in rows]
        summary["unrelated_tokens_per_prompt"] = {
            "p50": percentile(away, 0.5),
            "p95": percentile(away, 0.95),
            "mean": round(statistics.fmean(away), 1),
        }
    return summary


def parts(answer: PromptAnswer) -> tuple[str, str]:
    """The hook's text as its confident part (memories shown in full) and its index part
    (candidates listed one line each); "" for a part it does not have."""
    at = answer.markdown.find(INDEX_HEADING)
    if at < 0:
        return answer.markdown, ""
    return (answer.markdown[:at] if answer.memory_ids else ""), answer.markdown[at:]


async def ask_hook(
    service: MemoryService,
    conversations: list[tuple[str, list[Turn], list[Question]]],
    held_out_only: bool = False,
) -> dict[str, Any]:
    """Every question asked of the prompt-recall hook from its conversation's folder and from
    the next conversation's, as `ask_recall_hook` in bench/retrieval_changes.py asks it (the
    held-out conversations' only, with `held_out_only`)."""
    # The hook as the environment's CLAUDE_MEMORY_* variables set it (e.g. RECALL_STATEMENTS).
    recall = HookRecall(service, load_settings(config_file=None))
    names = [name for name, _, _ in conversations]
    rows: dict[str, list[dict[str, float]]] = {}
    per_category: dict[str, dict[str, list[dict[str, float]]]] = {}
    for index, (name, turns, questions) in enumerate(conversations):
        split = "tuning" if index < 5 else "held_out"
        if held_out_only and split == "tuning":
            continue
        content = {turn.dialog_id: turn.content for turn in turns}
        other = folder_of(names[(index + 1) % len(names)]) if len(names) > 1 else ""
        for question in questions:
            answer = await recall.prompt("", folder_of(name), question.text)
            own = answer.markdown
            confident, index = parts(answer)
            evidence = [content[d] for d in sorted(question.evidence) if d in content]
            held = [holds_turn(own, turn) for turn in evidence]
            away = await recall.prompt("", other, question.text) if other else None
            away_confident, away_index = parts(away) if away is not None else ("", "")
            row = {
                "recall_answered": float(any(found for found, _ in held)),
                "recall_answered_confident": float(
                    any(holds_turn(confident, turn)[0] for turn in evidence)
                ),
                "recall_answered_index": float(
                    any(holds_turn(index, turn)[0] for turn in evidence)
                ),
                "recall_answered_whole": float(any(whole for _, whole in held)),
                "recall_all_evidence": float(bool(held) and all(found for found, _ in held)),
                "unrelated_injected": float(bool(away_confident)),
                "unrelated_listed": float(bool(away_index)),
                "given_anything": float(bool(own)),
                "tokens": float(estimated_tokens(len(own))),
                "unrelated_tokens": float(
                    estimated_tokens(len(away.markdown) if away is not None else 0)
                ),
            }
            for bucket in (split, "all"):
                rows.setdefault(bucket, []).append(row)
                per_category.setdefault(bucket, {}).setdefault(
                    CATEGORIES[question.category], []
                ).append(row)
    return {
        "threshold": recall.threshold,
        "max_hits": recall.max_hits,
        "max_chars": recall.max_chars,
        "prompt_tokens": recall.prompt_tokens,
        "negatives": "none: every LoCoMo question has an answer in its conversation",
        "splits": {
            key: summarise_hook(rows[key]) for key in ("tuning", "held_out", "all") if key in rows
        },
        "categories": {
            bucket: {category: summarise_hook(r) for category, r in sorted(names.items())}
            for bucket, names in per_category.items()
        },
    }


async def run(
    data: Path,
    conversations_limit: int | None,
    home: Path,
    embedding: dict[str, Any],
    hook: bool = False,
    hook_held_out: bool = False,
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
            folder = folder_of(name) if hook else ""
            dialog_ids, links = await store_turns(service, name, turns, folder)
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
        hook_report = await ask_hook(service, conversations, hook_held_out) if hook else None
        hook_seconds = time.monotonic() - load_started - query_seconds
    splits = {
        bucket: {
            mode: summarise(rows, latencies.get(bucket, {}).get(mode, []))
            for mode, rows in modes.items()
        }
        for bucket, modes in per_split.items()
    }
    report: dict[str, Any] = {
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
    if hook_report is not None:
        report["hook"] = hook_report
        report["seconds_hook"] = round(hook_seconds, 1)
    return report


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
    parser.add_argument(
        "--hook",
        action="store_true",
        help="also ask every question of the prompt-recall hook (its figures under `hook`)",
    )
    parser.add_argument(
        "--hook-held-out",
        action="store_true",
        help="with --hook: ask the hook the held-out conversations' questions only (5-9)",
    )
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        embedding = embedding_settings(args, stack)
        home = stack.enter_context(
            tempfile.TemporaryDirectory(prefix="locomo-bench-", ignore_cleanup_errors=True)
        )
        report = asyncio.run(
            run(
                args.data,
                args.conversations,
                Path(home),
                embedding,
                hook=args.hook,
                hook_held_out=args.hook_held_out,
            )
        )
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
