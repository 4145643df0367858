"""What the hooks inject into real sessions, whether the agent used it, and whether learning
from use (issue #38) makes the injections better.

Each corpus (the shared fixtures, ../shared/fixtures, and the outside author's corpus,
../shared/bench/outside-corpus) is replayed as it happened, into a fresh embedded database,
through the real app (`server.app.create_app`, served by uvicorn on a loopback port) and the
product's own importers. Its sources are put in date order: the Claude Code sessions (by their
first timestamp), the notes (by their front matter date; a note without one is imported first)
and each claude.ai conversation (by `created_at`; projects.json and memories.json of an export
are not imported). A note or a conversation is imported when its turn comes, with its dates
moved to the replay's clock. A session is replayed so:

1. POST /api/hooks/session-start once (source "startup"; the receipt is kept by the route);
2. POST /api/hooks/prompt for each human prompt of the main thread, in order, as the product's
   reader finds them (`read_transcript(path).prompts`), with `prompt_id` = the prompt's key and
   the prompt's full text;
3. the session's files (its JSONL, its sub-agents') are copied into a temporary projects root,
   every record's `timestamp` moved to the replay's clock: the records before the first prompt
   fall between the session-start call and the first prompt call, each prompt's turn between
   its call and the next one (gaps compressed, order kept; a sub-agent's records follow the
   main record before them), so every receipt precedes the actions it is judged on;
4. the projects root is imported with SessionImporter, which judges the session's receipts
   (used / unused / contradicted). Earlier sessions are already in, so the store is as it was
   at that moment.

Two passes per corpus, each on a fresh store, with the same budgets (the product's defaults):
- learning_off: `recall_learns_from_use` off;
- learning_on: learning on (verdicts of earlier sessions move later recalls).
A replay of the sessions on a store that already holds them would show recall the sessions'
own words (their imported turns), so there is no "second time through" pass: its precision
would measure that, not learning. `injected_from_this_or_later_sources` counts memories from
the session itself or a later source that were injected (0 when the replay is sound).

Reported per pass (JSON on stdout, progress on stderr), with the settings used and the time:
- prompt tokens injected per prompt, p50 / p95 (a prompt that got nothing counts 0), the share
  of prompts that got an injection, and session-start tokens p50 / p95 (tokens: the product's
  estimate, four characters each, of the `additionalContext` each hook answered);
- per hook (prompt, session_start), from the stored receipts: memories injected (one per
  receipt and memory), how many were judged used / unused / contradicted, how many stayed
  unjudged, and the share used; `prompt_memories_already_in_session`: memories a prompt
  injected that the session-start context or an earlier prompt had already given the session;
- outside corpus only (it has facts.json), relevance. A prompt's turn (the prompt and every
  main-thread line until the next prompt: text, thinking, tool inputs and results; no
  compaction summary, no hook attachment) "touches" a fact chain (a changed fact's versions,
  or one stable fact) when it holds one of the chain's evidence forms (all `expected`
  substrings of one evidence entry, case folded, not inside a longer word or number) and the
  session's project is one the chain is about (its facts' `project` and the projects of the
  sessions and notes its evidence lies in). A stored memory is relevant to the prompt when it
  holds a form of a version of a touched chain whose evidence lies in a source replayed before
  this session, when the memory itself comes from such a source, and when prompt recall could
  reach it (the session's project or no project; any project while the session's folder is
  not a known project yet). `precision`: the share of prompt injections holding at least one
  relevant memory (`precision_where_relevant_existed`: of the injections into prompts that had
  one to find); `recall`: of the prompts with a relevant memory not yet injected in the
  session, the share that got one (`prompts_with_relevant_stored_memory` counts the prompts
  with any, injected before or not); `relevant_text_shown_share`: of the injections with a
  relevant memory, the share whose text (memories are cut to fit the budget) still holds the
  relevant form. facts.json does not cover everything a turn is about, so precision is a
  lower bound;
- outside corpus only, `judge_vs_relevance`: the prompt injections' verdicts against
  relevance: of the injected memories relevant to the prompt's turn, how many were judged
  used, and of the others (a check of the judge against facts.json: used should be more
  common among the relevant ones);
- the change from learning_off to learning_on.

Usage: .venv/bin/python bench/context_receipts.py [--corpus fixtures|outside|both]
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import json
import math
import os
import re
import socket
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import httpx
import uvicorn
from starlette.applications import Starlette

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
sys.path.insert(0, str(ROOT))

from server.app import create_app  # noqa: E402
from server.core.config import Settings  # noqa: E402
from server.core.models.receipts import ReceiptFilter, estimated_tokens  # noqa: E402
from server.core.validation import MAX_PAGE  # noqa: E402
from server.ingest.claude_code import read_records, read_transcript  # noqa: E402
from server.ingest.discovery import TranscriptFile, discover_transcripts  # noqa: E402
from server.ingest.documents import import_claude_ai, import_text  # noqa: E402
from server.ingest.importer import ImportFilters, ImportSummary, SessionImporter  # noqa: E402
from server.ingest.names import project_display_names  # noqa: E402
from server.ingest.text import find_note_files, read_note_file  # noqa: E402
from server.ingest.timestamps import parse_timestamp  # noqa: E402
from server.recall.hook import HookRecall  # noqa: E402
from server.service.embeddings import Embedder  # noqa: E402
from server.service.memory import MemoryService  # noqa: E402
from server.service.runtime import load_embedder, open_service  # noqa: E402
from server.store.tx import transaction  # noqa: E402
from server.worktree.context_check import memory_ids_in  # noqa: E402

CORPORA = {"fixtures": SHARED / "fixtures", "outside": SHARED / "bench" / "outside-corpus"}
HOOKS = ("prompt", "session_start")
VERDICT_NAMES = ("used", "unused", "contradicted", "unjudged")
STEP = timedelta(milliseconds=10)  # the widest gap between two replayed records
EARLIEST = datetime.min.replace(tzinfo=UTC)  # the date of a source that names none
NOTE_DATE = re.compile(r"^(date|created|updated)\s*:.*$", re.MULTILINE)  # as server/ingest/text
NOTE_DATE_FIELDS = ("date", "created", "updated")
CONVERSATION_TIMES = frozenset({"created_at", "updated_at", "start_timestamp", "stop_timestamp"})
# A conversation of a pretty-printed export starts at a line holding only "{" at depth one:
# how facts.json's line numbers are mapped to the conversation they sit in.
CONVERSATION_START = re.compile(r"^  \{\s*$")
# Keys of a message's content that hold no prose: ids and the thinking blocks' signatures.
NOT_TEXT = frozenset({"id", "tool_use_id", "signature", "type"})

SourceKind = Literal["session", "note", "conversation"]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)  # noqa: T201


# --- the corpus: its sources in date order, and its facts ---------------------------------


@dataclass(frozen=True, slots=True)
class Source:
    """One thing replayed: a Claude Code session, a note or one claude.ai conversation."""

    kind: SourceKind
    key: str  # session id, note file name, conversation uuid: what a stored memory names
    at: datetime
    path: Path  # the session's main JSONL, the note, or conversations.json
    helpers: tuple[TranscriptFile, ...] = ()  # a session's sub-agent transcripts
    project_dir: str = ""
    project: str = ""  # as the importer names it (a session) or the front matter says (a note)


def sources_of(corpus: Path) -> list[Source]:
    """The corpus's sessions, notes and conversations, oldest first."""
    found = discover_transcripts(corpus / "claude-code" / "projects")
    subagents = [t for t in found if t.kind == "subagent"]
    sessions = [t for t in found if t.kind == "session"]
    folders = {t.path: read_transcript(t.path).cwd or "" for t in sessions}
    names = project_display_names(set(folders.values()))
    sources = []
    for transcript in sessions:
        key = transcript.session_id or transcript.path.stem
        helpers = tuple(t for t in subagents if parent_session(t) == key)
        sources.append(
            Source("session", key, first_time(transcript.path), transcript.path, helpers,
                   transcript.project_dir, names.get(folders[transcript.path], ""))
        )  # fmt: skip
    if (corpus / "notes").is_dir():
        for path in find_note_files([corpus / "notes"]):
            note = read_note_file(path)
            # A note that names no date of its own is known before any session.
            dated = any(name in note.metadata for name in NOTE_DATE_FIELDS)
            at = note.created_at if dated else EARLIEST
            project = note.metadata.get("project")
            sources.append(Source("note", path.name, at, path, project=str(project or "")))
    chats = corpus / "claude-ai" / "conversations.json"
    if chats.is_file():
        for conversation in json.loads(chats.read_text(encoding="utf-8")):
            at = parse_timestamp(conversation.get("created_at")) or EARLIEST
            sources.append(Source("conversation", conversation["uuid"], at, chats))
    return sorted(sources, key=lambda s: (s.at, s.kind, s.key))


