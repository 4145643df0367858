"""One memory against the code: its verdict for the UI, and recording the current value.

`check_memory` is what the web UI shows beside a memory: what it names (its anchors), and
whether the code in its project's folder still agrees (fresh, drifted with what changed,
orphaned, unchecked with why). `drifted_memories` is a project's list of those the code no
longer agrees with, for the user to fix or retire. Both check a memory against the folder
`folder_of` gives it: the one asked for, else the memory's own project path, else its
project's folder, which is the folder promote (the Instructions page) checks it against, so
the three pages give one memory one verdict (#68: a memory saved under a project's name with
no folder of its own was "no working folder known" on its page, "orphaned" on Instructions
and absent from the Drifted list).

Recording the current value supersedes a drifted memory in one step by what the code says now.

A memory that says "the Go toolchain is pinned to go 1.22 in `go.mod`" drifts when go.mod moves
to 1.23. The check (server/recall/working_tree.py) already knows the new value, so the user or
the agent should not have to retype the fact: the memory's text is rewritten with each changed
value (a setting's value, a version, a renamed file's new path) put where the old one was, and
saved as a new memory that supersedes the old one (which stays searchable, ranked below it).

Only what the check read is written: a memory whose symbol or file is gone has no current
value to state, and is refused with what to do instead. Everything goes through `save`, so the
new text is redacted, embedded and deduplicated like any other memory.
"""

from __future__ import annotations

from server.core.errors import InvalidInput
from server.core.models.memories import (
    AnchorView,
    CodeCheck,
    DriftedList,
    DriftedMemory,
    Memory,
    MemoryFilter,
    UpdateOutcome,
)
from server.core.validation import MAX_PAGE
from server.domain.anchors import anchors_of
from server.recall.working_tree import WORKING_TREES, WorkingTrees
from server.service.face import MemoryApi
from server.worktree.context_check import shown_note
from server.worktree.tree_check import Finding, MemoryCheck

UNCHECKABLE = (
    "the folder must be on this machine, the server single-user, and the check within its"
    " time budget"
)
# The drifted list reads a project's newest memories that name code (stored anchors) up to
# this many, and checks them within
# DRIFT_BUDGET_SECONDS (a page the user asked for, not a hook on every prompt).
MAX_DRIFT_CHECKED = 5_000
DRIFT_BUDGET_SECONDS = 10.0
# How far after an anchor's name its stated value may stand ("`HTTP_TIMEOUT` is set to 30s").
VALUE_REACH_CHARS = 80


async def check_memory(
    service: MemoryApi, memory_id: int, cwd: str | None, trees: WorkingTrees = WORKING_TREES
) -> CodeCheck:
    """`memory_id` checked against `cwd`, or its project's folder when no `cwd` is given."""
    memory = await service.get(memory_id)
    folder = folder_of(memory, cwd, await _project_folders(service))
    anchors = [AnchorView(a.kind, a.name, a.value) for a in await service.anchors(memory)]
    if folder is None:
        return CodeCheck(memory_id, None, "unchecked", "no working folder known", anchors, False)
    checks = await trees.verdicts(folder, [memory])
    if checks is None:
        why = f"{folder} could not be checked here ({UNCHECKABLE})"
        return CodeCheck(memory_id, folder, "unchecked", why, anchors, False)
    [check] = checks
    return CodeCheck(
        memory_id, folder, check.verdict, shown_note(check), anchors, _recordable(check)
    )


async def drifted_memories(
    service: MemoryApi, project: str, cwd: str | None, trees: WorkingTrees = WORKING_TREES
) -> DriftedList:
    """The live, current memories of `project` that the code no longer agrees with, newest
    first: each checked against `cwd`, or against its own project path (a project's sessions
    may come from several clones); the newest MAX_DRIFT_CHECKED that name code are read."""
    resolved = await service.resolve_project(project)
    if resolved is None:
        raise InvalidInput("name a project: its memories are checked against its folder")
    anchored, complete = await _anchored_memories(service, resolved)
    project_folders = await _project_folders(service)
    by_folder: dict[str, list[Memory]] = {}
    for memory in anchored:
        folder = folder_of(memory, cwd, project_folders)
        if folder:
            by_folder.setdefault(folder, []).append(memory)
    found: dict[int, DriftedMemory] = {}
    folders: list[str] = []
    for folder, memories in by_folder.items():
        checks = await trees.verdicts(folder, memories, budget=DRIFT_BUDGET_SECONDS)
        if checks is None:
            continue  # not on this machine (or a team's server): left unchecked
        folders.append(folder)
        for memory, check in zip(memories, checks, strict=True):
            note = shown_note(check)
            if note is not None:  # drifted or orphaned
                found[memory.id] = DriftedMemory(
                    memory, folder, check.verdict, note, _recordable(check)
                )
    checked = sum(len(by_folder[folder]) for folder in folders)
    drifted = [found[m.id] for m in anchored if m.id in found]  # newest first, as listed
    return DriftedList(resolved, folders, checked, len(anchored) - checked, complete, drifted)


