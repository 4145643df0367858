"""The fixtures of other memory tools (tests/fixtures/other_tools/), built where they need it.

claude-mem's database is checked in as SQL and built here with the standard library, and
OpenMemory's backup zip from its two member files, so no binary file is committed.
"""

from __future__ import annotations

import gzip
import sqlite3
import zipfile
from pathlib import Path

OTHER_TOOLS = Path(__file__).resolve().parent / "fixtures" / "other_tools"
CLAUDE_MEM = OTHER_TOOLS / "claude-mem"
CLAUDE_MD = OTHER_TOOLS / "claude-md"
MEM0 = OTHER_TOOLS / "mem0"
MARKDOWN = OTHER_TOOLS / "markdown"
TRAJECTORIES = OTHER_TOOLS / "trajectories"
# The folders and files a reader is pointed at: not the fixtures' READMEs.
MARKDOWN_FOLDERS = [MARKDOWN / "basic-memory", MARKDOWN / "obsidian-vault"]
TRAJECTORY_FILES = [
    TRAJECTORIES / "flaky-orders-test.md",
    TRAJECTORIES / "session-notes.txt",
    TRAJECTORIES / "learned.jsonl",
    TRAJECTORIES / ".trajectories",
]


def claude_mem_database(folder: Path, script: str = "claude-mem.sql") -> Path:
    """`folder/<script>.db` built from one of the fixture's SQL scripts."""
    database = folder / script.replace(".sql", ".db")
    conn = sqlite3.connect(database)
    try:
        conn.executescript((CLAUDE_MEM / script).read_text(encoding="utf-8"))
        conn.commit()
    finally:
        conn.close()
    return database


def openmemory_backup(folder: Path, *, with_json: bool = True) -> Path:
    """OpenMemory's export zip: memories.json and memories.jsonl.gz (or the JSONL alone)."""
    archive = folder / "memories_export_dev.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        if with_json:
            bundle.write(MEM0 / "openmemory" / "memories.json", "memories.json")
        lines = (MEM0 / "openmemory" / "memories.jsonl").read_bytes()
        bundle.writestr("memories.jsonl.gz", gzip.compress(lines))
    return archive
