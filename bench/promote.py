"""`claude-memory promote` (#58) on a scripted history: does it propose only lines that are
current, fresh and nobody's private memory, and does it propose the memories a person would
want in their CLAUDE.md?

A fresh embedded database in a temporary CLAUDE_MEMORY_HOME, and tests/git_history.py's
acme-api repository (Go 1.22 -> 1.23 and docs/runbook.md deleted on 2026-03-02, after memories
written on 2026-03-01), with a CLAUDE.md of the user's own. Into the store go:

- wanted (a person would want each as a line): two memories used in 3-4 session-start
  injections each (receipts recorded, then judged by the product's use judge against a Bash
  call naming their terms), two rules the user stated (a preference, a distilled decision), a
  setting stated as it is now, and the successor of a superseded deploy rule;
- not wanted: the superseded deploy rule (used 3 times), a drifted Go pin and an orphaned
  runbook note (both used or stated), a teammate's private preference, a preference holding a
  token (redacted on save), a memory used once, one never used, and a raw conversation turn
  used five times.

Then, as a person would: the proposal (precision, recall), `--write` (apply), a second write
(idempotent), and the code and memory moving on (the pnpm rule superseded, HTTP_TIMEOUT
changed in a commit): the next proposal should change the one and remove the other.

Prints one JSON object: `precision` (share of proposed lines whose memory is current, fresh
and not private; target 1.0), `recall` (share of the wanted memories proposed), what was
proposed and missed by label, `second_write_changes` (0 when idempotent), and
`demotions_found` of `demotions_expected` with their reasons.

Usage: .venv/bin/python bench/promote.py
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from server.core.access import acting_as  # noqa: E402
from server.core.config import Settings  # noqa: E402
from server.core.models.journal import AgentAction  # noqa: E402
from server.core.models.promotion import Proposal  # noqa: E402
from server.core.models.receipts import Injection, SessionWork  # noqa: E402
from server.recall.memory_check import check_memory  # noqa: E402
from server.recall.promote import apply, propose  # noqa: E402
from server.service.memory import MemoryService  # noqa: E402
from server.service.runtime import open_service  # noqa: E402
from tests.git_history import MEMORIES_WRITTEN, acme_repository, git, write  # noqa: E402

PROJECT = "acme-api"
# label -> (text, kind, extra save arguments, uses: the Bash command that uses it and how often)
WANTED = ("pnpm", "errors", "table_tests", "json_logs", "timeout", "deploy_new")
MEMORIES: dict[str, tuple[str, str, dict[str, Any], tuple[str, int] | None]] = {
    "pnpm": (
        "Install dependencies with pnpm (pinned as pnpm@9.12.0 in package.json), never npm.",
        "distilled",
        {},
        ("pnpm install --frozen-lockfile", 4),
    ),
    "errors": (
        "Call `sendProblem()` from src/errors.ts for every error response.",
        "distilled",
        {},
        ("grep -rn sendProblem src/errors.ts", 3),
    ),
    "table_tests": ("Prefer table-driven tests in every Go package.", "preference", {}, None),
    "json_logs": (
        "We decided to log JSON lines, at the level LOG_LEVEL sets in `.env.example`.",
        "distilled",
        {"server_metadata": {"distill_kind": "decision"}, "source": "distill"},
        None,
    ),
    "timeout": (
        "`HTTP_TIMEOUT=45s` in `.env.example` bounds every outgoing call.",
        "distilled",
        {},
        ("curl --max-time 45 http://localhost:8080/health # HTTP_TIMEOUT", 3),
    ),
    "deploy_old": ("Deploy with fly deploy from a laptop.", "distilled", {}, ("fly deploy", 3)),
    "go_pin": (
        "The Go toolchain is pinned to go 1.22 in `go.mod`.",
        "distilled",
        {"created_at": MEMORIES_WRITTEN},
        ("go version && cat go.mod # toolchain", 3),
    ),
    "runbook": (
        "The on-call steps are written down in docs/runbook.md.",
        "preference",
        {"created_at": MEMORIES_WRITTEN},
        None,
    ),
    "secret": (
        "Deploy from CI with GITHUB_TOKEN=ghp_R2x9KqLm4TnV7wYz8AbC3dEf6GhJ1kLmN0pQ as the token.",
        "preference",
        {},
        None,
    ),
    "once": ("Orders are paginated with an opaque cursor.", "distilled", {}, ("orders cursor", 1)),
    "never": ("The staging database is refreshed every Sunday night.", "distilled", {}, None),
    "raw_turn": (
        "user: can you check whether webhooks retry on a 502?",
        "raw",
        {"role": "user", "session_id": "s-raw"},
        ("webhooks retry 502", 5),
    ),
}
DEPLOY_NEW = "Deploy only from CI with fly deploy --strategy bluegreen, never from a laptop."
PNPM_NEXT = "Install dependencies through corepack with pnpm 9, never npm or yarn."
PRIVATE = "Prefer tabs over spaces in every file I touch."


async def scripted_history(service: MemoryService, repo: Path) -> dict[str, int]:
    """The memories, the teammate's private one, and the receipts with their verdicts."""
    ids: dict[str, int] = {}
    for label, (text, kind, extra, _) in MEMORIES.items():
        saved = await service.save(
            text, project=PROJECT, project_path=str(repo), kind=kind, force=True, **extra
        )
        ids[label] = saved.id
    successor = await service.save(
        DEPLOY_NEW,
        project=PROJECT,
        project_path=str(repo),
        kind="preference",
        supersedes=ids["deploy_old"],
        force=True,
    )
    ids["deploy_new"] = successor.id
    bob, _ = await service.users.add("bob")
    with acting_as(service.users.viewer(bob.user)):
        private = await service.save(
            PRIVATE, project=PROJECT, project_path=str(repo), kind="preference", force=True
        )
    ids["private"] = private.id
    for label, (_, _, _, use) in MEMORIES.items():
        if use is None:
            continue
        command, times = use
        for number in range(times):
            session = f"s-{label}-{number}"
            await service.record_injection(
                Injection("session_start", session, PROJECT, 400, [ids[label]])
            )
            action = AgentAction(None, datetime.now(UTC), "Bash", f"command: {command}")
            await service.judge_injections([SessionWork(session, [action])])
    return ids