def parent_session(transcript: TranscriptFile) -> str | None:
    """The session a sub-agent transcript belongs to (a 2.0.x flat file says so only inside)."""
    if transcript.session_id:
        return transcript.session_id
    for _, record in read_records(transcript.path):
        session = record.get("sessionId")
        if isinstance(session, str):
            return session
    return None


def first_time(path: Path) -> datetime:
    times = [t for _, r in read_records(path) if (t := parse_timestamp(r.get("timestamp")))]
    return min(times, default=EARLIEST)


@dataclass(frozen=True, slots=True)
class Version:
    """One version of a fact chain (a stable fact is a chain of one): the forms it is stated
    in (each a set of substrings that must all occur) and where it is first stated."""

    id: str
    chain: str
    forms: tuple[tuple[re.Pattern[str], ...], ...]
    first: int  # index of the earliest source stating it, in replay order
    # The projects its chain is about (None: every project): see `chain_projects`.
    projects: frozenset[str] | None = None

    def in_text(self, folded: str) -> bool:
        return any(all(p.search(folded) for p in form) for form in self.forms)


def substring(text: str) -> re.Pattern[str]:
    """`text`, case folded, not as part of a longer word or number ("MAPE" is not in "sMAPE",
    "10m" not in "10ms"): the evidence strings are short and would otherwise match noise."""
    folded = text.lower()
    before = r"(?<![0-9a-z])" if folded[:1].isalnum() else ""
    after = r"(?![0-9a-z])" if folded[-1:].isalnum() else ""
    return re.compile(before + re.escape(folded) + after)


