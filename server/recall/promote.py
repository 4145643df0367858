"""`claude-memory promote` (#58): what memory has proven becomes the repository's instruction
files, and leaves them when it stops being true.

`propose` reads the instruction files at the repository's root (server/recall/promote_files.py)
and our section in each (server/domain/instruction_section.py), then proposes, per file:

- **add**: a memory of the project that is current (not superseded, deleted or archived), the
  user's own or shared (never a teammate's private one), holds no secret (redaction runs
  again), agrees with the working tree (not drifted or orphaned), and has earned it: used in
  PROMOTE_MIN_USES injections with no correction since, or stated by the user as a rule
  (server/domain/promotion.py `is_stated`); never one declined for that file, nor one read
  from an instruction or rules file (the agents read that file already). A memory
  redaction changes, or whose text shows a secret was taken out of it, is not proposed: the
  file goes into git;
- **change** / **remove**: a line whose memory was superseded (changed to the successor when
  that one may be promoted), deleted, drifted or orphaned, or corrected after it was written;
- **keep**: every other line.

Lines a person edited in our section (text no longer what we wrote) are saved as memories
superseding the memory they came from, lines a person wrote there without an id as new
memories, and both are then proposed with their new id; a line we wrote that a person deleted
is recorded as declined (on the next write) and never proposed again. New lines fill what the
section's budget (PROMOTE_MAX_LINES, PROMOTE_MAX_TOKENS) leaves after the lines already there,
most used first; the rest are counted in `left_out`.

The file is hostile input (a cloned repository's CLAUDE.md is whatever its authors wrote, #65
H1): `propose` (GET /api/promote, the CLI without --write) changes nothing at all, and a hand
edit is saved only by `apply` (POST, --write), which the user asked for. A line's
`<!-- memory:N -->` counts only when this file's own record (`promoted_lines`) says promote
wrote memory N to this path, and N is a memory of this project: any other line is the file's,
left as it is and never read as a memory (no other project's memory is read, changed or
superseded through it). Lines without an id come back as memories only from a section promote
wrote here before; in a section it never wrote (a clone's) every line is left as it is.

`apply` writes the accepted changes (all of them from the CLI's --write), a backup beside
each file first, and records what was written and declined (service.record_promoted).
Nothing is committed to git.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from server.agent_facts.every import ABOUT
from server.core.access import current_viewer
from server.core.errors import InvalidInput
from server.core.models.memories import Memory, MemoryFilter
from server.core.models.output import preview
from server.core.models.promotion import (
    THE_FILE,
    USER,
    FileProposal,
    LineChange,
    PromotedLine,
    PromotionResult,
    Proposal,
    UseRecord,
    WrittenFile,
)
from server.core.redact import redact
from server.core.validation import MAX_PAGE
from server.domain.anchors import anchors_of
from server.domain.instruction_section import SectionLine, with_lines
from server.domain.promotion import (
    UNPROMOTED_KINDS,
    WRITTEN_BY_HAND,
    fitting,
    from_instruction_file,
    is_stated,
    rule_text,
    source_of,
)
from server.recall.promote_files import (
    SHARED_FILE,
    InstructionFile,
    read_files,
    repository_root,
    unified_diff,
    write_with_backup,
)
from server.recall.working_tree import WORKING_TREES, WorkingTrees
from server.service.face import MemoryApi
from server.worktree.context_check import shown_note

MAX_CANDIDATES = 5_000
CHECK_BUDGET_SECONDS = 10.0
HAND_TAG = "instructions"
SUCCESSOR_CHARS = 80  # of the successor's line, in a superseded line's reason
REDACTED = "[REDACTED:"  # what redaction leaves where it took a secret out
# A team's server never reads or writes its own disk for a user (as the working-tree check):
# promote is for the server on the user's own machine, or the CLI.
TEAM_SERVER = (
    "promote reads and writes the repository's files on the server's own disk, which a team's"
    " server never does for a user: run `claude-memory promote` on your own machine"
)


@dataclass(frozen=True)
class Standing:
    """A memory's standing for promotion: its line, its uses, and whether (and why) it may be
    proposed."""

    memory: Memory
    text: str
    uses: int
    corrected_at: datetime | None
    verdict: str
    note: str | None
    promotable: bool
    reason: str
    source: str


@dataclass
class FilePlan:
    """One file's proposal: every line's change in the section's order, then the additions."""

    file: InstructionFile
    changes: list[LineChange] = field(default_factory=list)
    hand: set[int] = field(default_factory=set)  # indexes of changes a person's edit made
    foreign: set[int] = field(default_factory=set)  # indexes of lines not ours: left as they are
    foreign_lines: dict[int, SectionLine] = field(default_factory=dict)  # as read, id and all
    deleted: list[int] = field(default_factory=list)  # lines we wrote that a person deleted


