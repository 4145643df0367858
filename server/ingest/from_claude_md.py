"""`import --from claude-md` (or `instructions`): memory files and agents' instruction files.

What Claude Code keeps on disk for itself (tests/fixtures/other_tools/claude-md/README.md):
- `~/.claude/CLAUDE.md` and `~/.claude/rules/*.md`: your instructions for every project;
- a project's `CLAUDE.md`, `CLAUDE.local.md`, `.claude/CLAUDE.md` and `.claude/rules/*.md`;
- auto memory, `~/.claude/projects/<encoded path>/memory/`: one file per memory with front
  matter `name`, `description` and `type` (`user`, `feedback`, `project`, `reference`; newer
  versions nest it as `metadata: type:`), and `MEMORY.md`, an index of links to them.

and what other agents read from a repository: `AGENTS.md` (Codex, OpenCode and others),
`GEMINI.md` (Gemini CLI) and `.github/copilot-instructions.md` (GitHub Copilot).

Instructions become chunked `note` memories (user-wide ones without a project). A memory file
of type `user` or `feedback` says how you want to work, so it is a `preference`; the other types
are notes. An index-only MEMORY.md is skipped (the files it links are imported); one written
as prose, as early versions did, is a note. A memory folder's project is the working directory
its sessions record (the folder name's encoding is lossy), named as imported sessions are.

The section `claude-memory promote` writes into an instruction file (between its markers,
server/domain/instruction_section.py) is left out: its lines are memories already, and promote
itself turns a hand edit there into a memory. A file read again after an edit supersedes what
its earlier import stored (server/ingest/from_tools.py), so edits do not pile up as copies.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from server.agent_facts import claude_code as claude
from server.agent_facts.every import ABOUT
from server.domain.instruction_section import SectionError, parse
from server.ingest.tool_reading import (
    ReadContext,
    ToolReading,
    first_heading,
    note_records,
    project_names,
    text_field,
)

SOURCE = "claude-md"
# A repository's instruction files, from its root, and the tag each one's notes carry: each
# agent's, as its facts in server/agent_facts/ name them.
PROJECT_FILES: dict[str, str] = {
    name: about.INSTRUCTIONS_TAG
    for about in ABOUT.values()
    for name in (about.INSTRUCTIONS_FILE, *about.MORE_INSTRUCTIONS_FILES)
}
# In Claude Code's config folder: those of its files that sit at a folder's top (CLAUDE.md).
INSTRUCTION_FILES: tuple[str, ...] = tuple(
    name for name in (claude.INSTRUCTIONS_FILE, *claude.MORE_INSTRUCTIONS_FILES) if "/" not in name
)
# An instruction file's tag by its name alone, wherever it is (a path given to the import).
_TAGS: dict[str, str] = {Path(name).name: tag for name, tag in PROJECT_FILES.items()}
PREFERENCE_TYPES = ("user", "feedback")
MAX_CWD_LINES = 50  # lines of a session read to find its working directory
_INDEX_LINE = re.compile(r"^\s*(?:[-*+]\s+)?\[[^\]]*\]\([^)]*\)")
_NESTED_TYPE = re.compile(r"\btype:\s*([\w-]+)")


def default_paths(environ: Mapping[str, str], home: Path, cwd: Path) -> list[Path]:
    """Claude Code's config folder ($CLAUDE_CONFIG_DIR, else ~/.claude) and this project."""
    return [claude.claude_dir(environ, home), cwd]


def read_claude_md(paths: Sequence[Path], context: ReadContext) -> ToolReading:
    """CLAUDE.md files, rules and auto-memory files found from the paths given."""
    reading = ToolReading()
    found: list[tuple[Path, str, str]] = []  # (file, role, project directory or "")
    for path in paths:
        if not path.exists():
            reading.fail(path, "no such file or folder")
            continue
        found += _files(path.resolve())
    if not found and not reading.errors:
        listed = ", ".join(str(p) for p in paths)
        reading.errors.append(
            f"{listed}: no CLAUDE.md, AGENTS.md, GEMINI.md, copilot-instructions.md, rules"
            " or Claude Code memory files"
        )
    names = project_names((d for _, _, d in found if d), context.project_names)
    seen: set[Path] = set()
    for file, role, directory in found:
        if file in seen:
            continue
        seen.add(file)
        if role != "memory" and directory and not file.resolve().is_relative_to(directory):
            # A repository's instruction file that links out of it (a clone's CLAUDE.md made a
            # link to ~/.ssh/...) is not the repository's to give: never read.
            reading.skipped["link_out_of_the_project"] += 1
            continue
        note = reading.markdown(file)
        if note is None:
            continue
        fields, body, created = note.fields, note.body, note.changed
        if role == "instructions":
            try:
                body = _outside_section(body)
            except SectionError as exc:
                reading.files_read -= 1
                reading.fail(file, str(exc))
                continue
            if not body:
                reading.skipped["only_promoted_section"] += 1
                continue
        if role == "memory" and file.name == "MEMORY.md" and _only_links(body):
            reading.skipped["memory_index"] += 1
            continue
        kind, title, tags, extra = _shape(role, file, fields, body)
        reading.add(
            note_records(
                title=title,
                body=_with_description(fields, body),
                where=str(file),
                kind=kind,
                source=SOURCE,
                tags=tags,
                project=names.get(directory, "") if directory else "",
                project_path=directory,
                created_at=created,
                metadata={"original_file": str(file), **extra},
            )
        )
    return reading


