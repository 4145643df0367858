"""Memories checked against the code (issue #37): does the check tell stale facts from live ones?

Builds a git repository in a temporary folder with a scripted, seeded history (48 commits, one
a day: versions bumped in go.mod and package.json, settings changed in .env.example, handler
files renamed, functions renamed, docs deleted, and most commits touching nothing a fact is
about), and after each commit, now and then, a Claude Code session whose assistant states one
or two facts true at that commit ("`HTTP_TIMEOUT=30s` in `.env.example`", "Call `chargeCard()`
from src/handlers/payments.ts ...") or a fact about the team that names no code. The sessions
are imported into a fresh embedded database with the product's importer; every stored fact is
then checked at HEAD with server/worktree/tree_check.py, its anchors found by
server/domain/anchors.py, in hook-sized calls of ten memories.

The script keeps its own model of the tree, so it knows which facts still hold at HEAD.
Reported, as JSON:
- stale_detected: of the facts that no longer hold, the share marked drifted or orphaned
  (target >= 0.90);
- fresh_kept: of the facts that still hold, the share marked fresh (target >= 0.97; a false
  "drifted" costs trust); also the share marked drifted although it holds;
- no_anchor: the share of facts with no anchor at all (the team facts, by design, and any
  code fact the rules miss);
- latency per memory and per call of ten (p50 / p95, ms), files read from a warm page cache;
- the prompt-recall hook's server side (search, check, format) for 40 prompts, each asked
  with the session's folder in the tree and in a folder not on this machine: p50 / p95 of
  both and `added_p95`, what the check adds (target <= 15 ms for ten memories); and
  `in_hook_process`: what the hook client does with the check items the second answer
  carries (a fresh checker per call, as each hook process has), plus
  `hook_process_imports_ms`, its one-off import of the check (`python -I -S`);
- the shared fixtures and the outside corpus imported too, checked against a folder that is
  not their tree: every memory must come out unchecked (`outside_unchecked` = 1.0).

    .venv/bin/python bench/verified_recall.py [--seed 7] [--commits 48] [--files 5000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
sys.path.insert(0, str(ROOT))

from server.core.config import Settings  # noqa: E402
from server.core.models.memories import MemoryFilter  # noqa: E402
from server.domain.anchors import anchors_of  # noqa: E402
from server.ingest.documents import import_claude_ai, import_text  # noqa: E402
from server.ingest.importer import ImportFilters, SessionImporter  # noqa: E402
from server.recall.hook import HookRecall  # noqa: E402
from server.service.runtime import open_service  # noqa: E402
from server.worktree.context_check import checked_context  # noqa: E402
from server.worktree.tree_check import TreeChecker  # noqa: E402
from tests.git_history import git  # noqa: E402

START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
CALL_SIZE = 10  # memories per prompt-recall call, as the hook checks them
HOOK_PROMPTS = 40
PACKAGES = {"express": "4.19.2", "zod": "3.22.4", "pino": "8.19.0", "vitest": "1.3.1"}
SETTINGS = {
    "HTTP_TIMEOUT": "30s",
    "LOG_LEVEL": "info",
    "MAX_RETRIES": "3",
    "CACHE_TTL": "300",
    "RATE_LIMIT": "100",
}
HANDLERS = {  # file stem -> (function, what it does)
    "payments": ("chargeCard", "charge a stored card"),
    "invoices": ("createInvoice", "number and store an invoice"),
    "refunds": ("issueRefund", "refund a captured payment"),
    "webhooks": ("verifySignature", "check a provider's webhook signature"),
    "tenants": ("loadTenant", "resolve the tenant of a request"),
    "reports": ("exportLedger", "export the ledger as CSV"),
}
LOG_LEVELS = ("debug", "info", "warn", "error")
DOCS = ["runbook", "oncall", "architecture", "release", "security", "onboarding"]
TEAM_FACTS = [
    "We review pull requests within one working day.",
    "Standups are async in the team channel, before ten.",
    "Prefer small, reviewable changes over big-bang rewrites.",
    "The product owner signs off every customer-visible change.",
]


@dataclass
class Tree:
    """The script's own model of the repository's state."""

    go: str = "1.21"
    packages: dict[str, str] = field(default_factory=lambda: dict(PACKAGES))
    settings: dict[str, str] = field(default_factory=lambda: dict(SETTINGS))
    handlers: dict[str, str] = field(
        default_factory=lambda: {s: f for s, (f, _) in HANDLERS.items()}
    )
    docs: list[str] = field(default_factory=lambda: list(DOCS))


@dataclass
class Fact:
    text: str
    holds: Any  # (Tree) -> bool: whether the fact still holds in a tree
    anchored: bool = True


def write_tree(repo: Path, tree: Tree) -> None:
    (repo / "src" / "handlers").mkdir(parents=True, exist_ok=True)
    (repo / "docs").mkdir(exist_ok=True)
    (repo / "go.mod").write_text(f"module example.com/acme-svc\n\ngo {tree.go}\n")
    manifest = {"name": "acme-svc", "packageManager": "pnpm@9.12.0", "dependencies": {
        name: f"^{version}" for name, version in tree.packages.items()
    }}  # fmt: skip
    (repo / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    (repo / ".env.example").write_text("".join(f"{k}={v}\n" for k, v in tree.settings.items()))
    for path in (repo / "src" / "handlers").glob("*.ts"):
        path.unlink()
    for stem, function in tree.handlers.items():
        (repo / "src" / "handlers" / f"{stem}.ts").write_text(
            f"export async function {function}(request: Request) {{\n  return request;\n}}\n"
        )
    for path in (repo / "docs").glob("*.md"):
        if path.stem not in tree.docs:
            path.unlink()
    for doc in tree.docs:
        (repo / "docs" / f"{doc}.md").write_text(f"# {doc.title()}\n")


def bump(version: str, rng: random.Random) -> str:
    parts = [int(p) for p in version.split(".")]
    at = rng.choice(range(1, len(parts)))
    parts[at] += 1
    return ".".join(str(p) for p in parts[: at + 1] + [0] * (len(parts) - at - 1))


def change(repo: Path, tree: Tree, rng: random.Random) -> str:
    """One commit's change to the model (the files follow with write_tree / git mv)."""
    roll = rng.random()
    if roll < 0.10:
        tree.go = bump(tree.go, rng)
        return "bump go"
    if roll < 0.22:
        name = rng.choice(list(tree.packages))
        tree.packages[name] = bump(tree.packages[name], rng)
        return f"bump {name}"
    if roll < 0.36:
        key = rng.choice(list(tree.settings))
        old = tree.settings[key]
        if key == "LOG_LEVEL":
            tree.settings[key] = rng.choice([v for v in LOG_LEVELS if v != old])
        else:
            number = int(old.rstrip("s")) * 2
            tree.settings[key] = f"{number}s" if old.endswith("s") else str(number)
        return f"change {key}"
    if roll < 0.44 and len(tree.handlers) > 2:
        stem = rng.choice(list(tree.handlers))
        new = f"{stem}_v{rng.randint(2, 9)}"
        if new not in tree.handlers:
            (repo / "src" / "handlers" / f"{new}.ts").parent.mkdir(parents=True, exist_ok=True)
            git(repo, "mv", f"src/handlers/{stem}.ts", f"src/handlers/{new}.ts", when=START)
            tree.handlers[new] = tree.handlers.pop(stem)
            return f"rename {stem}"
    if roll < 0.50:
        stem = rng.choice(list(tree.handlers))
        tree.handlers[stem] = tree.handlers[stem] + "V2"
        return f"rename function in {stem}"
    if roll < 0.56 and len(tree.docs) > 1:
        tree.docs.remove(rng.choice(tree.docs))
        return "delete a doc"
    return "touch the changelog"