@dataclass
class Plan:
    project: str
    root: Path
    files: list[FilePlan]
    left_out: int
    records: dict[tuple[str, int], PromotedLine] = field(default_factory=dict)


async def propose(
    service: MemoryApi, project: str | None, cwd: str | None, trees: WorkingTrees = WORKING_TREES
) -> Proposal:
    """The changes proposed to the instruction files of `project`'s repository (see above)."""
    plan = await make_plan(service, project, cwd, trees, save_edits=False)
    files = [_file_proposal(p, None) for p in plan.files]
    return Proposal(plan.project, str(plan.root), files, plan.left_out)


async def apply(
    service: MemoryApi,
    project: str | None,
    cwd: str | None,
    *,
    accept: Collection[int] | None = None,
    reject: Collection[int] = (),
    trees: WorkingTrees = WORKING_TREES,
) -> PromotionResult:
    """Write the changes whose memory is in `accept` (every change when None), record `reject`
    as declined, and read the proposal again."""
    plan = await make_plan(service, project, cwd, trees, save_edits=True)
    written: list[WrittenFile] = []
    for file_plan in plan.files:
        file = file_plan.file
        placed = _placed_lines(file_plan, accept)
        lines = [line for line, _ in placed]
        text = with_lines(file.parsed, lines)
        if text != file.text:
            backups = service.settings.claude_memory_home / "backups" / "instructions"
            written.append(WrittenFile(str(file.path), write_with_backup(file, text, backups)))
        ours = [line for line, foreign in placed if not foreign]  # a foreign line's id: not ours
        now_ids = {line.memory_id for line in ours if line.memory_id is not None}
        recorded = {memory_id for (path, memory_id) in plan.records if path == file.key}
        was = {line.memory_id for line in file.parsed.lines if line.memory_id in recorded}
        rejected = [
            c.memory_id
            for c in file_plan.changes
            if c.action in ("add", "change")
            and c.memory_id is not None
            and c.memory_id in reject
            and c.memory_id not in now_ids
        ]
        await service.record_promoted(
            file.key,
            written={
                line.memory_id: " ".join(line.text.split())
                for line in ours
                if line.memory_id is not None
            },
            declined=[*file_plan.deleted, *rejected],
            removed=sorted(was - now_ids),
        )
    after = await propose(service, plan.project, cwd, trees)
    return PromotionResult(written, after.files, after.left_out)


