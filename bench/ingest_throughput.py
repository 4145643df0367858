"""Claude Code import throughput against the model's own encode rate; prints one JSON object.

Importing transcripts is mostly embedding: every prose turn is encoded once. So the figure that
matters is not turns per second on its own but how close the importer gets to the rate at which
the model alone encodes the same texts on the same machine, in the same run. Everything else the
import does (discovering files, parsing JSONL, filtering harness noise, redaction, hashing,
dedup look-ups, inserting rows and vectors, recording read positions) is overhead on top of that
floor. And an import that runs again with nothing new must cost almost nothing: one `stat` per
file and one query for the stored offsets.

What the script does:

1. Generates, deterministically from `--seed`, a synthetic projects root in the real Claude Code
   format (FORMATS.md §1): `<root>/<encoded cwd>/<session uuid>.jsonl`, ~8 projects, `--sessions`
   sessions holding exactly `--turns` prose turns (user prompts and assistant replies,
   alternating), with realistic lengths (prompts mostly 60-400 characters, some pasted logs up to
   ~3,000; replies 80-1,500, a few longer), every turn distinct and at least 60 characters long
   so the default `--min-length` (50) keeps them all, and no secret-shaped text so redaction does
   not change them. Around the prose sits the noise real transcripts carry: `tool_use` lines
   (Bash, Read, Edit) and their `tool_result` lines with `toolUseResult`, thinking blocks,
   `file-history-snapshot`, `system` `turn_duration`, `permission-mode`, `last-prompt` and
   `ai-title` records, all with the real envelope fields.
2. Encode floor: the same texts through the service's own Embedder, once with
   `embed_documents` (the path the import takes: long texts split into windows) and once with
   plain `encode` (for reference), timed, in texts per second.
3. First import into a fresh embedded database: `SessionImporter(service, ImportFilters())`,
   timed, in turns per second and as a ratio to the `embed_documents` rate; it must import
   exactly the generated prose turns. Into an empty store it builds the vector indexes once,
   at its end (`indexes_built_after`; server/service/bulk_indexes.py), inside the timing.
4. No-change re-import of the same root, timed in seconds; it must import nothing.

Each phase also reports the CPU seconds of this process and of the embedded PostgreSQL server,
and the load average after it: on a 2-core machine shared with other work, wall-clock rates
move with the load, so `cpu_ratio_to_encode` (CPU per text, encode vs import) is reported next
to the wall-clock ratio the target is judged on.

Targets (issue): first import >= 80% of the raw encode rate; no-change re-import <= 2 s.

Usage: .venv/bin/python bench/ingest_throughput.py [--sessions 200] [--turns 20000] [--seed 7]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import re
import statistics
import string
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from server.core.config import Settings  # noqa: E402
from server.ingest.importer import ImportFilters, SessionImporter  # noqa: E402
from server.service.embeddings import Embedder  # noqa: E402
from server.service.runtime import open_service  # noqa: E402

TARGET_RATIO = 0.8
TARGET_REIMPORT_SECONDS = 2.0

# --- vocabulary -------------------------------------------------------------------------------
#
# A tiny grammar: `{slot}` in a template is replaced by a random choice from GRAMMAR[slot]
# (itself expanded), or by the value of a NUMBERS generator. Numbers, names and nested phrases
# multiply into far more distinct texts than the corpus needs; `_Texts` still rejects repeats.

PROJECTS = [
    "acme-api",
    "billing-service",
    "web-dashboard",
    "infra-terraform",
    "mobile-app",
    "data-pipeline",
    "docs-site",
    "cli-tools",
]


def _words(text: str) -> list[str]:
    return text.split()


GRAMMAR: dict[str, list[str]] = {
    "component": [
        "the orders route",
        "the invoice worker",
        "the checkout form",
        "the retry queue",
        "the session middleware",
        "the rate limiter",
        "the search indexer",
        "the export job",
        "the webhook dispatcher",
        "the settings page",
        "the migration runner",
        "the cache layer",
        "the CSV importer",
        "the notification service",
        "the audit log",
        "the billing cron",
        "the feature-flag client",
        "the upload handler",
        "the report builder",
        "the GraphQL resolver",
        "the pagination helper",
        "the metrics exporter",
        "the healthcheck endpoint",
        "the connection pool",
        "the email renderer",
        "the sidebar component",
        "the date picker",
        "the Terraform module for the VPC",
        "the Kafka consumer",
        "the nightly ETL",
    ],
    "function": _words(
        "parseCursor encodeCursor retryWithBackoff loadConfig buildQuery renderInvoice "
        "normalizeEmail applyDiscount validateOrder flushBatch resolveTenant scheduleReminder "
        "mergeSettings computeTotals fetchRates groupByCustomer toCsvRow debounceSearch "
        "refreshSession createSnapshot migrateSchema parseDuration formatCurrency "
        "dedupeEvents withTransaction acquireLock releaseLock splitChunks hydrateStore "
        "handleWebhook read_manifest load_rows compute_checksum write_parquet open_pool"
    ),
    "dir": _words(
        "src/routes src/lib src/db src/workers src/components src/hooks app/models "
        "app/services pkg/cli internal/store modules/network pipelines/jobs tests/integration "
        "scripts lib/utils"
    ),
    "stem": _words(
        "orders invoices cursor pool retry settings search export webhooks session limits "
        "metrics reports uploads flags audit billing schema customers payments ledger queue "
        "mailer auth"
    ),
    "ext": _words("ts ts tsx py go tf sql rs kt md"),
    "lib": _words(
        "zod pino fastify prisma knex vitest playwright pydantic sqlalchemy alembic httpx "
        "tenacity react-query zustand date-fns luxon cobra viper sqlc pgx serde tokio "
        "terraform-aws-modules dbt airflow pandas polars tailwind vite esbuild"
    ),
    "tool": [
        "pnpm test",
        "pnpm lint",
        "pytest -x",
        "go test ./...",
        "cargo test",
        "make check",
        "terraform plan",
        "tsc --noEmit",
        "ruff check .",
        "mypy --strict",
        "dbt build",
        "npm run e2e",
        "docker compose up -d postgres",
        "gradle test",
    ],
    "table": _words(
        "orders invoices customers payments line_items audit_events subscriptions "
        "webhook_deliveries feature_flags daily_rollups users ledger_entries shipments "
        "coupons export_jobs"
    ),
    "column": _words(
        "created_at updated_at status total_cents customer_id currency retry_count deleted_at "
        "external_ref region plan_tier locale"
    ),
    "error": [
        "ECONNRESET",
        "a 504 from the gateway",
        "a deadlock detected error",
        "TypeError: cannot read properties of undefined",
        "a unique constraint violation",
        "KeyError: 'customer'",
        "context deadline exceeded",
        "a hydration mismatch",
        "too many clients already",
        "an out-of-memory kill",
        "a flaky timeout in CI",
        "ModuleNotFoundError for the generated client",
        "a 429 from the upstream API",
        "an off-by-one in the page count",
        "a race between two workers",
        "a stale cache entry",
        "a timezone shift around midnight UTC",
        "a missing index on the join column",
    ],
    "symptom": [
        "the page shows duplicate rows after the second scroll",
        "p95 latency jumps to {ms} ms under load",
        "the job silently skips every {n}th record",
        "invoices get the same number twice when the client retries",
        "the dashboard totals are off by a few cents",
        "memory grows by about {n} MB per hour until the pod restarts",
        "the build takes {n} minutes instead of {m}",
        "the export contains rows from another tenant",
        "CI goes red roughly once in {n} runs",
        "the form resets when the user switches tabs",
        "the consumer lag keeps climbing after a deploy",
        "dates render one day early for users west of UTC",
    ],
    "cause": [
        "a connection is taken from the pool and never released on the error path",
        "the cursor encodes only {column}, which is not unique, so ties are skipped",
        "{function} catches the error and returns an empty list instead of rethrowing",
        "the cache key ignores the tenant, so two customers share one entry",
        "the retry wraps the whole transaction, which replays the insert",
        "{lib} changed its default for {column} parsing in version {version}",
        "the test relies on insertion order, which {table} does not guarantee",
        "the worker acknowledges the message before the write commits",
        "two requests race on {table} without a row lock",
        "the date is parsed as local time and then stored as UTC",
        "the query filters after the limit instead of before it",
        "the component re-creates its store on every render",
    ],
    "fix": [
        "release the connection in a finally block",
        "order by ({column}, id) and put both into the cursor",
        "rethrow from {function} and let the caller decide",
        "add the tenant id to the cache key",
        "retry only the idempotent call, not the whole transaction",
        "pin {lib} to {version} until we migrate",
        "sort explicitly in the test instead of relying on the table order",
        "acknowledge after the commit and make the handler idempotent",
        "take a row lock with SELECT ... FOR UPDATE on {table}",
        "parse dates with an explicit zone everywhere",
        "move the filter into the WHERE clause before the LIMIT",
        "memoise the store and pass it down through context",
        "add a partial index on {table} ({column})",
        "batch the writes in groups of {n}",
    ],
    "feature": [
        "cursor-based pagination",
        "per-customer rate limiting",
        "a dry-run flag",
        "CSV export",
        "soft deletes",
        "an audit trail",
        "retry with jitter",
        "structured logging",
        "a dark mode toggle",
        "incremental sync",
        "optimistic updates",
        "a health endpoint with database checks",
        "idempotent webhooks",
        "a bulk edit action",
        "server-side sorting",
        "an offline queue",
        "multi-currency totals",
    ],
    "style": [
        "named exports",
        "early returns",
        "small pure functions",
        "explicit types",
        "dataclasses",
        "table-driven tests",
        "async/await",
        "composition",
        "plain SQL",
        "feature folders",
        "snake_case file names",
        "one component per file",
    ],
    "verb": _words(
        "rename extract inline split simplify rewrite document test delete move profile type"
    ),
    "ack": [
        "ok",
        "good",
        "great, thanks",
        "looks right",
        "nice",
        "perfect",
        "hmm, close",
        "that works",
        "alright",
        "yes",
        "makes sense",
    ],
    "version": ["{major}.{minor}.{patch}"],
    "path": [
        "{dir}/{stem}.{ext}",
        "{dir}/{stem}_{stem}.{ext}",
        "{dir}/{stem}/index.{ext}",
    ],
    "endpoint": [
        "GET /{stem}",
        "POST /{stem}",
        "GET /{stem}/:id",
        "PATCH /{stem}/:id",
        "DELETE /{stem}/:id",
        "POST /{stem}/:id/{verb}",
    ],
    "test": _words("{stem}.test.ts test_{stem}.py {stem}_test.go {stem}.spec.tsx"),
}

NUMBERS: dict[str, Callable[[random.Random], str]] = {
    "n": lambda rng: str(rng.randint(2, 60)),
    "m": lambda rng: str(rng.randint(2, 900)),
    "k": lambda rng: str(rng.randint(0, 30)),
    "ms": lambda rng: str(rng.randint(40, 9000)),
    "line": lambda rng: str(rng.randint(1, 640)),
    "major": lambda rng: str(rng.randint(0, 9)),
    "minor": lambda rng: str(rng.randint(0, 40)),
    "patch": lambda rng: str(rng.randint(0, 20)),
}

USER_SENTENCES = [
    "Can you add {feature} to {component}?",
    "Please {verb} {function} in {path}, it has grown too big.",
    "The {test} test fails on CI with {error} but passes locally.",
    "No, don't use {lib} for this, we already depend on {lib}.",
    "Why does {endpoint} take {ms} ms when {table} only has {m} rows?",
    "Always run {tool} yourself before every commit in this repo.",
    "Let's move {function} out of {path} into its own module.",
    "I think the bug is in {function}: {symptom}.",
    "{ack}. Next, add {feature} to {component}.",
    "Write a migration that adds {column} to {table} with a sensible default.",
    "From now on prefer {style} over {style} in this codebase.",
    "Check whether {lib} {version} still behaves the same, we are on {version}.",
    "In production {symptom}; can you find out why?",
    "Users report that {symptom} since yesterday's deploy.",
    "{ack}, but keep {function} backwards compatible for one more release.",
    "Don't touch {path}, another team owns it.",
    "Run {tool} and fix whatever it reports in {path}.",
    "Could {error} come from {component}?",
    "We decided to {fix}; please do that across {component} too.",
    "Add a regression test in {test} that reproduces {error}.",
    "Explain what {function} does and why it needs {lib}.",
    "Use {lib} for this instead of writing our own helper.",
    "Remember that {table} is partitioned by {column}, so filter on it first.",
    "The staging deploy of {component} failed with {error} around {ms} ms into startup.",
]

ASSISTANT_SENTENCES = [
    "I looked at {path}: {function} is called before {component} validates its input.",
    "The root cause is that {cause}.",
    "I changed {function} to {fix}, and added a regression test in {test}.",
    "All {m} tests pass now ({n} skipped), and {tool} reports nothing new.",
    "That explains why {symptom}.",
    "There are two ways to do this: {fix}, or {fix}.",
    "{lib} {version} changed how it handles {column}, which matches what you saw.",
    "I ran {tool}; it took {n} seconds and found {k} problems, all in {path}.",
    "The slow part is the query on {table}: with no index on {column} it reads {m}k rows.",
    "{endpoint} now answers in about {ms} ms at p95 on the local data set.",
    "I kept the public signature of {function} so callers in {path} need no change.",
    "One caveat: {error} can still happen if {cause}.",
    "I would {fix} next, but that touches {component}, so I left it for now.",
    "The change is small: {n} lines in {path} and {k} in {test}.",
    "{component} already retries, so adding {lib} on top would double the attempts.",
    "I reverted my first attempt because {cause}.",
    "Both call sites in {path} now go through {function}.",
    "The migration is reversible; the down step drops {column} from {table} again.",
    "If we {fix}, {symptom} should stop as well.",
    "I used {style} as you asked and removed the old helper from {path}.",
]

PASTE_INTROS = [
    "Here is what {tool} prints now:",
    "CI log from the last failing run of {component}:",
    "This is what I get in staging when I hit {endpoint}:",
    "Output after your change to {path}:",
    "Still failing, same as before:",
    "Logs from the worker around the time {symptom}:",
]

LOG_LINES = [
    "{ts} ERROR [{stem}] {error} after {ms} ms (attempt {k} of {n})",
    "{ts} WARN  [{stem}] pool waiting={n} idle=0 total={m}",
    "{ts} INFO  [{stem}] {endpoint} -> 500 in {ms} ms",
    "    at {function} ({path}:{line}:{k})",
    "{ts} DEBUG [{stem}] query on {table} returned {m} rows in {ms} ms",
    "FAIL {test} > {function} > handles {feature} ({ms} ms)",
    "  expected {m} to equal {line}",
]

TOOL_COMMANDS = [
    "{tool}",
    "git diff --stat",
    "git log --oneline -{n}",
    "ls {dir}",
    "grep -rn {function} {dir}",
    "cat {path}",
    "wc -l {path}",
]
CODE_LINES = [
    "export function {function}(input: unknown) {{",
    "  const rows = await db.query(`SELECT * FROM {table} WHERE {column} = $1`, [input]);",
    "  if (!rows.length) return null;",
    "  return rows.map(({column}) => ({column}));",
    "}}",
    "def {function}(conn, limit={n}):",
    "    return conn.execute('SELECT {column} FROM {table} LIMIT %s', (limit,))",
    "import {{ {function} }} from './{stem}.js';",
    "// TODO: {fix}",
    "",
]

SLOT = re.compile(r"\{(\w+)\}")


class Grammar:
    """Expands templates with a seeded random source."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def expand(self, template: str, **fixed: str) -> str:
        def pick(match: re.Match[str]) -> str:
            slot = match.group(1)
            if slot in fixed:
                return fixed[slot]
            if slot in NUMBERS:
                return NUMBERS[slot](self.rng)
            return self.expand(self.rng.choice(GRAMMAR[slot]), **fixed)

        return SLOT.sub(pick, template)

    def code(self, template: str) -> str:
        """A code line: `{{` / `}}` stay literal braces."""
        parts = template.replace("{{", "\0").replace("}}", "\1")
        return self.expand(parts).replace("\0", "{").replace("\1", "}")