def facts_now(tree: Tree, rng: random.Random) -> list[Fact]:
    """One or two facts true of `tree` now, each with a test of whether a later tree agrees."""
    choices = []
    go = tree.go
    choices.append(Fact(
        f"The Go toolchain is pinned to go {go} in `go.mod`.", lambda t, v=go: t.go == v
    ))  # fmt: skip
    name = rng.choice(list(tree.packages))
    version = tree.packages[name]
    choices.append(Fact(
        f"We depend on {name} {version}; see package.json.",
        lambda t, n=name, v=version: t.packages[n] == v,
    ))  # fmt: skip
    key = rng.choice(list(tree.settings))
    value = tree.settings[key]
    choices.append(Fact(
        f"`{key}={value}` in `.env.example` is what new environments start with.",
        lambda t, k=key, v=value: t.settings[k] == v,
    ))  # fmt: skip
    stem = rng.choice(list(tree.handlers))
    function = tree.handlers[stem]
    purpose = HANDLERS[stem.split("_v")[0]][1]
    choices.append(Fact(
        f"Call `{function}()` from src/handlers/{stem}.ts to {purpose}.",
        lambda t, s=stem, f=function: t.handlers.get(s) == f,
    ))  # fmt: skip
    doc = rng.choice(tree.docs)
    choices.append(Fact(
        f"The {doc} notes are kept in docs/{doc}.md.", lambda t, d=doc: d in t.docs
    ))  # fmt: skip
    team = rng.choice(TEAM_FACTS)
    choices.append(Fact(team, lambda t: True, anchored=False))
    return rng.sample(choices, rng.choice((1, 2, 3)))