async def make_plan(
    service: MemoryApi,
    project: str | None,
    cwd: str | None,
    trees: WorkingTrees,
    *,
    save_edits: bool,
) -> Plan:
    """Read the files, find a person's edits (saved as memories only with `save_edits`), and
    decide every line."""
    if current_viewer() is not None:
        raise InvalidInput(TEAM_SERVER)
    resolved, folder = await _project_and_folder(service, project, cwd)
    root = repository_root(folder, cwd)
    files = read_files(root, await _file_to_create(service, resolved))
    records = {
        (r.file_path, r.memory_id): r for r in await service.promoted_lines([f.key for f in files])
    }
    # Only the memories this file's record says we wrote to it, and only the project's own.
    named = {
        line.memory_id
        for f in files
        for line in f.parsed.lines
        if line.memory_id is not None and (f.key, line.memory_id) in records
    }
    known = {
        memory_id: memory
        for memory_id, memory in (await _memories(service, named)).items()
        if memory.project == resolved
    }
    plans = [FilePlan(file) for file in files]
    entries = [
        await _bring_back_edits(service, plan, resolved, folder, records, known, save_edits)
        for plan in plans
    ]
    candidates = await _candidates(service, resolved)
    known.update({m.id: m for m in candidates})
    successors = {m.superseded_by for m in known.values() if m.superseded_by} - set(known)
    known.update(
        {i: m for i, m in (await _memories(service, successors)).items() if m.project == resolved}
    )
    standings = await _standings(service, list(known.values()), root, trees)
    order = [m.id for m in candidates]
    left_out = 0
    for plan, lines in zip(plans, entries, strict=True):
        _decide_lines(plan, lines, standings, records)
        left_out = max(left_out, _add_lines(service, plan, standings, records, order))
    return Plan(resolved, root, plans, left_out, records)


async def _project_and_folder(
    service: MemoryApi, project: str | None, cwd: str | None
) -> tuple[str, str]:
    """The project (named, or the one at `cwd`) and the folder promote writes in: one the
    user's own sessions of the project ran in (the one holding `cwd` when several do), or
    `cwd` itself when no session of the project is known. Never a memory's `project_path`,
    which an import of someone's export sets (#65 M2); with several folders and no `cwd`, the
    user is asked which."""
    resolved = await service.resolve_project(project or cwd)
    if resolved is None:
        raise InvalidInput("name a project (or a working folder inside one)")
    folders = await service.session_folders(resolved)
    if not folders:
        if cwd:
            return resolved, cwd
        raise InvalidInput(
            f"no session of project {resolved!r} ran in a folder on this machine: run promote"
            " from the repository (or give its folder as cwd)"
        )
    if cwd:
        holding = [f for f in folders if _inside(cwd, f)]  # one clone of several
        if not holding:
            raise InvalidInput(f"cwd must be inside the project's folder {_listed(folders)}")
        return resolved, max(holding, key=len)
    if len(folders) > 1:
        raise InvalidInput(
            f"project {resolved!r} has sessions in {len(folders)} folders: give the one to"
            f" write in as cwd ({_listed(folders)})"
        )
    return resolved, folders[0]


async def _file_to_create(service: MemoryApi, project: str) -> str:
    """The instruction file to create where the repository has none: the one file every agent
    whose sessions of `project` were imported reads (CLAUDE.md for a Claude Code user only),
    else AGENTS.md, which most agents read."""
    agents = (await service.sessions(project=project, limit=1)).by_source
    wanted = {ABOUT[agent].INSTRUCTIONS_FILE for agent in agents if agent in ABOUT}
    return wanted.pop() if len(wanted) == 1 else SHARED_FILE


def _listed(folders: list[str]) -> str:
    return ", ".join(repr(f) for f in folders)


async def _memories(service: MemoryApi, ids: Collection[int]) -> dict[int, Memory]:
    """These memories by id, deleted ones included; ids of none (purged) left out."""
    return await service.get_many(sorted(ids))


async def _candidates(service: MemoryApi, project: str) -> list[Memory]:
    """The project's live, current memories of promotable kinds, newest first."""
    found: list[Memory] = []
    offset = 0
    while offset < MAX_CANDIDATES:
        page = await service.list_memories(
            MemoryFilter(project=project), limit=MAX_PAGE, offset=offset
        )
        offset += len(page.memories)
        found += [
            m
            for m in page.memories
            if m.superseded_by is None and m.archived_at is None and m.kind not in UNPROMOTED_KINDS
        ]
        if not page.memories or offset >= page.total:
            break
    return found