# --- texts ------------------------------------------------------------------------------------


def _lognormal_length(rng: random.Random, median: float, sigma: float, low: int, high: int) -> int:
    return int(min(high, max(low, rng.lognormvariate(math.log(median), sigma))))


class _Texts:
    """Prose turns with realistic lengths; every text returned is new."""

    def __init__(self, grammar: Grammar) -> None:
        self.grammar = grammar
        self.rng = grammar.rng
        self.seen: set[str] = set()

    def _fill(self, templates: list[str], target: int, cap: int, joiner: Callable[[], str]) -> str:
        text = self.grammar.expand(self.rng.choice(templates))
        while len(text) < target:
            sentence = self.grammar.expand(self.rng.choice(templates))
            if len(text) + len(sentence) > cap and len(text) >= 60:
                break
            text += joiner() + sentence
        return text

    def _unique(self, make: Callable[[], str]) -> str:
        while True:
            text = make().strip()
            if len(text) >= 60 and text not in self.seen:
                self.seen.add(text)
                return text

    def user(self, ts: datetime) -> str:
        if self.rng.random() < 0.05:
            return self._unique(lambda: self._paste(ts))
        target = _lognormal_length(self.rng, 110, 0.6, 60, 400)
        return self._unique(lambda: self._fill(USER_SENTENCES, target, 420, lambda: " "))

    def _paste(self, ts: datetime) -> str:
        """A prompt with pasted output (a log or a failing test run), 800-3,000 characters."""
        target = self.rng.randint(800, 3000)
        lines = [self.grammar.expand(self.rng.choice(PASTE_INTROS)), "", "```"]
        size = sum(len(line) + 1 for line in lines)
        clock = ts - timedelta(minutes=self.rng.randint(5, 300))
        while size < target:
            clock += timedelta(milliseconds=self.rng.randint(3, 4000))
            stamp = clock.strftime("%Y-%m-%dT%H:%M:%S.") + f"{clock.microsecond // 1000:03d}Z"
            line = self.grammar.expand(self.rng.choice(LOG_LINES), ts=stamp)
            lines.append(line)
            size += len(line) + 1
        lines.append("```")
        if self.rng.random() < 0.5:
            lines += ["", self.grammar.expand(self.rng.choice(USER_SENTENCES))]
        return "\n".join(lines)

    def assistant(self) -> str:
        if self.rng.random() < 0.03:
            target = self.rng.randint(1500, 4000)
            cap = target + 200
        else:
            target = _lognormal_length(self.rng, 260, 0.8, 80, 1500)
            cap = 1500

        def joiner() -> str:
            roll = self.rng.random()
            return "\n\n" if roll < 0.15 else "\n- " if roll < 0.25 else " "

        return self._unique(lambda: self._fill(ASSISTANT_SENTENCES, target, cap, joiner))