def load_versions(corpus: Path, sources: list[Source]) -> list[Version] | None:
    """The fact versions of facts.json (None when the corpus has none), each with the replay
    index of the first source its evidence lies in."""
    facts_file = corpus / "facts.json"
    if not facts_file.is_file():
        return None
    index: dict[tuple[str, str], int] = {(s.kind, s.key): n for n, s in enumerate(sources)}
    chats = conversation_at_line(corpus / "claude-ai" / "conversations.json")
    facts = json.loads(facts_file.read_text(encoding="utf-8"))["facts"]
    versions = []
    for fact in facts:
        where = [index[evidence_source(e, chats)] for e in fact["evidence"]]
        forms = tuple(tuple(substring(s) for s in e["expected"]) for e in fact["evidence"])
        versions.append(Version(fact["id"], fact.get("chain") or fact["id"], forms, min(where)))
    projects = chain_projects(facts, sources, chats)
    return [replace(v, projects=projects[v.chain]) for v in versions]


def chain_projects(
    facts: list[dict[str, Any]], sources: list[Source], chats: Sequence[tuple[int, str]]
) -> dict[str, frozenset[str] | None]:
    """Per chain, the projects it is about: its facts' `project` and the projects of the
    sessions and notes its evidence lies in (None when a fact names no project). A turn of
    another project does not touch it: short evidence strings ("02:00 UTC", "28 days") also
    occur, meaning something else, in other projects."""
    by_key: dict[tuple[str, str], str] = {(s.kind, s.key): s.project for s in sources}
    chains: dict[str, frozenset[str] | None] = {}
    for fact in facts:
        chain = fact.get("chain") or fact["id"]
        found = {by_key[evidence_source(e, chats)] for e in fact["evidence"]} - {""}
        known = chains.get(chain, frozenset())
        if fact["project"] is None or known is None:
            chains[chain] = None
        else:
            chains[chain] = known | found | {fact["project"]}
    return chains


def evidence_source(evidence: dict[str, Any], chats: Sequence[tuple[int, str]]) -> tuple[str, str]:
    """The (kind, key) of the source an evidence entry of facts.json lies in."""
    path = Path(evidence["file"])
    if path.parts[0] == "notes":
        return "note", path.name
    if path.parts[0] == "claude-ai":
        starts = [line for line, _ in chats]
        return "conversation", chats[bisect.bisect_right(starts, evidence["line"]) - 1][1]
    if "subagents" in path.parts:
        return "session", path.parts[path.parts.index("subagents") - 1]
    return "session", path.stem


def conversation_at_line(path: Path) -> list[tuple[int, str]]:
    """(first line, uuid) of each conversation of a pretty-printed conversations.json."""
    if not path.is_file():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    starts = [n for n, line in enumerate(lines, start=1) if CONVERSATION_START.match(line)]
    uuids = [c["uuid"] for c in json.loads("\n".join(lines))]
    if len(starts) != len(uuids):
        raise SystemExit(f"{path}: cannot tell which lines hold which conversation")
    return list(zip(starts, uuids, strict=True))