async def _bring_back_edits(
    service: MemoryApi,
    plan: FilePlan,
    project: str,
    folder: str,
    records: dict[tuple[str, int], PromotedLine],
    known: dict[int, Memory],
    save_edits: bool,
) -> list[tuple[SectionLine, LineChange | None]]:
    """The section's lines, each with the change a person's edit makes: a line they wrote is
    a new memory, a line they edited a memory superseding the one it came from (saved only
    with `save_edits`, on a write the user asked for). A line that is not ours (see the
    module's docstring) is left as it is. Also notes the lines we wrote that they deleted."""
    file = plan.file
    path = file.key
    wrote_here = any(
        record_path == path and record.state == "written"
        for (record_path, _), record in records.items()
    )
    entries: list[tuple[SectionLine, LineChange | None]] = []
    for line in file.parsed.lines:
        record = records.get((path, line.memory_id)) if line.memory_id is not None else None
        if not wrote_here or (
            line.memory_id is not None and (record is None or record.state != "written")
        ):
            entries.append((line, _foreign(line)))
            continue
        memory = known.get(line.memory_id) if line.memory_id is not None else None
        ours = record.text if record is not None and record.state == "written" else None
        if ours is None and memory is not None:
            ours = rule_text(memory.content)
        if memory is not None and _same(line.text, ours):
            entries.append((line, None))
            continue
        if line.memory_id is not None and memory is None:
            entries.append((line, None))  # its memory is gone (or not this project's): removed
            continue
        supersedes = memory.id if memory is not None and memory.deleted_at is None else None
        new_id: int | None = None
        if save_edits:
            saved = await service.save(
                line.text,
                tags=[HAND_TAG],
                source="promote",
                project=project,
                project_path=folder,
                kind=_kind_of_edit(memory),
                server_metadata={WRITTEN_BY_HAND: file.name},
                supersedes=supersedes,
                force=True,
            )
            known[saved.id] = saved.memory
            new_id = saved.id
        saved_as = f"saved as memory #{new_id}" if new_id else "saved as a new memory on a write"
        if memory is None:
            reason = f"written by hand in {file.name}: {saved_as}"
        else:
            reason = f"edited by hand in {file.name}: {saved_as}, superseding #{memory.id}"
        change = LineChange(
            "change",
            new_id,
            line.text,
            line.text,
            reason,
            old_memory_id=line.memory_id,
            source=USER,
        )
        entries.append((SectionLine(line.text, new_id), change))
    if file.exists:
        present = {line.memory_id for line in file.parsed.lines}
        plan.deleted = sorted(
            memory_id
            for (record_path, memory_id), record in records.items()
            if record_path == path and record.state == "written" and memory_id not in present
        )
    return entries


def _foreign(line: SectionLine) -> LineChange:
    """A line promote did not write here: kept as it is, its id read as no memory of ours."""
    named = f" (it names memory #{line.memory_id}, which promote never wrote here)"
    reason = "not written here by promote: left as it is" + (
        named if line.memory_id is not None else ""
    )
    return LineChange("keep", None, line.text, None, reason, source=THE_FILE)


async def _standings(
    service: MemoryApi, memories: list[Memory], root: Path, trees: WorkingTrees
) -> dict[int, Standing]:
    """Every memory's standing: its uses, its verdict against the tree at `root`, and whether
    it may be promoted."""
    uses = await service.use_records([m.id for m in memories])
    checks = await trees.verdicts(str(root), memories, budget=CHECK_BUDGET_SECONDS)
    settings = service.settings
    standings = {}
    for index, memory in enumerate(memories):
        check = checks[index] if checks is not None else None
        # Not checked at all (out of time, or a team's server): "unknown", not "unchecked"
        # (which means the memory names nothing the check reads).
        verdict = check.verdict if check is not None else "unknown"
        note = shown_note(check) if check is not None else None
        use = uses.get(memory.id) or UseRecord(memory.id, 0, None)
        promotable, reason = _may_promote(
            memory, use, verdict, note, settings.promote_min_uses, settings.promote_stated
        )
        standings[memory.id] = Standing(
            memory,
            rule_text(memory.content),
            use.uses,
            use.corrected_at,
            verdict,
            note,
            promotable,
            reason,
            source_of(memory),
        )
    return standings


