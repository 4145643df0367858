"""Recalled context checked where the working tree is: the hook process (issue #37).

A team's server never reads its users' files, and a server on another machine cannot: when
the server could not check the memories it shows (server/recall/working_tree.py), its hook
answer carries them as `check` items (each memory's id, when it was written and its anchors),
and the hook client (server/hooks.py), which runs in the user's session folder, checks them
with server/worktree/tree_check.py before the agent sees the context. The result is what a
server on the same machine gives: an orphaned memory's line is left out, a drifted one says
what changed ("(drifted: go is now 1.23 (was 1.22)) ...") and goes after the others of its
section.

The hook imports this module only when such items come, so the single-user path costs
nothing; like tree_check it needs the standard library only (the hook runs with `-I -S`). The
check runs in a thread the hook waits on for `budget` seconds at most: past it, the context
goes out as the server wrote it, unchecked.

The lines edited are the ones server/domain/context.py (session start) and recall_markdown
(prompt recall) write for a memory: `- [DATE ][kind #ID, ...] text`.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from server.worktree.tree_check import AnchorValue, MemoryCheck, TreeChecker, tree_root

MEMORY_LINE = re.compile(r"^- (?:\d{4}-\d{2}-\d{2} )?\[[a-z]+ #(\d+)[,\]]")


def shown_note(check: MemoryCheck) -> str | None:
    """What changed, redacted like anything else shown (a value read from a file).

    Redaction is imported on the first note: its patterns take the hook client about 15 ms
    to load, and most checks find nothing to say."""
    if check.verdict not in ("drifted", "orphaned"):
        return None
    from server.core.redact import redact

    return redact(check.note()).text


def check_items(memories: Sequence[tuple[int, datetime, Sequence[AnchorValue]]]) -> list[Any]:
    """The `check` items of a hook answer: each memory with anchors, as plain JSON values."""
    return [
        {"id": memory_id, "created_at": written.isoformat(), "anchors": [list(a) for a in anchors]}
        for memory_id, written, anchors in memories
        if anchors
    ]


def checked_context(
    markdown: str, items: Any, cwd: str, budget: float, *, drop_if_empty: bool
) -> str:
    """`markdown` with the memories of `items` checked against the tree of `cwd`.

    Unchanged when there is no such tree here, the items are malformed or the check runs past
    `budget` seconds. `drop_if_empty`: a context that had memories and has none left (all
    orphaned) becomes "" (prompt recall says nothing rather than a bare title).
    """
    root = tree_root(cwd)
    memories = _memories(items)
    if root is None or not memories:
        return markdown
    checks = _within(budget, TreeChecker(root).check, [m[1:] for m in memories])
    if checks is None:
        return markdown
    drift = {
        memory_id: note
        for (memory_id, *_), check in zip(memories, checks, strict=True)
        if check.verdict == "drifted" and (note := shown_note(check))
    }
    orphaned = {
        memory_id
        for (memory_id, *_), check in zip(memories, checks, strict=True)
        if check.verdict == "orphaned"
    }
    return marked(markdown, drift, orphaned, drop_if_empty=drop_if_empty)


def marked(
    markdown: str, drift: Mapping[int, str], orphaned: set[int], *, drop_if_empty: bool
) -> str:
    """The context with orphaned memories' lines left out and drifted ones noted and moved
    after the other memories of their section; a section left with only its heading goes."""
    blocks = markdown.split("\n\n")
    kept_blocks: list[str] = []
    had_memories = False
    memories_left = False
    for block in blocks:
        lines = block.split("\n")
        ids = [_memory_id(line) for line in lines]
        if not any(i is not None for i in ids):
            kept_blocks.append(block)
            continue
        had_memories = True
        others = [line for line, i in zip(lines, ids, strict=True) if i is None]
        fresh = [
            line
            for line, i in zip(lines, ids, strict=True)
            if i is not None and i not in orphaned and i not in drift
        ]
        drifted = [
            _noted(line, drift[i])
            for line, i in zip(lines, ids, strict=True)
            if i is not None and i not in orphaned and i in drift
        ]
        if not fresh and not drifted:
            continue  # the heading (if any) has nothing left under it
        memories_left = True
        kept_blocks.append("\n".join([*others, *fresh, *drifted]))
    if drop_if_empty and had_memories and not memories_left:
        return ""
    return "\n\n".join(kept_blocks)


def memory_ids_in(markdown: str) -> list[int]:
    """The ids of the memories whose lines `markdown` holds, in order (each once)."""
    ids = (_memory_id(line) for line in markdown.split("\n"))
    return list(dict.fromkeys(i for i in ids if i is not None))


def _memory_id(line: str) -> int | None:
    match = MEMORY_LINE.match(line)
    return int(match.group(1)) if match else None


def _noted(line: str, note: str) -> str:
    """The line with "(note) " before the memory's text (after its label)."""
    end = line.find("] ") + 2
    return f"{line[:end]}({note}) {line[end:]}"


def _memories(items: Any) -> list[tuple[int, list[AnchorValue], datetime | None]]:
    """The well-formed items; anything else in them is ignored."""
    memories = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or not isinstance(item.get("id"), int):
            continue
        anchors: list[AnchorValue] = [
            (a[0], a[1], a[2] if isinstance(a[2], str) else None)
            for a in item.get("anchors") or []
            if isinstance(a, list) and len(a) == 3 and isinstance(a[0], str)
            if isinstance(a[1], str)
        ]
        try:
            written: datetime | None = datetime.fromisoformat(str(item.get("created_at")))
        except ValueError:
            written = None
        if anchors:
            memories.append((item["id"], anchors, written))
    return memories


def _within(budget: float, work: Callable[[Any], Any], argument: Any) -> Any:
    """`work(argument)` in a daemon thread, or None if it failed or has not finished in
    `budget` seconds (the thread is left behind; the hook process exits soon after)."""
    result: list[Any] = []

    def run() -> None:
        with contextlib.suppress(Exception):  # a failed check leaves the context unchecked
            result.append(work(argument))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(budget)
    return result[0] if result else None
