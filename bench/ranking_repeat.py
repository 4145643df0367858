"""Same data, same question, same order? Imports a corpus into a fresh store and writes every
question's ranked lists (every mode) and the hook's text, so two runs can be compared.

    .venv/bin/python bench/ranking_repeat.py dump [--corpus DIR] OUT.json
    .venv/bin/python bench/ranking_repeat.py diff A.json B.json

`dump` imports the corpus as bench/retrieval_changes.py does (fresh embedded database, the
product's import paths, ANALYZE) and records, per question and mode, the top 10 as
content fingerprints with their scores, plus the stored memories (fingerprint, date, kind,
the fingerprint of the memory each supersedes). `diff` names the questions whose lists differ
and what differs in the stored data, and prints both runs' answered@1 and stale@1 per mode.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import re
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.retrieval_changes import (  # noqa: E402
    DEFAULT_CORPUS,
    MODES,
    import_corpus,
    judge,
    load_questions,
    search,
)
from server.core.config import Settings  # noqa: E402
from server.ingest.documents import import_claude_ai, import_text  # noqa: E402
from server.ingest.importer import ImportFilters, SessionImporter  # noqa: E402
from server.recall.hook import HookRecall  # noqa: E402
from server.service.runtime import open_service  # noqa: E402
from server.store.tx import transaction  # noqa: E402


def fingerprint(content: str) -> str:
    return hashlib.sha1(content.encode()).hexdigest()[:10]


async def import_reversed(service: Any, corpus: Path, home: Path) -> None:
    """The corpus in the opposite order: notes first (last file first), then the chats (last
    conversation first), then the sessions (last file first)."""
    for note in sorted((corpus / "notes").rglob("*.md"), reverse=True):
        await import_text(service, [note])
    chats = corpus / "claude-ai" / "conversations.json"
    if chats.exists():
        reversed_chats = home / "conversations.json"
        reversed_chats.write_text(
            json.dumps(list(reversed(json.loads(chats.read_text(encoding="utf-8"))))),
            encoding="utf-8",
        )
        await import_claude_ai(service, reversed_chats)
    sessions = corpus / "claude-code" / "projects"
    if not sessions.is_dir():
        sessions = corpus / "projects"
    importer = SessionImporter(service, ImportFilters())
    await importer.run_files(list(reversed(importer.agent.discover(sessions))))


async def dump(corpus: Path, home: Path, reverse: bool) -> dict[str, Any]:
    questions = load_questions(corpus)
    settings = Settings(claude_memory_home=home / "store", cache_max_size=0)
    async with open_service(settings) as service:
        if reverse:
            await import_reversed(service, corpus, home)
        else:
            await import_corpus(service, corpus)
        async with service.pool.connection() as conn:
            await conn.execute("ANALYZE memories")
        async with transaction(service.pool) as conn:
            cur = await conn.execute(
                "SELECT m.content, m.created_at, m.kind, s.content"
                " FROM memories m LEFT JOIN memories s ON s.id = m.supersedes"
                " WHERE m.deleted_at IS NULL"
            )
            stored = {
                fingerprint(row[0]): [row[1].isoformat(), row[2], row[3] and fingerprint(row[3])]
                for row in await cur.fetchall()
            }
        lists: dict[str, Any] = {}
        recall = HookRecall(service, Settings())
        folders = {p.project: p.project_path for p in await service.projects() if p.project_path}
        for question in questions:
            entry: dict[str, Any] = {"category": question.category}
            for mode in MODES:
                result = await search(service, mode, question, False)
                entry[mode] = [[fingerprint(h.content), h.score] for h in result.hits]
                entry[mode + "_judged"] = judge(question, [h.content for h in result.hits])
            cwd = folders.get(question.project or "", "")
            text = (await recall.prompt("", cwd, question.text)).markdown
            # Ids follow the import order: the text is compared without them.
            entry["hook"] = fingerprint(re.sub(r"(#|\bid:? ?|memory )\d+", r"\1N", text))
            lists[question.id] = entry
    return {"corpus": str(corpus), "stored": stored, "lists": lists}


def figures(run: dict[str, Any], mode: str) -> dict[str, float]:
    rows = [e[mode + "_judged"] for e in run["lists"].values() if e["category"] != "negative"]
    current = [e[mode + "_judged"] for e in run["lists"].values() if e["category"] == "current"]
    return {
        "answered@1": round(statistics.fmean(r["answered@1"] for r in rows), 3),
        "current@1": round(statistics.fmean(r["answered@1"] for r in current), 3)
        if current
        else 0.0,
        "current_stale@1": sum(int(r["stale@1"]) for r in current),
    }


def diff(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    only_a = sorted(set(a["stored"]) - set(b["stored"]))
    only_b = sorted(set(b["stored"]) - set(a["stored"]))
    changed = sorted(
        k for k in set(a["stored"]) & set(b["stored"]) if a["stored"][k] != b["stored"][k]
    )
    report: dict[str, Any] = {
        "stored_only_a": only_a,
        "stored_only_b": only_b,
        "stored_changed": {k: [a["stored"][k], b["stored"][k]] for k in changed},
    }
    for mode in MODES:
        differing = {}
        for qid, entry in a["lists"].items():
            other = b["lists"][qid]
            ids_a = [f for f, _ in entry[mode]] + [""] * 10
            ids_b = [f for f, _ in other[mode]] + [""] * 10
            if ids_a != ids_b:
                first = next(i for i, (x, y) in enumerate(zip(ids_a, ids_b, strict=True)) if x != y)
                differing[qid] = {
                    "from_rank": first,
                    "a": entry[mode][first : first + 3],
                    "b": other[mode][first : first + 3],
                }
        report[mode] = {
            "differing": len(differing),
            "questions": differing,
            "a": figures(a, mode),
            "b": figures(b, mode),
        }
    report["hook_differing"] = [
        q for q in a["lists"] if a["lists"][q]["hook"] != b["lists"][q]["hook"]
    ]
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("dump")
    one.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    one.add_argument("--reverse", action="store_true", help="import in the opposite order")
    one.add_argument("out", type=Path)
    two = sub.add_parser("diff")
    two.add_argument("a", type=Path)
    two.add_argument("b", type=Path)
    args = parser.parse_args()
    if args.command == "dump":
        with tempfile.TemporaryDirectory(
            prefix="repeat-bench-", ignore_cleanup_errors=True
        ) as home:
            result = asyncio.run(dump(args.corpus.resolve(), Path(home), args.reverse))
        args.out.write_text(json.dumps(result, indent=1, default=str), encoding="utf-8")
    else:
        a = json.loads(args.a.read_text(encoding="utf-8"))
        b = json.loads(args.b.read_text(encoding="utf-8"))
        print(json.dumps(diff(a, b), indent=2))  # noqa: T201


if __name__ == "__main__":
    main()