async def line_quality(service: MemoryService, memory_id: int, repo: Path) -> dict[str, bool]:
    """Whether a proposed line's memory is current, fresh and nobody's private memory."""
    memory = await service.get(memory_id)
    check = await check_memory(service, memory_id, str(repo))
    return {
        "current": memory.deleted_at is None and memory.superseded_by is None,
        "fresh": check.verdict not in ("drifted", "orphaned"),
        "not_private": memory.visibility != "private" or memory.owner is None,
    }


def proposed_ids(proposal: Proposal, action: str = "add") -> list[int]:
    return [
        c.memory_id
        for f in proposal.files
        for c in f.changes
        if c.action == action and c.memory_id is not None
    ]


async def run(home: Path) -> dict[str, Any]:
    repo = acme_repository(home / "acme-api")
    write(repo, "CLAUDE.md", "# acme-api\n\nKeep pull requests small.\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "instructions")
    settings = Settings(claude_memory_home=home / "data", cache_max_size=0)
    async with open_service(settings) as service:
        ids = await scripted_history(service, repo)
        labels = {memory_id: label for label, memory_id in ids.items()}
        proposal = await propose(service, PROJECT, str(repo))
        added = proposed_ids(proposal)
        quality = [await line_quality(service, memory_id, repo) for memory_id in added]
        good = sum(all(q.values()) for q in quality)
        wanted = {ids[label] for label in WANTED}
        await apply(service, PROJECT, str(repo))
        second = await apply(service, PROJECT, str(repo))
        # The memory and the code move on: the pnpm rule is superseded, HTTP_TIMEOUT changes.
        await service.save(
            PNPM_NEXT,
            project=PROJECT,
            project_path=str(repo),
            kind="preference",
            supersedes=ids["pnpm"],
            force=True,
        )
        write(repo, ".env.example", "HTTP_TIMEOUT=60s\nLOG_LEVEL=info\n")
        git(repo, "commit", "-q", "-am", "longer timeout", when=datetime.now(UTC))
        later = await propose(service, PROJECT, str(repo))
    demotions = {
        labels.get(c.old_memory_id or 0, str(c.old_memory_id)): f"{c.action}: {c.reason}"
        for f in later.files
        for c in f.changes
        if c.action in ("change", "remove")
    }
    return {
        "precision": round(good / len(added), 3) if added else None,
        "recall": round(len(wanted & set(added)) / len(wanted), 3),
        "proposed": sorted(labels[i] for i in added),
        "missed": sorted(labels[i] for i in wanted - set(added)),
        "not_current_fresh_or_shared": [
            labels[i] for i, q in zip(added, quality, strict=True) if not all(q.values())
        ],
        "left_out": proposal.left_out,
        "second_write_changes": len(second.written),
        "demotions_expected": ["pnpm", "timeout"],
        "demotions_found": demotions,
    }


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="promote-bench-", ignore_cleanup_errors=True) as home:
        report = asyncio.run(run(Path(home)))
    print(json.dumps(report, indent=2))  # noqa: T201


if __name__ == "__main__":
    main()
