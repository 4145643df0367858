"""`claude-memory export-training`: Claude Code sessions as a chat dataset for fine-tuning.

Reads the transcripts themselves (the journal keeps only bounded previews), one record per
human prompt (server/ingest/training.py), validates every record (server/domain/training.py)
and writes the valid ones, once each, to `train.jsonl` and `validation.jsonl`, split by
session; `manifest.jsonl` says where each record came from, since the format has no field
for it. Needs no database. Rules chosen here:

- A prompt the user interrupted is left out, counted, not reported: its answer is partial
  or shows a call the user refused.
- Sub-agent transcripts are not read: the parent's record holds the Agent call and its report.
- Project names are the last segments of the sessions' working directories, disambiguated
  among the sessions found (as the importer names them, without the stored names).
- Files are written whole or not at all (a temporary file renamed into place); a run that
  finds nothing valid writes nothing.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from server.domain.project_rule import names_project
from server.domain.training import (
    DEFAULT_MAX_MESSAGE_CHARS,
    DEFAULT_MAX_RECORD_CHARS,
    DEFAULT_VALIDATION_SHARE,
    Problem,
    record_hash,
    record_line,
    validate_record,
    validation_sessions,
)
from server.ingest.discovery import discover_transcripts
from server.ingest.names import project_display_names
from server.ingest.training import Exchange, exchange_record, read_exchanges

TRAIN_FILE = "train.jsonl"
VALIDATION_FILE = "validation.jsonl"
MANIFEST_FILE = "manifest.jsonl"
PROMPT_PREVIEW_CHARS = 60  # of a rejected record's prompt, in its report line


@dataclass(frozen=True, slots=True)
class ExportOptions:
    out: Path
    project: str | None = None  # display name or path, case-insensitive
    validation_share: float = DEFAULT_VALIDATION_SHARE
    max_message_chars: int = DEFAULT_MAX_MESSAGE_CHARS
    max_record_chars: int = DEFAULT_MAX_RECORD_CHARS
    dry_run: bool = False


@dataclass(frozen=True, slots=True)
class _Kept:
    session_id: str
    project: str
    exchange: Exchange
    line: str
    digest: str


@dataclass(slots=True)
class ExportSummary:
    """What a run found and wrote, for the terminal and for `--json`."""

    root: str
    out: str
    dry_run: bool
    sessions_read: int = 0
    subagent_files_skipped: int = 0
    prompts: int = 0  # in the chosen projects
    train: int = 0
    validation: int = 0
    train_sessions: int = 0
    validation_sessions: int = 0
    duplicates: int = 0
    interrupted: int = 0
    other_project: int = 0
    rejected: int = 0
    rejected_by_reason: Counter[str] = field(default_factory=Counter)
    rejected_records: list[str] = field(default_factory=list)
    redactions: int = 0
    results_cut: int = 0
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def written(self) -> int:
        return self.train + self.validation

    def as_json(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "out": self.out,
            "dry_run": self.dry_run,
            "sessions_read": self.sessions_read,
            "subagent_files_skipped": self.subagent_files_skipped,
            "prompts": self.prompts,
            "train": self.train,
            "validation": self.validation,
            "train_sessions": self.train_sessions,
            "validation_sessions": self.validation_sessions,
            "duplicates": self.duplicates,
            "interrupted": self.interrupted,
            "other_project": self.other_project,
            "rejected": self.rejected,
            "rejected_by_reason": dict(sorted(self.rejected_by_reason.items())),
            "rejected_records": self.rejected_records,
            "redactions": self.redactions,
            "results_cut": self.results_cut,
            "errors": self.errors,
            "seconds": round(self.seconds, 3),
        }


def export_training(root: Path, options: ExportOptions) -> ExportSummary:
    """Read every session under a projects root, write the valid records (unless a dry run)."""
    started = time.monotonic()
    summary = ExportSummary(root=str(root), out=str(options.out), dry_run=options.dry_run)
    files = discover_transcripts(root)
    summary.subagent_files_skipped = sum(1 for f in files if f.kind == "subagent")
    sessions = []
    for transcript in files:
        if transcript.kind != "session":
            continue
        try:
            found = read_exchanges(transcript.path)
        except OSError as exc:
            summary.errors.append(f"{transcript.path}: cannot read: {exc.strerror or exc}")
            continue
        summary.sessions_read += 1
        sessions.append((transcript.session_id or transcript.path.stem, found))
    names = project_display_names(found.cwd for _, found in sessions if found.cwd)
    kept: list[_Kept] = []
    digests: set[str] = set()
    for session_id, found in sessions:
        project = names.get(found.cwd, "") if found.cwd else ""
        if not _wanted(options.project, project, found.cwd or ""):
            summary.other_project += len(found.exchanges)
            continue
        for exchange in found.exchanges:
            summary.prompts += 1
            if exchange.interrupted:
                summary.interrupted += 1
                continue
            built = exchange_record(
                exchange, cwd=found.cwd, max_message_chars=options.max_message_chars
            )
            problems = _problems(exchange, built.record, options)
            if problems:
                _reject(summary, session_id, exchange, built.record, problems)
                continue
            digest = record_hash(built.record)
            if digest in digests:
                summary.duplicates += 1
                continue
            digests.add(digest)
            summary.redactions += built.redactions
            summary.results_cut += built.results_cut
            kept.append(_Kept(session_id, project, exchange, record_line(built.record), digest))
    _split_and_write(kept, summary, options)
    summary.seconds = time.monotonic() - started
    return summary


def _wanted(wanted: str | None, project: str, project_path: str) -> bool:
    if wanted is None:
        return True
    return names_project(wanted, project, project_path)


def _problems(exchange: Exchange, record: dict[str, Any], options: ExportOptions) -> list[Problem]:
    problems = validate_record(
        record,
        max_message_chars=options.max_message_chars,
        max_record_chars=options.max_record_chars,
    )
    if exchange.lost_calls:
        problems.insert(
            0, Problem("lost_calls", "the transcript ends where the answer's tool calls were lost")
        )
    return problems


def _reject(
    summary: ExportSummary,
    session_id: str,
    exchange: Exchange,
    record: dict[str, Any],
    problems: list[Problem],
) -> None:
    """Count a rejected record and describe it in one line: session, prompt, reasons."""
    summary.rejected += 1
    summary.rejected_by_reason.update({problem.code for problem in problems})
    prompt = " ".join(str(record["messages"][1]["content"]).split())
    if len(prompt) > PROMPT_PREVIEW_CHARS:
        prompt = prompt[: PROMPT_PREVIEW_CHARS - 1] + "…"
    quoted = json.dumps(prompt, ensure_ascii=False)
    reasons = "; ".join(problem.message for problem in problems)
    summary.rejected_records.append(
        f"session {session_id} line {exchange.line_number} {quoted}: {reasons}"
    )


def _split_and_write(kept: list[_Kept], summary: ExportSummary, options: ExportOptions) -> None:
    validation = validation_sessions({k.session_id for k in kept}, options.validation_share)
    files: dict[str, list[str]] = {TRAIN_FILE: [], VALIDATION_FILE: []}
    manifest = []
    for item in kept:
        name = VALIDATION_FILE if item.session_id in validation else TRAIN_FILE
        files[name].append(item.line)
        manifest.append(
            json.dumps(
                {
                    "file": name,
                    "line": len(files[name]),
                    "session_id": item.session_id,
                    "project": item.project,
                    "prompt_key": item.exchange.prompt_key,
                    "prompt_line": item.exchange.line_number,
                    "sha256": item.digest,
                },
                ensure_ascii=False,
            )
        )
    summary.train = len(files[TRAIN_FILE])
    summary.validation = len(files[VALIDATION_FILE])
    summary.validation_sessions = len(validation)
    summary.train_sessions = len({k.session_id for k in kept} - validation)
    if options.dry_run or not kept:
        return
    options.out.mkdir(parents=True, exist_ok=True)
    for name, lines in (*files.items(), (MANIFEST_FILE, manifest)):
        _write_lines(options.out / name, lines)


def _write_lines(path: Path, lines: list[str]) -> None:
    """Replace `path` with these lines at once: readers see the old file or the new one."""
    temporary = path.with_name(f".{path.name}.tmp")
    with temporary.open("w", encoding="utf-8", newline="\n") as handle:
        handle.writelines(f"{line}\n" for line in lines)
    os.replace(temporary, path)