def turn_texts(path: Path, prompt_uuids: dict[str, str]) -> dict[str, str]:
    """Per prompt key, the case-folded text of its turn: the prompt's line and every line of
    the main thread after it until the next prompt (prose, thinking, tool inputs and results;
    not compaction summaries, attachments or sub-agent lines)."""
    texts: dict[str, list[str]] = {}
    current: str | None = None
    for _, record in read_records(path):
        key = prompt_uuids.get(str(record.get("uuid")))
        if key is not None and key not in texts:
            current = key
            texts[key] = []
        if (
            current is None
            or record.get("type") not in ("user", "assistant")
            or record.get("isCompactSummary")
            or record.get("isSidechain")
        ):
            continue
        message = record.get("message")
        if isinstance(message, dict):
            texts[current].extend(strings(message.get("content")))
    return {key: "\n".join(parts).lower() for key, parts in texts.items()}


def strings(value: Any) -> Iterator[str]:
    """Every string in a message's content, ids and signatures left out."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in NOT_TEXT:
                yield from strings(item)


# --- moving a source onto the replay's clock ------------------------------------------------


def stamp(at: datetime) -> str:
    return at.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def write_session(
    source: Source, session_id: str, prompt_uuids: Sequence[str], marks: Sequence[datetime],
    root: Path,
) -> None:  # fmt: skip
    """Copy a session's transcripts under `root`, their timestamps moved between `marks`
    (the session-start call, each prompt's call, now) and their session id `session_id`."""
    folder = root / source.project_dir
    folder.mkdir(parents=True, exist_ok=True)
    lines = source.path.read_bytes().splitlines(keepends=True)
    records = [parsed(line) for line in lines]
    # Segment 0 is what comes before the first prompt, segment k the turn of prompt k.
    order = {u: k for k, u in enumerate(prompt_uuids, start=1)}
    segments, segment = [], 0
    for record in records:
        if record is not None:
            segment = max(segment, order.get(str(record.get("uuid")), 0))
        segments.append(segment)
    timed = Counter(s for r, s in zip(records, segments, strict=True) if record_time(r))
    placed = Counter[int]()
    moved: list[tuple[datetime, datetime]] = []  # (old, new) of the main records
    out = []
    for line, record, segment in zip(lines, records, segments, strict=True):
        if record is None:
            out.append(line)  # a line the reader skips stays as it was
            continue
        old = record_time(record)
        if old is not None:
            start, end = marks[segment], marks[min(segment + 1, len(marks) - 1)]
            step = min(STEP, (end - start) / (timed[segment] + 1))
            placed[segment] += 1
            new = start + step * placed[segment]
            moved.append((old, new))
            record["timestamp"] = stamp(new)
        out.append(dumped(record))
    (folder / f"{session_id}.jsonl").write_bytes(b"".join(out))
    moved.sort(key=lambda pair: pair[0])
    for helper in source.helpers:
        write_helper(helper, source, session_id, moved, marks[0], folder)


def write_helper(
    helper: TranscriptFile, source: Source, session_id: str,
    moved: Sequence[tuple[datetime, datetime]], first: datetime, folder: Path,
) -> None:  # fmt: skip
    """Copy a sub-agent transcript, each record just after the main record before it."""
    olds = [old for old, _ in moved]
    out = []
    for offset, line in enumerate(helper.path.read_bytes().splitlines(keepends=True), start=1):
        record = parsed(line)
        if record is None:
            out.append(line)
            continue
        old = record_time(record)
        if old is not None:
            before = bisect.bisect_right(olds, old) - 1
            base = moved[before][1] if before >= 0 else first
            record["timestamp"] = stamp(base + timedelta(microseconds=offset))
        out.append(dumped(record))
    relative = helper.path.relative_to(source.path.parent)
    if relative.parts[0] == source.key:  # <session>/subagents/agent-<id>.jsonl
        relative = Path(session_id, *relative.parts[1:])
    target = folder / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"".join(out))
    meta = helper.path.with_name(helper.path.name.removesuffix(".jsonl") + ".meta.json")
    if meta.is_file():
        target.with_name(meta.name).write_bytes(meta.read_bytes())