def transcript(session: str, cwd: Path, when: datetime, facts: list[Fact]) -> str:
    lines = []
    for number, (kind, text) in enumerate(
        [("user", "Where do we stand on the service setup? Write down what matters.")]
        + [("assistant", f.text) for f in facts],
        start=1,
    ):
        content: Any = text if kind == "user" else [{"type": "text", "text": text}]
        message: dict[str, Any] = {"role": kind, "content": content}
        if kind == "assistant":
            message.update(id=f"msg-{session}-{number}", stop_reason="end_turn")
        lines.append({
            "type": kind,
            "uuid": f"{session}-{number:04d}",
            "parentUuid": f"{session}-{number - 1:04d}" if number > 1 else None,
            "isSidechain": False,
            "sessionId": session,
            "cwd": str(cwd),
            "version": "2.1.120",
            "timestamp": (when + timedelta(seconds=number)).isoformat().replace("+00:00", "Z"),
            "message": message,
        })  # fmt: skip
    return "".join(json.dumps(line) + "\n" for line in lines)


def history(
    repo: Path, projects: Path, commits: int, seed: int, files: int
) -> tuple[Tree, list[Fact]]:
    """The repository's history and the sessions along it; the final tree and every fact.

    `files` filler modules make the tree the size of a real service's (they are never named).
    """
    rng = random.Random(seed)
    tree = Tree()
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main", when=START)
    for number in range(files):
        filler = repo / "lib" / f"pkg{number // 100:02d}" / f"module{number:04d}.ts"
        filler.parent.mkdir(parents=True, exist_ok=True)
        filler.write_text(f"export const value{number} = {number};\n")
    write_tree(repo, tree)
    git(repo, "add", "-A", when=START)
    git(repo, "commit", "-q", "-m", "start", when=START)
    folder = projects / "-bench-acme-svc"
    folder.mkdir(parents=True)
    facts: list[Fact] = []
    for day in range(1, commits + 1):
        when = START + timedelta(days=day)
        message = change(repo, tree, rng)
        write_tree(repo, tree)
        (repo / "CHANGELOG.md").write_text(f"day {day}: {message}\n")
        git(repo, "add", "-A", when=when)
        git(repo, "commit", "-q", "-m", message, when=when)
        if rng.random() < 0.8:
            told = facts_now(tree, rng)
            facts += told
            session = f"bench-{day:03d}"
            text = transcript(session, repo, when + timedelta(hours=1), told)
            (folder / f"{session}.jsonl").write_text(text)
    return tree, facts