def _may_promote(
    memory: Memory, use: UseRecord, verdict: str, note: str | None, min_uses: int, stated: bool
) -> tuple[bool, str]:
    """Whether `memory` may be proposed, and the reason said beside it (or why not)."""
    viewer = current_viewer()
    if memory.deleted_at is not None:
        return False, f"deleted on {_day(memory.deleted_at)}"
    if memory.superseded_by is not None or memory.archived_at is not None:
        return False, "no longer current"
    if memory.kind in UNPROMOTED_KINDS or not rule_text(memory.content):
        return False, "a conversation turn, not a rule"
    if from_instruction_file(memory.source, memory.tags):
        return False, "read from an instruction file: the agents read it there already"
    if (
        memory.visibility == "private"
        and memory.owner
        and (viewer is None or viewer.name != memory.owner)
    ):
        return False, "private to its owner"
    if REDACTED in memory.content or redact(memory.content).count:
        return False, "holds a secret (or held one: its text says so)"
    if verdict in ("drifted", "orphaned"):
        return False, note or verdict  # the note says "drifted: ..." itself
    if verdict == "unknown" and anchors_of(memory.content):
        return False, "names code that could not be checked here"
    if use.uses >= min_uses:
        corrected = "none corrected" if use.corrected_at is None else "none corrected since"
        return True, f"used in {use.uses} injections, {corrected}"
    if stated and is_stated(memory.kind, memory.source, memory.metadata):
        written = memory.metadata.get(WRITTEN_BY_HAND)
        return True, f"written by hand in {written}" if written else "a rule the user stated"
    return False, f"used in {use.uses} of the {min_uses} injections it needs"


def _decide_lines(
    plan: FilePlan,
    entries: list[tuple[SectionLine, LineChange | None]],
    standings: dict[int, Standing],
    records: dict[tuple[str, int], PromotedLine],
) -> None:
    """Keep, change or remove each line already in the section."""
    present = {line.memory_id for line, _ in entries if line.memory_id is not None}
    for line, hand in entries:
        if hand is not None and hand.source == THE_FILE:
            plan.foreign.add(len(plan.changes))
            plan.changes.append(hand)
            plan.foreign_lines[len(plan.changes) - 1] = line
            continue
        if hand is not None:
            plan.hand.add(len(plan.changes))
            plan.changes.append(hand)
            continue
        plan.changes.append(_line_change(plan, line, standings, records, present))


def _line_change(
    plan: FilePlan,
    line: SectionLine,
    standings: dict[int, Standing],
    records: dict[tuple[str, int], PromotedLine],
    present: set[int],
) -> LineChange:
    memory_id = line.memory_id
    standing = standings.get(memory_id) if memory_id is not None else None
    if standing is None:
        return _removal(line, f"memory #{memory_id} no longer exists")
    memory = standing.memory
    source = standing.source
    if memory.deleted_at is not None:
        return _removal(line, f"deleted on {_day(memory.deleted_at)}", source)
    if memory.superseded_by is not None:
        successor = standings.get(memory.superseded_by)
        if successor is None:
            return _removal(line, f"superseded by #{memory.superseded_by}")
        why = preview(successor.text, SUCCESSOR_CHARS)
        reason = (
            f"superseded on {_day(successor.memory.created_at)} by #{successor.memory.id}: {why}"
        )
        if successor.promotable and successor.memory.id not in present:
            present.add(successor.memory.id)
            return LineChange(
                "change",
                successor.memory.id,
                successor.text,
                line.text,
                reason,
                old_memory_id=memory_id,
                uses=successor.uses,
                source=successor.source,
            )
        return _removal(line, reason, source)
    if standing.verdict in ("drifted", "orphaned"):
        return _removal(line, standing.note or standing.verdict, source)
    record = records.get((plan.file.key, memory.id))
    written_at = record.at if record is not None else memory.created_at
    if standing.corrected_at is not None and standing.corrected_at > written_at:
        return _removal(line, f"corrected after use on {_day(standing.corrected_at)}", source)
    reason = standing.reason if standing.promotable else "in the section already"
    return LineChange("keep", memory_id, line.text, None, reason, memory_id, standing.uses, source)