# --- transcript lines -------------------------------------------------------------------------

ALNUM = string.ascii_letters + string.digits
VERSIONS = ["2.1.98", "2.1.104", "2.1.123", "2.1.140"]
MODELS = ["claude-opus-4-7", "claude-sonnet-4-6", "claude-opus-4-5-20251101"]
BRANCHES = ["main", "feat/{stem}", "fix/{stem}-{error_id}", "chore/deps", "HEAD"]


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


@dataclass
class _Session:
    """Lines of one session file being generated, and the chain they hang on."""

    rng: random.Random
    grammar: Grammar
    texts: _Texts
    session_id: str
    cwd: str
    version: str
    branch: str
    model: str
    clock: datetime
    lines: list[dict[str, Any]] = field(default_factory=list)
    parent: str | None = None
    prose: list[str] = field(default_factory=list)
    edited: list[str] = field(default_factory=list)
    last_prompt: str = ""
    prompt_id: str | None = None

    def _id(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def _token(self, prefix: str, length: int) -> str:
        return prefix + "".join(self.rng.choice(ALNUM) for _ in range(length))

    def _tick(self, low: float, high: float) -> str:
        self.clock += timedelta(seconds=self.rng.uniform(low, high))
        return _iso(self.clock)

    def _envelope(self, kind: str, record_id: str | None = None, **extra: Any) -> dict[str, Any]:
        record: dict[str, Any] = {"parentUuid": self.parent, "isSidechain": False}
        record.update(extra)
        record["type"] = kind
        record["uuid"] = record_id or self._id()
        record.setdefault("timestamp", _iso(self.clock))
        record.update(
            userType="external",
            entrypoint="cli",
            cwd=self.cwd,
            sessionId=self.session_id,
            version=self.version,
            gitBranch=self.branch,
        )
        self.parent = record["uuid"]
        self.lines.append(record)
        return record

    def _assistant(self, message_id: str, request_id: str, block: dict[str, Any], stop: str) -> str:
        usage = {
            "input_tokens": self.rng.randint(1, 9),
            "cache_creation_input_tokens": self.rng.randint(100, 8000),
            "cache_read_input_tokens": self.rng.randint(10000, 90000),
            "output_tokens": self.rng.randint(20, 900),
            "service_tier": "standard",
        }
        message = {
            "model": self.model,
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "content": [block],
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
        self._tick(0.3, 4.0)
        record = self._envelope("assistant", message=message, requestId=request_id)
        return str(record["uuid"])

    def _thinking(self) -> dict[str, Any]:
        # 2.1.89+ writes empty thinking text with only a signature in most sessions.
        text = "" if self.rng.random() < 0.6 else self.texts.grammar.expand("{cause}. So: {fix}.")
        return {"type": "thinking", "thinking": text, "signature": self._token("Eu8C", 120)}

    def permission_mode(self) -> None:
        mode = self.rng.choice(["default", "default", "acceptEdits", "plan"])
        self.lines.append(
            {"type": "permission-mode", "permissionMode": mode, "sessionId": self.session_id}
        )

    def snapshot(self, message_id: str) -> None:
        backups = {
            path: {
                "backupFileName": self._token("", 16).lower() + f"@v{version}",
                "version": version,
                "backupTime": _iso(self.clock),
            }
            for version, path in enumerate(self.edited[-3:], start=1)
        }
        snapshot: dict[str, Any] = {"messageId": message_id, "trackedFileBackups": backups}
        snapshot["timestamp"] = _iso(self.clock)
        self.lines.append(
            {
                "type": "file-history-snapshot",
                "messageId": message_id,
                "snapshot": snapshot,
                "isSnapshotUpdate": bool(backups) and self.rng.random() < 0.5,
            }
        )

    def user_prompt(self) -> None:
        self._tick(20, 600)
        text = self.texts.user(self.clock)
        self.prompt_id = self._id()
        record_id = self._id()
        if self.rng.random() < 0.5:
            self.snapshot(record_id)  # the snapshot's messageId is the prompt's uuid
        content: Any = text if self.rng.random() < 0.85 else [{"type": "text", "text": text}]
        self._envelope(
            "user",
            record_id,
            promptId=self.prompt_id,
            message={"role": "user", "content": content},
            permissionMode="default",
        )
        self.prose.append(text)
        self.last_prompt = text

    def tool_round(self) -> None:
        """One assistant message of 1-2 tool calls, then one tool_result line per call."""
        message_id = self._token("msg_01", 22)
        request_id = self._token("req_011C", 20)
        if self.rng.random() < 0.2:
            self._assistant(message_id, request_id, self._thinking(), "tool_use")
        calls = []
        for _ in range(self.rng.choice((1, 1, 1, 2))):
            tool = self.rng.choice(("Bash", "Bash", "Read", "Read", "Edit"))
            tool_use_id = self._token("toolu_01", 22)
            tool_input = self._tool_input(tool)
            block = {
                "type": "tool_use",
                "id": tool_use_id,
                "name": tool,
                "input": tool_input,
                "caller": {"type": "direct"},
            }
            calls.append(
                (
                    tool,
                    tool_use_id,
                    tool_input,
                    self._assistant(message_id, request_id, block, "tool_use"),
                )
            )
        for tool, tool_use_id, tool_input, source in calls:
            self._tick(0.5, 30)
            content, structured, failed = self._tool_result(tool, tool_input)
            result: dict[str, Any] = {"tool_use_id": tool_use_id, "type": "tool_result"}
            result["content"] = content
            if tool == "Bash":
                result["is_error"] = failed
            self._envelope(
                "user",
                promptId=self.prompt_id,
                message={"role": "user", "content": [result]},
                toolUseResult=structured,
                sourceToolAssistantUUID=source,
            )

    def _tool_input(self, tool: str) -> dict[str, Any]:
        path = f"{self.cwd}/{self.grammar.expand('{path}')}"
        if tool == "Bash":
            command = self.grammar.expand(self.rng.choice(TOOL_COMMANDS))
            return {"command": command, "description": self.grammar.expand("Run {tool}")}
        if tool == "Read":
            return {"file_path": path}
        self.edited.append(path)
        return {
            "file_path": path,
            "old_string": self.grammar.code(self.rng.choice(CODE_LINES)),
            "new_string": self.grammar.code(self.rng.choice(CODE_LINES)),
            "replace_all": False,
        }

    def _tool_result(self, tool: str, tool_input: dict[str, Any]) -> tuple[str, Any, bool]:
        if tool == "Bash":
            failed = self.rng.random() < 0.15
            out = "\n".join(
                self.grammar.expand(self.rng.choice(LOG_LINES), ts=_iso(self.clock))
                for _ in range(self.rng.randint(1, 12))
            )
            if failed:
                return f"Exit code 1\n{out}", f"Error: Exit code 1\n{out}", True
            structured = {
                "stdout": out,
                "stderr": "",
                "interrupted": False,
                "isImage": False,
                "noOutputExpected": False,
            }
            return out, structured, False
        path = tool_input["file_path"]
        if tool == "Read":
            count = self.rng.randint(5, 60)
            code = [self.grammar.code(self.rng.choice(CODE_LINES)) for _ in range(count)]
            numbered = "\n".join(f"{n}\t{line}" for n, line in enumerate(code, start=1))
            file = {
                "filePath": path,
                "content": "\n".join(code),
                "numLines": len(code),
                "startLine": 1,
                "totalLines": len(code),
            }
            return numbered, {"type": "text", "file": file}, False
        old, new = tool_input["old_string"], tool_input["new_string"]
        start = self.rng.randint(1, 300)
        structured = {
            "filePath": path,
            "oldString": old,
            "newString": new,
            "originalFile": f"{old}\n",
            "structuredPatch": [
                {
                    "oldStart": start,
                    "oldLines": 1,
                    "newStart": start,
                    "newLines": 1,
                    "lines": [f"-{old}", f"+{new}"],
                }
            ],
            "userModified": False,
            "replaceAll": False,
        }
        return f"The file {path} has been updated successfully.", structured, False

    def reply(self) -> None:
        """Some tool rounds (or none), then the reply text as its own message."""
        if self.rng.random() < 0.55:
            for _ in range(self.rng.choice((1, 1, 2, 3))):
                self.tool_round()
        message_id = self._token("msg_01", 22)
        request_id = self._token("req_011C", 20)
        if self.rng.random() < 0.25:
            self._assistant(message_id, request_id, self._thinking(), "end_turn")
        text = self.texts.assistant()
        self._assistant(message_id, request_id, {"type": "text", "text": text}, "end_turn")
        self.prose.append(text)
        if self.rng.random() < 0.3:
            self._tick(0.1, 1)
            self._envelope(
                "system",
                subtype="turn_duration",
                durationMs=self.rng.randint(2000, 180000),
                messageCount=self.rng.randint(2, 60),
                isMeta=False,
            )

    def close(self) -> None:
        self.lines.append(
            {
                "type": "last-prompt",
                "lastPrompt": self.last_prompt,
                "leafUuid": self.parent,
                "sessionId": self.session_id,
            }
        )
        title = self.grammar.expand("{verb} {function} in {stem}").capitalize()
        self.lines.append({"type": "ai-title", "aiTitle": title, "sessionId": self.session_id})


# --- corpus -----------------------------------------------------------------------------------


@dataclass
class Corpus:
    root: Path
    projects: int
    sessions: int
    files: int
    prose: list[str]
    total_lines: int
    bytes: int


def _turns_per_session(rng: random.Random, sessions: int, turns: int) -> list[int]:
    """`sessions` counts of at least 2 that add up to `turns`, spread like real sessions."""
    weights = [rng.lognormvariate(0, 0.7) for _ in range(sessions)]
    total = sum(weights)
    counts = [max(2, round(turns * w / total)) for w in weights]
    while sum(counts) > turns:
        index = rng.randrange(sessions)
        if counts[index] > 2:
            counts[index] -= 1
    while sum(counts) < turns:
        counts[rng.randrange(sessions)] += 1
    return counts


def generate_corpus(root: Path, sessions: int, turns: int, rng: random.Random) -> Corpus:
    """Write the projects root; return what was written and the prose turns, in order."""
    grammar = Grammar(rng)
    texts = _Texts(grammar)
    projects = [*PROJECTS, *(rng.choice(PROJECTS) for _ in range(sessions - len(PROJECTS)))]
    start = datetime(2026, 1, 5, 8, 0, tzinfo=UTC)
    prose: list[str] = []
    total_lines = size = 0
    for count, project in zip(_turns_per_session(rng, sessions, turns), projects, strict=False):
        cwd = f"/home/dev/{project}"
        folder = root / re.sub(r"[^a-zA-Z0-9]", "-", cwd)
        folder.mkdir(parents=True, exist_ok=True)
        session = _Session(
            rng=rng,
            grammar=grammar,
            texts=texts,
            session_id=str(uuid.UUID(int=rng.getrandbits(128), version=4)),
            cwd=cwd,
            version=rng.choice(VERSIONS),
            branch=grammar.expand(rng.choice(BRANCHES), error_id=str(rng.randint(10, 999))),
            model=rng.choice(MODELS),
            clock=start + timedelta(minutes=rng.randint(0, 300 * 24 * 60)),
        )
        session.permission_mode()
        for index in range(count):
            if index % 2 == 0:
                session.user_prompt()
            else:
                session.reply()
            if index == count // 2 and rng.random() < 0.2:
                session.permission_mode()  # a resume writes the mode again
        session.close()
        body = "".join(
            json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n"
            for line in session.lines
        ).encode()
        (folder / f"{session.session_id}.jsonl").write_bytes(body)
        prose.extend(session.prose)
        total_lines += len(session.lines)
        size += len(body)
    return Corpus(root, len(set(projects)), sessions, sessions, prose, total_lines, size)


# --- measurement ------------------------------------------------------------------------------


@dataclass
class Phase:
    """Wall time, CPU time and load average of one phase.

    `cpu_seconds` is this process (all threads: the model, parsing, the database client);
    `db_cpu_seconds` is the embedded PostgreSQL server (index upkeep, WAL). Together with the
    load average they tell a phase that worked more from one that waited for other processes
    competing for the 2 cores.
    """

    seconds: float = 0.0
    cpu_seconds: float = 0.0
    db_cpu_seconds: float = 0.0
    load_1m: float = 0.0

    def figures(self, count: int, unit: str) -> dict[str, float]:
        return {
            "seconds": round(self.seconds, 3),
            f"{unit}_per_s": round(count / self.seconds, 1),
            "cpu_seconds": round(self.cpu_seconds, 1),
            "db_cpu_seconds": round(self.db_cpu_seconds, 1),
            "load_1m_after": round(self.load_1m, 2),
        }


def postgres_cpu_seconds(pgdata: Path) -> float:
    """CPU seconds the embedded server has used so far (Linux `/proc`; 0 elsewhere).

    The postmaster's own time, plus what its exited backends used (cutime/cstime), plus its
    live backends' time.
    """
    try:
        postmaster = int((pgdata / "postmaster.pid").read_text().split()[0])
        ticks = 0
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = (entry / "stat").read_text().rpartition(")")[2].split()
            except OSError:
                continue  # exited meanwhile
            pid, ppid = int(entry.name), int(fields[1])
            if pid == postmaster:
                ticks += sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
            elif ppid == postmaster:
                ticks += int(fields[11]) + int(fields[12])
        return ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


@contextmanager
def timed(pgdata: Path | None = None) -> Iterator[Phase]:
    phase = Phase()
    db = postgres_cpu_seconds(pgdata) if pgdata else 0.0
    wall, cpu = time.perf_counter(), time.process_time()
    yield phase
    phase.seconds = time.perf_counter() - wall
    phase.cpu_seconds = time.process_time() - cpu
    phase.db_cpu_seconds = (postgres_cpu_seconds(pgdata) - db) if pgdata else 0.0
    phase.load_1m = os.getloadavg()[0]


def _windows(embedder: Embedder, texts: list[str]) -> tuple[int, int]:
    """(texts split into several windows, pieces encoded in all) for embed_documents."""
    spans = [len(embedder.windows(text)) for text in texts]
    return sum(1 for n in spans if n > 1), sum(spans)


async def run(session_count: int, turn_count: int, seed: int) -> dict[str, Any]:
    started = time.monotonic()
    rng = random.Random(seed)
    report: dict[str, Any] = {
        "benchmark": "ingest-throughput",
        "seed": seed,
        "cpus": os.cpu_count(),
        "load_1m_at_start": round(os.getloadavg()[0], 2),
    }
    with tempfile.TemporaryDirectory(prefix="ingest-") as scratch:
        root = Path(scratch) / "projects"
        with timed() as generating:
            corpus = generate_corpus(root, session_count, turn_count, rng)
        texts = corpus.prose
        lengths = [len(text) for text in texts]
        settings = Settings(claude_memory_home=Path(scratch) / "home", cache_max_size=0)
        async with open_service(settings) as service:
            embedder = service.embedder
            windowed, pieces = _windows(embedder, texts)
            report["corpus"] = {
                "projects": corpus.projects,
                "sessions": corpus.sessions,
                "files": corpus.files,
                "prose_turns": len(texts),
                "distinct_prose_turns": len(set(texts)),
                "total_lines": corpus.total_lines,
                "bytes": corpus.bytes,
                "mean_chars_per_turn": round(statistics.fmean(lengths), 1),
                "median_chars_per_turn": statistics.median(lengths),
                "max_chars_per_turn": max(lengths),
                "turns_split_into_windows": windowed,
                "pieces_encoded": pieces,
                "seconds_to_generate": round(generating.seconds, 2),
            }

            # The floor: the same texts through the same model, as the import encodes them.
            await embedder.encode_async(texts[:64])  # warm-up, not timed
            pgdata = settings.embedded_pgdata
            with timed(pgdata) as documents:
                await embedder.embed_documents_async(texts)
            with timed(pgdata) as plain:
                await embedder.encode_async(texts)
            raw_rate = len(texts) / documents.seconds
            report["encode"] = {
                "texts": len(texts),
                "model": embedder.name,
                "batch_size": embedder.batch_size,
                "embed_documents": documents.figures(len(texts), "texts"),
                "encode": plain.figures(len(texts), "texts"),
            }

            with timed(pgdata) as importing:
                first = await SessionImporter(service, ImportFilters()).run(root)
            import_rate = first.turns_imported / importing.seconds
            report["first_import"] = {
                **importing.figures(first.turns_imported, "turns"),
                "turns_imported": first.turns_imported,
                "prose_turns_generated": len(texts),
                "all_turns_imported": first.turns_imported == len(texts),
                "ratio_to_encode": round(import_rate / raw_rate, 3),
                # The same ratio in CPU seconds (process + database) per text: what it would
                # be if nothing else competed for the cores.
                "cpu_ratio_to_encode": round(
                    ((documents.cpu_seconds + documents.db_cpu_seconds) / len(texts))
                    / ((importing.cpu_seconds + importing.db_cpu_seconds) / first.turns_imported),
                    3,
                ),
                "indexes_built_after": first.indexes_built_after,
                "files_read": first.files_read,
                "sessions": first.sessions,
                "events": first.events,
                "turns_duplicate": first.turns_duplicate,
                "turns_skipped": dict(sorted(first.turns_skipped.items())),
                "redactions": first.redactions,
                "malformed_lines": first.malformed_lines,
                "errors": first.errors[:5],
            }

            with timed(pgdata) as reimporting:
                again = await SessionImporter(service, ImportFilters()).run(root)
            report["reimport_no_change"] = {
                "seconds": round(reimporting.seconds, 3),
                "turns_imported": again.turns_imported,
                "files_unchanged": again.files_unchanged,
                "files_read": again.files_read,
            }
    ratio = report["first_import"]["ratio_to_encode"]
    report["targets"] = {
        "first_import_ratio_to_encode": {
            "target": f">= {TARGET_RATIO}",
            "value": ratio,
            "met": ratio >= TARGET_RATIO and first.turns_imported == len(texts),
        },
        "reimport_no_change_seconds": {
            "target": f"<= {TARGET_REIMPORT_SECONDS}",
            "value": round(reimporting.seconds, 3),
            "met": reimporting.seconds <= TARGET_REIMPORT_SECONDS and again.turns_imported == 0,
        },
    }
    report["seconds_total"] = round(time.monotonic() - started, 1)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--turns", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    if args.sessions < len(PROJECTS) or args.turns < 2 * args.sessions:
        parser.error(f"need --sessions >= {len(PROJECTS)} and --turns >= 2 * --sessions")
    print(json.dumps(asyncio.run(run(args.sessions, args.turns, args.seed)), indent=2))  # noqa: T201


if __name__ == "__main__":
    main()