def folder_of(memory: Memory, cwd: str | None, project_folders: dict[str, str]) -> str | None:
    """The folder `memory` is checked against: `cwd` when asked, else its own project path,
    else its project's folder (a memory saved under a project's name alone); None if none."""
    if cwd:
        return cwd
    if memory.project_path:
        return memory.project_path
    return project_folders.get(memory.project) if memory.project else None


async def _project_folders(service: MemoryApi) -> dict[str, str]:
    """Each project's folder, the most recently active one where it has several (as
    /api/projects and promote take it)."""
    folders: dict[str, str] = {}
    for summary in await service.projects():
        if summary.project and summary.project_path:
            folders.setdefault(summary.project, summary.project_path)
    return folders


async def _anchored_memories(service: MemoryApi, project: str) -> tuple[list[Memory], bool]:
    """The project's live, current memories that name code, newest first; and whether every
    memory of the project was read."""
    anchored: list[Memory] = []
    offset = 0
    while offset < MAX_DRIFT_CHECKED:
        page = await service.list_memories(
            MemoryFilter(project=project, names_code=True), limit=MAX_PAGE, offset=offset
        )
        offset += len(page.memories)
        anchored += [m for m in page.memories if m.superseded_by is None and anchors_of(m.content)]
        if not page.memories or offset >= page.total:
            return anchored, True
    return anchored, False


def rewritten(content: str, check: MemoryCheck) -> str:
    """`content` with every changed value replaced by the current one; InvalidInput when the
    check found nothing to record or something without a current value."""
    if check.verdict != "drifted":
        raise InvalidInput(_why_not(check))
    gone = [f.name for f in check.findings if f.now is None]
    if gone:
        raise InvalidInput(
            f"{', '.join(gone)} no longer exist{'s' if len(gone) == 1 else ''} in the code, so"
            " there is no current value to record; edit the memory or delete it"
        )
    text = content
    for finding in check.findings:
        text = _replaced(text, finding)
    if text == content:
        raise InvalidInput(
            f"could not find the old values in the memory's text ({shown_note(check)})"
        )
    return text


async def record_current_value(
    service: MemoryApi, memory_id: int, cwd: str, trees: WorkingTrees = WORKING_TREES
) -> UpdateOutcome:
    """Save what the code in `cwd` says now as a new memory superseding `memory_id`."""
    memory = await service.get(memory_id)
    if memory.deleted_at is not None:
        raise InvalidInput(f"memory {memory_id} is deleted; restore it first")
    checks = await trees.verdicts(cwd, [memory])
    if checks is None:
        raise InvalidInput(f"could not check memory {memory_id} against {cwd!r} ({UNCHECKABLE})")
    [check] = checks
    saved = await service.save(
        rewritten(memory.content, check),
        tags=memory.tags,
        source=memory.source,
        project=memory.project,
        project_path=memory.project_path,
        kind=_kind_of_new_version(memory),
        metadata={"recorded_from": "working tree", "was": check.note()},
        supersedes=memory.id,
        force=True,
    )
    return UpdateOutcome("recorded", saved.memory, None, saved.redacted)


def _replaced(text: str, finding: Finding) -> str:
    """`text` with the finding's old value replaced by its current one where it is stated."""
    if finding.kind == "path" or finding.stated is None or finding.now is None:
        return text.replace(finding.name, finding.now or finding.name)
    named = text.find(finding.name)
    start = named + len(finding.name) if named >= 0 else 0
    at = text.find(finding.stated, start, start + VALUE_REACH_CHARS + len(finding.stated))
    if at < 0:
        at = text.find(finding.stated)
    if at < 0:
        return text
    return text[:at] + finding.now + text[at + len(finding.stated) :]


def _recordable(check: MemoryCheck) -> bool:
    """Whether the code states a current value for everything that changed."""
    return check.verdict == "drifted" and all(f.now for f in check.findings)


def _kind_of_new_version(memory: Memory) -> str:
    """A raw conversation turn rewritten is no longer what was said: it becomes a note."""
    return "manual" if memory.kind == "raw" else memory.kind


def _why_not(check: MemoryCheck) -> str:
    if check.verdict == "fresh":
        return "the code still agrees with this memory: nothing to record"
    if check.verdict == "orphaned":
        return f"{shown_note(check)}; the memory is about files that are gone: delete it or edit it"
    return "the memory names nothing the check can read (no file, setting or version)"