def _add_lines(
    service: MemoryApi,
    plan: FilePlan,
    standings: dict[int, Standing],
    records: dict[tuple[str, int], PromotedLine],
    order: list[int],
) -> int:
    """Add the promotable memories the file lacks, most used first, within the section's
    budget; how many did not fit."""
    path = plan.file.key
    staying = [c for c in plan.changes if c.action != "remove"]
    present = {c.memory_id for c in plan.changes} | {c.old_memory_id for c in plan.changes}
    present |= {line.memory_id for line in plan.file.parsed.lines}  # a foreign line's id too
    texts = {" ".join((c.text or "").split()) for c in staying}
    declined = {
        memory_id
        for (record_path, memory_id), r in records.items()
        if record_path == path and r.state == "declined"
    } | set(plan.deleted)
    wanted: list[Standing] = []
    for memory_id in order:
        standing = standings[memory_id]
        if (
            standing.promotable
            and memory_id not in present
            and memory_id not in declined
            and " ".join(standing.text.split()) not in texts
        ):
            texts.add(" ".join(standing.text.split()))
            wanted.append(standing)
    wanted.sort(key=lambda s: (-s.uses, -s.memory.id))
    settings = service.settings
    fits = fitting(
        [c.text or "" for c in staying],
        [s.text for s in wanted],
        settings.promote_max_lines,
        settings.promote_max_tokens,
    )
    for standing in wanted[:fits]:
        plan.changes.append(
            LineChange(
                "add",
                standing.memory.id,
                standing.text,
                None,
                standing.reason,
                uses=standing.uses,
                source=standing.source,
            )
        )
    return len(wanted) - fits


def _placed_lines(plan: FilePlan, accept: Collection[int] | None) -> list[tuple[SectionLine, bool]]:
    """The section's lines once the accepted changes (all when `accept` is None) are made,
    each with whether it is a line not ours (left as it was read)."""
    lines = []
    for index, change in enumerate(plan.changes):
        if index in plan.foreign:
            lines.append((plan.foreign_lines[index], True))
            continue
        taken = (
            change.action == "keep"
            or index in plan.hand
            or accept is None
            or change.memory_id in accept
        )
        if taken and change.text is not None:
            # A hand edit a proposal has not saved yet keeps the id it was read with.
            unsaved = index in plan.hand and change.memory_id is None
            memory_id = change.old_memory_id if unsaved else change.memory_id
            lines.append((SectionLine(change.text, memory_id), False))
        elif not taken and change.old_text is not None:
            lines.append((SectionLine(change.old_text, change.old_memory_id), False))
    return lines


def _file_proposal(plan: FilePlan, accept: Collection[int] | None) -> FileProposal:
    file = plan.file
    text = with_lines(file.parsed, [line for line, _ in _placed_lines(plan, accept)])
    return FileProposal(
        str(file.path),
        file.name,
        file.exists,
        not file.exists,
        unified_diff(file.name, file.text, text),
        plan.changes,
    )


def _removal(line: SectionLine, reason: str, source: str = "") -> LineChange:
    return LineChange(
        "remove",
        line.memory_id,
        None,
        line.text,
        reason,
        old_memory_id=line.memory_id,
        source=source,
    )


def _same(written: str, ours: str | None) -> bool:
    return ours is not None and " ".join(written.split()) == " ".join(ours.split())


def _kind_of_edit(memory: Memory | None) -> str:
    if memory is None or memory.kind in UNPROMOTED_KINDS:
        return "manual"
    return memory.kind


def _inside(cwd: str, folder: str) -> bool:
    cut = folder.rstrip("/")
    return cwd == cut or cwd.startswith(f"{cut}/")


def _day(at: datetime) -> str:
    return f"{at.day} {at:%b %Y}"