def _files(path: Path) -> list[tuple[Path, str, str]]:
    """(file, role, project directory) for what `path` holds: a file, a memory folder, a
    config folder (it has `projects/`) or a project folder."""
    if path.is_file():
        return [_file_role(path)]
    if path.name == "memory":
        return _memory_files(path)
    if (path / "projects").is_dir():  # Claude Code's config folder: user-wide files
        found = [(path / name, "instructions", "") for name in INSTRUCTION_FILES]
        found += [(rule, "rule", "") for rule in sorted((path / "rules").glob("*.md"))]
        for memory in sorted((path / "projects").glob("*/memory")):
            found += _memory_files(memory)
        return [item for item in found if item[0].is_file()]
    project = str(path)
    found = [(path / name, "instructions", project) for name in PROJECT_FILES]
    found += [(r, "rule", project) for r in sorted((path / ".claude" / "rules").glob("*.md"))]
    return [item for item in found if item[0].is_file()]


def _file_role(file: Path) -> tuple[Path, str, str]:
    folder = file.parent
    if folder.name == "memory" and folder.parent.parent.name == "projects":
        return file, "memory", _session_directory(folder.parent)
    if folder.name == ".github":  # .github/copilot-instructions.md: the repository's
        return file, "instructions", str(folder.parent)
    role = "rule" if folder.name == "rules" else "instructions"
    owner = folder.parent if role == "rule" else folder  # the folder CLAUDE.md or rules/ is in
    if (owner / "projects").is_dir():  # Claude Code's config folder: user-wide
        return file, role, ""
    return file, role, str(owner.parent if owner.name == ".claude" else owner)


def _memory_files(folder: Path) -> list[tuple[Path, str, str]]:
    directory = _session_directory(folder.parent)
    return [(file, "memory", directory) for file in sorted(folder.glob("*.md"))]


def _session_directory(project_folder: Path) -> str:
    """The working directory Claude Code's sessions in this folder recorded, or ""."""
    for transcript in sorted(project_folder.glob("*.jsonl")):
        try:
            with transcript.open(encoding="utf-8", errors="replace") as lines:
                for _, line in zip(range(MAX_CWD_LINES), lines, strict=False):
                    cwd = _cwd(line)
                    if cwd:
                        return cwd
        except OSError:
            continue
    return ""


def _cwd(line: str) -> str:
    try:
        record = json.loads(line)
    except ValueError:
        return ""
    cwd = record.get("cwd") if isinstance(record, dict) else None
    return cwd if isinstance(cwd, str) else ""


def _outside_section(body: str) -> str:
    """The user's text of an instruction file: promote's section (its lines are memories
    already) left out. SectionError when its markers are broken."""
    cut = parse(body)
    if not cut.has_section:
        return body
    return f"{cut.before.rstrip()}\n\n{cut.after.lstrip()}".strip()


def _tag(file: Path) -> str:
    """What an instruction file is, for its notes' tag: Claude Code's unless another agent's."""
    return _TAGS.get(file.name, claude.INSTRUCTIONS_TAG)


def _only_links(body: str) -> bool:
    """MEMORY.md as Claude Code writes it now: headings and `- [Title](file.md) — hook`."""
    lines = [line for line in body.splitlines() if line.strip() and not line.startswith("#")]
    return bool(lines) and all(_INDEX_LINE.match(line) for line in lines)


def _memory_type(fields: Mapping[str, Any]) -> str:
    """`type:` at the top, or nested under `metadata:` (read as text by our parser)."""
    kind = text_field(fields, "type")
    if not kind and isinstance(fields.get("metadata"), str):
        nested = _NESTED_TYPE.search(str(fields["metadata"]))
        kind = nested.group(1) if nested else ""
    return kind.lower()


def _shape(
    role: str, file: Path, fields: Mapping[str, Any], body: str
) -> tuple[str, str, list[str], dict[str, Any]]:
    """(kind, title, tags, metadata) of one file by what it is."""
    if role != "memory":
        title = first_heading(body) or (f"rules/{file.name}" if role == "rule" else file.name)
        return "note", title, [_tag(file) if role == "instructions" else "claude-rules"], {}
    kind_name = _memory_type(fields)
    title = text_field(fields, "name") or first_heading(body) or file.stem
    tags = ["claude-code-memory", *([kind_name] if kind_name else [])]
    extra = {"original_id": file.stem, **({"memory_type": kind_name} if kind_name else {})}
    return ("preference" if kind_name in PREFERENCE_TYPES else "note"), title, tags, extra


def _with_description(fields: Mapping[str, Any], body: str) -> str:
    """A memory file's one-line description leads its text, when the body does not say it."""
    description = text_field(fields, "description")
    return f"{description}\n\n{body}" if description and description not in body else body