async def every_memory(service: Any, where: MemoryFilter) -> list[Any]:
    """Every memory the filter matches, page by page."""
    found: list[Any] = []
    while True:
        page = await service.list_memories(where, limit=500, offset=len(found))
        found += page.memories
        if not page.memories or len(found) >= page.total:
            return found


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))], 3) if ordered else 0.0


async def run(home: Path, commits: int, seed: int, files: int) -> dict[str, Any]:
    repo = home / "acme-svc"
    projects = home / "projects"
    final, facts = history(repo, projects, commits, seed, files)
    by_text = {fact.text: fact for fact in facts}
    settings = Settings(claude_memory_home=home / "data", cache_max_size=0)
    async with open_service(settings) as service:
        summary = await SessionImporter(service, ImportFilters(min_length=1)).run(projects)
        stored = await every_memory(service, MemoryFilter(kind="raw", source="claude-code"))
        memories = [m for m in stored if m.content in by_text]
        checker = TreeChecker(repo)
        per_memory: list[float] = []
        per_call: list[float] = []
        verdicts: dict[int, str] = {}
        for start in range(0, len(memories), CALL_SIZE):
            batch = memories[start : start + CALL_SIZE]
            began = time.perf_counter()
            anchors = [
                ([(a.kind, a.name, a.value) for a in anchors_of(m.content)], m.created_at)
                for m in batch
            ]
            checks = checker.check(anchors)
            took = (time.perf_counter() - began) * 1000
            per_call.append(took)
            per_memory += [took / len(batch)] * len(batch)
            verdicts.update({m.id: c.verdict for m, c in zip(batch, checks, strict=True)})
        hook = await hook_latency(service, settings, repo, home, memories, seed)
        outside = await outside_verdicts(service, home)
    stale = [
        m for m in memories if by_text[m.content].anchored and not by_text[m.content].holds(final)
    ]
    live = [m for m in memories if by_text[m.content].anchored and by_text[m.content].holds(final)]
    unanchored = [m for m in memories if not anchors_of(m.content)]
    return {
        "benchmark": "verified-recall",
        "seed": seed,
        "commits": commits,
        "files_in_tree": sum(
            1 for path in repo.rglob("*") if path.is_file() and ".git" not in path.parts
        ),
        "sessions_imported": summary.sessions,
        "facts": len(memories),
        "stale_facts": len(stale),
        "live_facts": len(live),
        "stale_detected": _share(stale, verdicts, ("drifted", "orphaned")),
        "fresh_kept": _share(live, verdicts, ("fresh",)),
        "live_marked_drifted": _share(live, verdicts, ("drifted", "orphaned")),
        "no_anchor": round(len(unanchored) / len(memories), 3) if memories else 0.0,
        "latency_ms_per_memory": {
            "p50": percentile(per_memory, 0.5),
            "p95": percentile(per_memory, 0.95),
        },
        "latency_ms_per_call_of_10": {
            "p50": percentile(per_call, 0.5),
            "p95": percentile(per_call, 0.95),
        },
        "prompt_hook_ms": hook,
        "outside_memories": outside[0],
        "outside_unchecked": outside[1],
    }