def parsed(line: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(line)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def record_time(record: dict[str, Any] | None) -> datetime | None:
    return parse_timestamp(record.get("timestamp")) if record is not None else None


def dumped(record: dict[str, Any]) -> bytes:
    return (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")


def write_note(source: Source, now: datetime, folder: Path) -> Path:
    """A copy of the note dated now (front matter dates and mtime), as if written now."""
    folder.mkdir(parents=True, exist_ok=True)
    text = source.path.read_text(encoding="utf-8")
    if text.startswith("---\n") and (end := text.find("\n---", 4)) > 0:
        head = NOTE_DATE.sub(lambda m: f"{m.group(1)}: {stamp(now)}", text[:end])
        text = head + text[end:]
    target = folder / source.path.name
    target.write_text(text, encoding="utf-8")
    os.utime(target, (now.timestamp(), now.timestamp()))
    return target


def write_conversation(source: Source, now: datetime, folder: Path) -> Path:
    """The one conversation as an export file, its times moved to `now` on (order kept)."""
    folder.mkdir(parents=True, exist_ok=True)
    chats = json.loads(source.path.read_text(encoding="utf-8"))
    conversation = next(c for c in chats if c["uuid"] == source.key)
    olds = {text: at for text in times_in(conversation) if (at := parse_timestamp(text))}
    new = {text: stamp(now + STEP * n) for n, text in enumerate(sorted(olds, key=olds.__getitem__))}
    target = folder / f"{source.key}.json"
    target.write_text(json.dumps([retimed(conversation, new)], ensure_ascii=False), "utf-8")
    return target


def times_in(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key in CONVERSATION_TIMES and isinstance(item, str):
                yield item
            else:
                yield from times_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from times_in(item)


def retimed(value: Any, new: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {
            k: new.get(v, v) if k in CONVERSATION_TIMES and isinstance(v, str) else retimed(v, new)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [retimed(item, new) for item in value]
    return value


# --- one replay ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Stored:
    """A stored memory as relevance needs it."""

    id: int
    text: str  # case folded
    project: str
    origin: int | None  # replay index of the source it came from


@dataclass(slots=True)
class PromptOutcome:
    tokens: int
    memory_ids: list[int]
    session_id: str = ""
    prompt_id: str = ""
    relevant_ids: set[int] = field(default_factory=set)  # injected ones that are relevant
    touched: bool = False  # its turn touches a chain with an earlier stated version
    relevant_stored: bool = False  # a relevant memory was stored
    relevant_available: bool = False  # one not yet injected in the session
    relevant_injected: bool = False
    relevant_text_shown: bool = False  # the injected text itself holds the relevant form


@dataclass(slots=True)
class Replay:
    """One pass over a corpus: its app, its store, what it saw."""

    name: str
    service: MemoryService
    client: httpx.AsyncClient
    recall: HookRecall  # for the project of a folder, as the hooks find it
    sources: list[Source]
    versions: list[Version] | None
    folder: Path
    prompts: list[PromptOutcome] = field(default_factory=list)
    start_tokens: list[int] = field(default_factory=list)
    session_ids: list[str] = field(default_factory=list)
    foreign: Counter[str] = field(default_factory=Counter)  # per hook: injected memories
    # that came from this session or a later source (none, when the replay is sound)
    repeated: int = 0  # memories a prompt injected that the session had already been given
    mentions: dict[int, list[Version]] = field(default_factory=dict)  # memory id -> versions


async def replay(run: Replay) -> None:
    for index, source in enumerate(run.sources):
        if source.kind == "session":
            await replay_session(run, index, source)
            continue
        now = datetime.now(UTC)
        if source.kind == "note":
            note = write_note(source, now, run.folder / "notes")
            summary = await import_text(run.service, [note])
        else:
            chat = write_conversation(source, now, run.folder / "claude-ai")
            summary = await import_claude_ai(run.service, chat)
        check(summary, source)


async def replay_session(run: Replay, index: int, source: Source) -> None:
    session_id = source.key
    run.session_ids.append(session_id)
    chunk = read_transcript(source.path)
    cwd = chunk.cwd or ""
    said = {turn.uuid: turn.text for turn in chunk.turns}
    prompts = chunk.prompts
    turns = turn_texts(source.path, {p.uuid: p.key for p in prompts})
    project = await run.recall.project_for(cwd)
    stored = await stored_memories(run)
    earlier = {m.id for m in stored if m.origin is not None and m.origin < index}

    answer = await post(run, "session-start", session_id=session_id, cwd=cwd, source="startup")
    run.start_tokens.append(estimated_tokens(len(answer["additionalContext"])))
    shown = set(memory_ids_in(answer["additionalContext"]))
    run.foreign["session_start"] += len(shown - earlier)
    marks = [datetime.now(UTC)]
    for prompt in prompts:
        answer = await post(
            run, "prompt", session_id=session_id, cwd=cwd,
            prompt=said.get(prompt.uuid, prompt.text), prompt_id=prompt.key,
        )  # fmt: skip
        marks.append(datetime.now(UTC))
        text: str = answer["additionalContext"]
        outcome = PromptOutcome(
            estimated_tokens(len(text)), list(answer["memory_ids"]), session_id, prompt.key
        )
        run.foreign["prompt"] += sum(1 for i in outcome.memory_ids if i not in earlier)
        if run.versions is not None:
            judge_relevance(run, outcome, index, turns.get(prompt.key, ""), text.lower(), stored,
                            project, shown)  # fmt: skip
        run.repeated += len(shown.intersection(outcome.memory_ids))
        shown.update(outcome.memory_ids)
        run.prompts.append(outcome)
    marks.append(datetime.now(UTC))
    write_session(source, session_id, [p.uuid for p in prompts], marks, run.folder / "projects")
    check(await SessionImporter(run.service, ImportFilters()).run(run.folder / "projects"), source)
    log(f"  {run.name}: session {source.key[:8]} ({len(prompts)} prompts) replayed")


def judge_relevance(
    run: Replay, outcome: PromptOutcome, index: int, turn: str, shown_text: str,
    stored: Sequence[Stored], project: str | None, shown: set[int],
) -> None:  # fmt: skip
    """Fill in the relevance fields of one prompt's outcome (see the module docstring):
    `turn` and `shown_text` (what was injected) are case folded, `shown` holds the memories
    already injected into the session."""
    assert run.versions is not None
    project_name = run.sources[index].project
    touched = {
        v.chain
        for v in run.versions
        if (v.projects is None or project_name in v.projects) and v.in_text(turn)
    }
    wanted = [v for v in run.versions if v.chain in touched and v.first < index]
    wanted_ids = {v.id for v in wanted}
    outcome.touched = bool(wanted)
    relevant = {
        m.id
        for m in stored
        if m.origin is not None
        and m.origin < index
        and (project is None or m.project in (project, ""))
        and any(v.id in wanted_ids for v in versions_in(run, m))
    }
    outcome.relevant_stored = bool(relevant)
    outcome.relevant_available = bool(relevant - shown)
    outcome.relevant_ids = relevant.intersection(outcome.memory_ids)
    outcome.relevant_injected = bool(outcome.relevant_ids)
    outcome.relevant_text_shown = any(v.in_text(shown_text) for v in wanted)


def versions_in(run: Replay, memory: Stored) -> list[Version]:
    if memory.id not in run.mentions:
        assert run.versions is not None
        run.mentions[memory.id] = [v for v in run.versions if v.in_text(memory.text)]
    return run.mentions[memory.id]


async def stored_memories(run: Replay) -> list[Stored]:
    """Every live memory, with the replay index of the source it came from: a session or
    conversation by its session id, a note by its file name."""
    index = {s.key: n for n, s in enumerate(run.sources)}
    async with transaction(run.service.pool) as conn:
        cur = await conn.execute(
            "SELECT id, content, project, coalesce(session_id, ''),"
            " coalesce(metadata->>'path', '') FROM memories WHERE deleted_at IS NULL"
        )
        rows = await cur.fetchall()
    return [
        Stored(int(i), str(content).lower(), str(project),
               index.get(str(session)) if session else index.get(Path(str(path)).name))
        for i, content, project, session, path in rows
    ]  # fmt: skip


async def post(run: Replay, hook: str, **body: str) -> dict[str, Any]:
    response = await run.client.post(f"/api/hooks/{hook}", json=body)
    response.raise_for_status()
    return dict(response.json())


def check(summary: ImportSummary, source: Source) -> None:
    if summary.errors:
        raise SystemExit(f"import of {source.kind} {source.key} failed: {summary.errors}")


# --- scoring ---------------------------------------------------------------------------------


def percentile(values: Sequence[int], q: float) -> int | None:
    """Nearest rank."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(math.ceil(q * len(ordered)) - 1, 0)]


def share(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


async def verdicts(run: Replay) -> dict[str, dict[str, Any]]:
    """Per hook: memories injected (per receipt) and how they were judged."""
    counts = {hook: Counter[str]() for hook in HOOKS}
    for session_id in run.session_ids:
        page = await run.service.receipts(ReceiptFilter(session_id=session_id), limit=MAX_PAGE)
        judged = {(u.receipt_id, u.memory_id): u.verdict for u in page.uses}
        for receipt in page.receipts:
            if receipt.hook not in counts:
                continue
            for memory_id in dict.fromkeys(receipt.memory_ids):
                counts[receipt.hook]["injected"] += 1
                counts[receipt.hook][judged.get((receipt.id, memory_id), "unjudged")] += 1
    report: dict[str, dict[str, Any]] = {}
    for hook, c in counts.items():
        judged_total = c["used"] + c["unused"] + c["contradicted"]
        report[hook] = {
            "memories_injected": c["injected"],
            **{name: c[name] for name in VERDICT_NAMES},
            "used_share": share(c["used"], c["injected"]),
            "used_share_of_judged": share(c["used"], judged_total),
        }
    return report


async def judge_agreement(run: Replay) -> dict[str, Any]:
    """How the judge's verdicts on prompt injections line up with facts.json: of the injected
    memories relevant to the prompt's turn, the share judged used, and of the others. A judge
    that reads use well marks relevant memories used more often than irrelevant ones (a
    relevant memory can still go unused: the agent may not need it)."""
    verdict: dict[tuple[str, str, int], str] = {}
    for session_id in run.session_ids:
        page = await run.service.receipts(ReceiptFilter(session_id=session_id), limit=MAX_PAGE)
        prompt_of = {r.id: r.prompt_id for r in page.receipts if r.hook == "prompt"}
        for u in page.uses:
            if u.receipt_id in prompt_of:
                verdict[(session_id, prompt_of[u.receipt_id], u.memory_id)] = u.verdict
    tally: Counter[tuple[bool, str]] = Counter()
    for outcome in run.prompts:
        for memory_id in outcome.memory_ids:
            judged = verdict.get((outcome.session_id, outcome.prompt_id, memory_id), "unjudged")
            tally[(memory_id in outcome.relevant_ids, judged)] += 1

    def used_share(relevant: bool) -> float | None:
        judged = sum(n for (r, v), n in tally.items() if r == relevant and v != "unjudged")
        used = tally[(relevant, "used")] + tally[(relevant, "contradicted")]
        return share(used, judged)

    return {
        "relevant": {v: tally[(True, v)] for v in VERDICT_NAMES},
        "not_relevant": {v: tally[(False, v)] for v in VERDICT_NAMES},
        "used_share_relevant": used_share(True),
        "used_share_not_relevant": used_share(False),
    }


def relevance(prompts: Sequence[PromptOutcome]) -> dict[str, Any]:
    injected = [p for p in prompts if p.memory_ids]
    hits = sum(p.relevant_injected for p in injected)
    wanting = [p for p in prompts if p.relevant_available]
    injected_wanting = [p for p in injected if p.relevant_available]
    return {
        "prompts_touching_an_earlier_fact": sum(p.touched for p in prompts),
        "prompts_with_relevant_stored_memory": sum(p.relevant_stored for p in prompts),
        "prompts_with_relevant_memory_not_yet_injected": len(wanting),
        "injections": len(injected),
        "injections_with_relevant_memory": hits,
        "precision": share(hits, len(injected)),
        "precision_where_relevant_existed": share(
            sum(p.relevant_injected for p in injected_wanting), len(injected_wanting)
        ),
        "recall": share(sum(p.relevant_injected for p in wanting), len(wanting)),
        "relevant_text_shown_share": share(
            sum(p.relevant_text_shown for p in injected if p.relevant_injected), hits
        ),
    }


async def score(run: Replay, seconds: float) -> dict[str, Any]:
    tokens = [p.tokens for p in run.prompts]
    report: dict[str, Any] = {
        "learns_from_use": run.service.settings.recall_learns_from_use,
        "sessions": len(run.session_ids),
        "prompts": len(tokens),
        "prompt_injected_share": share(sum(1 for t in tokens if t), len(tokens)),
        "prompt_tokens_p50": percentile(tokens, 0.5),
        "prompt_tokens_p95": percentile(tokens, 0.95),
        "prompt_tokens_total": sum(tokens),
        "session_start_tokens_p50": percentile(run.start_tokens, 0.5),
        "session_start_tokens_p95": percentile(run.start_tokens, 0.95),
        "verdicts": await verdicts(run),
        "injected_from_this_or_later_sources": {hook: run.foreign[hook] for hook in HOOKS},
        "prompt_memories_already_in_session": run.repeated,
    }
    if run.versions is not None:
        report["relevance"] = relevance(run.prompts)
        report["judge_vs_relevance"] = await judge_agreement(run)
    report["seconds"] = round(seconds, 1)
    return report


def change(before: dict[str, Any], after: dict[str, Any]) -> dict[str, float | None]:
    """after - before for the figures learning is meant to move."""
    pairs: dict[str, Callable[[dict[str, Any]], Any]] = {
        "prompt_injected_share": lambda r: r["prompt_injected_share"],
        "prompt_tokens_p50": lambda r: r["prompt_tokens_p50"],
        "prompt_used_share": lambda r: r["verdicts"]["prompt"]["used_share"],
        "prompt_used_share_of_judged": lambda r: r["verdicts"]["prompt"]["used_share_of_judged"],
    }
    if "relevance" in before:
        pairs["precision"] = lambda r: r["relevance"]["precision"]
        pairs["recall"] = lambda r: r["relevance"]["recall"]
    delta: dict[str, float | None] = {}
    for name, get in pairs.items():
        a, b = get(before), get(after)
        delta[name] = None if a is None or b is None else round(b - a, 3)
    return delta


# --- the app, the passes, the corpora ---------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@asynccontextmanager
async def serving(app: Starlette) -> AsyncIterator[httpx.AsyncClient]:
    """The app served by uvicorn on a loopback port, and a client of it, until the block ends."""
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, lifespan="on")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            raise RuntimeError("the app did not start")
        await asyncio.sleep(0.05)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=120) as client:
            yield client
    finally:
        server.should_exit = True
        await task


async def one_pass(
    name: str, service: MemoryService, settings: Settings, sources: list[Source],
    versions: list[Version] | None, folder: Path,
) -> dict[str, Any]:  # fmt: skip
    started = time.monotonic()
    async with serving(create_app(settings, service)) as client:
        run = Replay(
            name, service, client, HookRecall(service, settings), sources, versions, folder,
        )  # fmt: skip
        await replay(run)
        # The prompt route journals its prompt after answering: let the last one land.
        await asyncio.sleep(0.2)
    return await score(run, time.monotonic() - started)


async def run_corpus(
    name: str, corpus: Path, embedder: Embedder, scratch: Path
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The two passes over one corpus; its report and the settings used."""
    sources = sources_of(corpus)
    versions = load_versions(corpus, sources)
    kinds = Counter(s.kind for s in sources)
    log(f"{name}: {kinds['session']} sessions, {kinds['note']} notes, "
        f"{kinds['conversation']} conversations")  # fmt: skip
    off = Settings(
        claude_memory_home=scratch / name / "off", cache_max_size=0, recall_learns_from_use=False
    )
    on = replace(off, claude_memory_home=scratch / name / "on", recall_learns_from_use=True)
    passes: dict[str, Any] = {}
    async with open_service(off, embedder=embedder) as service:
        used = settings_used(off, service)
        passes["learning_off"] = await one_pass(
            "learning_off", service, off, sources, versions, scratch / name / "1"
        )
    async with open_service(on, embedder=embedder) as service:
        passes["learning_on"] = await one_pass(
            "learning_on", service, on, sources, versions, scratch / name / "2"
        )
    report = {
        "corpus": str(corpus.relative_to(ROOT.parent)),
        "sessions": kinds["session"],
        "notes": kinds["note"],
        "conversations": kinds["conversation"],
        "passes": passes,
        "change": {
            "learning_on_vs_off": change(passes["learning_off"], passes["learning_on"]),
        },
    }
    return report, used


def settings_used(settings: Settings, service: MemoryService) -> dict[str, Any]:
    return {
        "embedding_model": service.embedder.name,
        "recall_threshold": round(HookRecall(service, settings).threshold, 4),
        "recall_max_hits": settings.recall_max_hits,
        "recall_max_chars": settings.recall_max_chars,
        "context_start_tokens": settings.context_start_tokens,
        "context_prompt_tokens": settings.context_prompt_tokens,
        "context_session_tokens": settings.context_session_tokens,
        "recall_use_half_life_days": settings.recall_use_half_life_days,
    }


async def main_async(names: list[str], scratch: Path) -> dict[str, Any]:
    started = time.monotonic()
    embedder, unreachable = await load_embedder(Settings(claude_memory_home=scratch))
    if unreachable:
        raise SystemExit(unreachable)
    corpora: dict[str, Any] = {}
    used: dict[str, Any] = {}
    for name in names:
        corpus_started = time.monotonic()
        corpora[name], used = await run_corpus(name, CORPORA[name], embedder, scratch)
        corpora[name]["seconds"] = round(time.monotonic() - corpus_started, 1)
    return {
        "benchmark": "context-receipts",
        "settings": used,
        "corpora": corpora,
        "seconds_total": round(time.monotonic() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", choices=[*CORPORA, "both"], default="both")
    args = parser.parse_args()
    names = list(CORPORA) if args.corpus == "both" else [args.corpus]
    with tempfile.TemporaryDirectory(prefix="receipts-bench-", ignore_cleanup_errors=True) as tmp:
        report = asyncio.run(main_async(names, Path(tmp)))
    print(json.dumps(report, indent=2))  # noqa: T201


if __name__ == "__main__":
    main()
