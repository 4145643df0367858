"""Lessons proposed from the journal: how many, how many a reader keeps, how often they misfire.

Two parts, imported into one fresh embedded database with the real importer, then `lessons
propose` runs once on everything (server/learning/lesson_proposals_job.py):

- written: the shared fixture sessions (S1 to S4) and tests/fixtures/lesson_sessions, sessions
  written with these rules in mind (what must and must not become a lesson);
- held_out: bench/changes_corpus/projects, 22 sessions written for another benchmark.

For each part:

- proposed: the lessons stored, by rule (`journal`: a failed call the user corrected;
  `correction`: a correction naming a command or path);
- kept: each proposal judged by the hand-written verdicts of bench/lesson_quality.json (keep
  as proposed, keep after editing, reject); a proposal it does not list counts as unjudged;
- wanted: the lessons a reader would want from these sessions (same file), and how many of
  them a proposal covers (kept or edited);
- false alarms: every proposed lesson, as if accepted, matched with the PreToolUse rules
  (server/domain/lessons.matching) against each journal call that went fine and whose prompt
  was not followed by a correction: every match is a reminder shown where nothing went wrong.
  The journal keeps each call's input summary (the command, or the path), which is what the
  patterns are matched against here; the hook sees the whole input.
- fires on its source: whether each lesson matches the call or correction it was learned from
  (a lesson from a failed call should fire on that call).

Usage: .venv/bin/python bench/lesson_quality.py [--expected bench/lesson_quality.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from server.core.config import Settings  # noqa: E402
from server.core.models.journal import JournalEntry  # noqa: E402
from server.core.models.lessons import Lesson  # noqa: E402
from server.domain.lessons import matching  # noqa: E402
from server.ingest.importer import ImportFilters, SessionImporter  # noqa: E402
from server.learning.corrections import correction_cue  # noqa: E402
from server.learning.lesson_proposals_job import propose_lessons  # noqa: E402
from server.service.memory import MemoryService  # noqa: E402
from server.service.runtime import open_service  # noqa: E402

PARTS = {
    "written": (
        ROOT.parent / "shared" / "fixtures" / "claude-code" / "projects",
        ROOT / "tests" / "fixtures" / "lesson_sessions" / "claude-code" / "projects",
    ),
    "held_out": (ROOT / "bench" / "changes_corpus" / "projects",),
}
EXPECTED = ROOT / "bench" / "lesson_quality.json"


def corrected_prompts(journal: list[JournalEntry]) -> set[int]:
    """Indexes of the entries whose next prompt reads as a correction."""
    found = set()
    for index in range(len(journal) - 1):
        following = journal[index + 1].prompt
        context = " ".join(call.target or "" for call in journal[index].calls)
        if following and correction_cue(following, context) is not None:
            found.add(index)
    return found


def judge(lessons: list[Lesson], expected: dict[str, Any]) -> dict[str, Any]:
    verdicts = {(v["project"], v["tool"], v["pattern"]): v["verdict"] for v in expected["verdicts"]}
    counted = Counter(verdicts.get((s.project, s.tool, s.pattern), "unjudged") for s in lessons)
    proposed = {(lesson.project, lesson.pattern) for lesson in lessons}
    covering = {
        (v["project"], v["pattern"]) for v in expected["verdicts"] if v["verdict"] != "reject"
    }
    wanted = expected["wanted"]
    found = [w for w in wanted if (w["project"], w["pattern"]) in proposed & covering]
    kept = counted["keep"] + counted["edit"]
    return {
        "kept_as_proposed": counted["keep"],
        "kept_after_edit": counted["edit"],
        "rejected": counted["reject"],
        "unjudged": counted["unjudged"],
        "kept_share": round(kept / len(lessons), 3) if lessons else None,
        "wanted": len(wanted),
        "wanted_covered": len(found),
        "wanted_missed": [w["what"] for w in wanted if w not in found],
    }


def false_alarms(
    lessons: list[Lesson], journals: dict[str, list[JournalEntry]]
) -> tuple[dict[str, Any], dict[int, bool]]:
    """Matches of the lessons (as if accepted) on calls that went fine and were not corrected,
    and, per lesson, whether it matches a corrected call of its own session."""
    active = [replace(lesson, active=True) for lesson in lessons]
    fine_calls = matched_calls = 0
    by_lesson: Counter[int] = Counter()
    examples: dict[int, list[str]] = {}
    on_source = {lesson.id: False for lesson in lessons}
    for session_id, journal in journals.items():
        corrected = corrected_prompts(journal)
        for index, entry in enumerate(journal):
            for call in entry.calls:
                text = call.target or ""
                hits = matching(active, call.tool, text, entry.project)
                if index in corrected:
                    for hit in hits:
                        if hit.origin.endswith(session_id):
                            on_source[hit.id] = True
                    continue
                if call.success is not True:
                    continue
                fine_calls += 1
                matched_calls += bool(hits)
                for hit in hits:
                    by_lesson[hit.id] += 1
                    examples.setdefault(hit.id, []).append(f"{call.tool}: {text[:100]}")
    patterns = {lesson.id: lesson for lesson in lessons}
    return {
        "fine_calls": fine_calls,
        "calls_matched": matched_calls,
        "matches": sum(by_lesson.values()),
        "lessons_with_matches": len(by_lesson),
        "by_lesson": [
            {
                "project": patterns[lesson_id].project,
                "tool": patterns[lesson_id].tool,
                "pattern": patterns[lesson_id].pattern,
                "matches": count,
                "calls": examples[lesson_id],
            }
            for lesson_id, count in by_lesson.most_common()
        ],
    }, on_source


def part_figures(
    lessons: list[Lesson], journals: dict[str, list[JournalEntry]], expected: dict[str, Any]
) -> dict[str, Any]:
    projects = {entry.project for journal in journals.values() for entry in journal}
    lessons = [lesson for lesson in lessons if lesson.project in projects]
    expected = {
        key: [item for item in expected[key] if item["project"] in projects]
        for key in ("verdicts", "wanted")
    }
    calls = [call for journal in journals.values() for entry in journal for call in entry.calls]
    alarms, on_source = false_alarms(lessons, journals)
    verdicts = {(v["project"], v["tool"], v["pattern"]): v["verdict"] for v in expected["verdicts"]}
    return {
        "sessions": len(journals),
        "projects": sorted(projects),
        "journal": {
            "prompts": sum(1 for j in journals.values() for e in j if e.prompt is not None),
            "calls": len(calls),
            "failed_calls": sum(call.success is False for call in calls),
            "prompts_read_as_corrections": sum(
                len(corrected_prompts(j)) for j in journals.values()
            ),
        },
        "proposed": len(lessons),
        "by_rule": dict(Counter(lesson.origin.split(":", 1)[0] for lesson in lessons)),
        **judge(lessons, expected),
        "false_alarms": alarms,
        "fire_on_their_source": sum(on_source.values()),
        "proposals": [
            {
                "project": lesson.project,
                "tool": lesson.tool,
                "pattern": lesson.pattern,
                "verdict": verdicts.get((lesson.project, lesson.tool, lesson.pattern), "unjudged"),
                "origin": lesson.origin,
                "message": lesson.message,
            }
            for lesson in sorted(lessons, key=lambda lesson: lesson.id)
        ],
    }


async def measure(service: MemoryService, expected: dict[str, Any]) -> dict[str, Any]:
    started = time.monotonic()
    sessions: dict[str, list[str]] = {}
    errors: list[str] = []
    for part, roots in PARTS.items():
        known = {counts.session_id for counts in await service.lesson_proposals.queue(rescan=True)}
        for root in roots:
            errors += (await SessionImporter(service, ImportFilters()).run(root)).errors
        queue = await service.lesson_proposals.queue(rescan=True)
        sessions[part] = [c.session_id for c in queue if c.session_id not in known]
    import_seconds = time.monotonic() - started

    summary = await propose_lessons(service)
    lessons = await service.lessons()
    report: dict[str, Any] = {}
    for part, ids in sessions.items():
        report[part] = part_figures(lessons, await service.lesson_proposals.journals(ids), expected)
    report.update(
        {
            "proposed": summary.proposed,
            "all_inactive": all(not lesson.active and lesson.proposed for lesson in lessons),
            "second_run_proposes": (await propose_lessons(service, rescan=True)).proposed,
            "seconds": {
                "import": round(import_seconds, 2),
                "propose": round(summary.seconds, 3),
            },
            "import_errors": errors,
        }
    )
    return report


async def run(expected_path: Path) -> dict[str, Any]:
    expected = json.loads(expected_path.read_text())
    with tempfile.TemporaryDirectory(prefix="lessons-bench-", ignore_cleanup_errors=True) as home:
        settings = Settings(claude_memory_home=Path(home), cache_max_size=0)
        async with open_service(settings) as service:
            return await measure(service, expected)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--expected", type=Path, default=EXPECTED)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args.expected)), indent=2, ensure_ascii=False))  # noqa: T201


if __name__ == "__main__":
    main()