async def hook_latency(
    service: Any, settings: Settings, repo: Path, home: Path, memories: list[Any], seed: int
) -> dict[str, Any]:
    """The prompt-recall hook's server side (HookRecall.prompt: search, check, format) with the
    session's folder in the tree and, for the same prompt, in a folder that is not on this
    machine (nothing checked): the difference is what the check adds to the hook. Each prompt
    is a stored fact's text, so about ten memories with anchors come back to be checked."""
    recall = HookRecall(
        service,
        replace(
            settings, recall_threshold=0.05, recall_max_hits=CALL_SIZE, recall_max_chars=20_000
        ),
    )
    rng = random.Random(seed)
    prompts = [m.content for m in rng.sample(memories, min(HOOK_PROMPTS, len(memories)))]
    nowhere = str(home / "not-on-this-machine")
    timings: dict[str, list[float]] = {"checked": [], "unchecked": [], "in_hook_process": []}
    checked_memories = 0
    for round_, prompt in enumerate([prompts[0], *prompts]):  # the first one warms up
        for name, cwd in (("checked", str(repo)), ("unchecked", nowhere)):
            began = time.perf_counter()
            answer = await recall.prompt(f"bench-{round_}-{name}", cwd, prompt)
            took = (time.perf_counter() - began) * 1000
            if round_:
                timings[name].append(took)
                checked_memories += len(answer.memory_ids) if name == "checked" else 0
        # What the hook client does when the server could not check (its folder was not on
        # the server's machine): check the items it was sent, with a checker of its own.
        began = time.perf_counter()
        checked_context(answer.markdown, answer.check, str(repo), 10.0, drop_if_empty=True)
        if round_:
            timings["in_hook_process"].append((time.perf_counter() - began) * 1000)
    figures = {
        name: {"p50": percentile(values, 0.5), "p95": percentile(values, 0.95)}
        for name, values in timings.items()
    }
    return {
        "prompts": len(prompts),
        "memories_per_prompt": round(checked_memories / max(len(prompts), 1), 1),
        **figures,
        "added_p95": round(figures["checked"]["p95"] - figures["unchecked"]["p95"], 2),
        "target_added_p95": "<= 15",
        "hook_process_imports_ms": hook_process_imports(),
    }


def hook_process_imports(runs: int = 10) -> dict[str, float]:
    """What the hook client pays to import the check (`python -I -S`, as installed, with what
    hooks.py has already imported) before it can check anything: once per hook call that
    receives check items. Redaction, loaded on the first drift note, is not counted."""
    code = (
        "import json, os, socket, sys, time; sys.path.append(sys.argv[1]); "  # as hooks.py has
        "began = time.perf_counter(); "
        "import server.worktree.context_check; print((time.perf_counter() - began) * 1000)"
    )
    took = [
        float(
            subprocess.run(
                [sys.executable, "-I", "-S", "-c", code, str(ROOT)],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
        for _ in range(runs)
    ]
    return {"p50": percentile(took, 0.5), "p95": percentile(took, 0.95)}


def _share(memories: list[Any], verdicts: dict[int, str], wanted: tuple[str, ...]) -> float:
    if not memories:
        return 0.0
    return round(sum(verdicts[m.id] in wanted for m in memories) / len(memories), 3)


async def outside_verdicts(service: Any, home: Path) -> tuple[int, float]:
    """The shared fixtures and the outside corpus, checked against a folder that is not theirs."""
    await SessionImporter(service, ImportFilters()).run(
        SHARED / "fixtures" / "claude-code" / "projects"
    )
    outside = SHARED / "bench" / "outside-corpus"
    await SessionImporter(service, ImportFilters()).run(outside / "claude-code" / "projects")
    if (outside / "claude-ai" / "conversations.json").exists():
        await import_claude_ai(service, outside / "claude-ai" / "conversations.json")
    await import_text(service, [outside / "notes", SHARED / "fixtures" / "notes"])
    theirs = [m for m in await every_memory(service, MemoryFilter()) if m.project != "acme-svc"]
    empty = home / "not-their-tree"
    empty.mkdir()
    checks = TreeChecker(empty).check(
        [([(a.kind, a.name, a.value) for a in anchors_of(m.content)], m.created_at) for m in theirs]
    )
    unchecked = sum(c.verdict == "unchecked" for c in checks)
    return len(theirs), round(unchecked / len(theirs), 3) if theirs else 1.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--commits", type=int, default=48)
    parser.add_argument("--files", type=int, default=5000, help="filler files in the tree")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="verified-recall-", ignore_cleanup_errors=True) as home:
        report = asyncio.run(run(Path(home), args.commits, args.seed, args.files))
    print(json.dumps(report, indent=2))  # noqa: T201


if __name__ == "__main__":
    main()
