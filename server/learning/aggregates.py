"""Per-project habits counted from tool calls: workflow mix, command habits, file hotspots.

Pure counting, no LLM and no database: the caller hands over every tool call of a project and
stores the texts from `pattern_memories` under stable keys, rewriting a memory only when its
text changed. Every ordering here has a tie-break on the name, so the same calls always give
the same text and an unchanged project costs no write.

Choices, and why:

- Tool categories follow what a call does to the project: reading (Read, Grep, Glob, LS,
  NotebookRead), editing, running commands (Bash), delegating (Agent, and its old name Task),
  planning (TodoWrite, ExitPlanMode), the web (WebSearch, WebFetch: fetching a page is research,
  not reading the project's code) and MCP tools (`mcp__server__tool`).
- A Bash call is cut into its simple commands at `&&`, `||`, `;`, `&` and newlines; in a
  pipeline only the first command counts (`… | tail -n 50` filters output, it is not a habit).
  A command is named by its program and subcommand (`git commit`, `pnpm db:up`), or two levels
  for programs that group subcommands (`docker compose up`, `npm run build`); env assignments,
  wrappers (`sudo`, `env`, `time`, `timeout 30`), flags, paths and quoted arguments are dropped.
- Shell plumbing and read-only looking around (`cd`, `export`, `echo`, `ls`, `cat`, `grep`,
  `find` …) are not counted as command habits: the workflow mix already shows how much the
  assistant reads, and the habit memory is about the project's own tooling.
- A call that failed counts as a failed run of every command in it: the transcript says the
  call failed, not which of its `&&`-joined commands did.
- File hotspots count only calls that did not fail (a failed Read of a missing file is not a
  hotspot), and only real paths: no glob patterns, URLs or directories.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePosixPath

from server.core.percent import percent_label

TOP = 10  # commands and files kept per project
MIN_SHARE_SHOWN = 0.05  # workflow categories under 5% of the calls are left out of the text
MAX_CATEGORIES_SHOWN = 3

CATEGORY_OF_TOOL: dict[str, str] = {
    "Read": "read",
    "Grep": "read",
    "Glob": "read",
    "LS": "read",
    "NotebookRead": "read",
    "Edit": "edit",
    "MultiEdit": "edit",
    "Write": "edit",
    "NotebookEdit": "edit",
    "Bash": "run",
    "Agent": "delegate",
    "Task": "delegate",
    "TodoWrite": "plan",
    "ExitPlanMode": "plan",
    "WebSearch": "web",
    "WebFetch": "web",
}
# How each category reads in a sentence: "... mostly run commands (41%)".
CATEGORY_PHRASES: dict[str, str] = {
    "read": "read or search code",
    "edit": "edit files",
    "run": "run commands",
    "delegate": "delegate to sub-agents",
    "plan": "plan with todo lists",
    "web": "search or fetch the web",
    "mcp": "call MCP tools",
    "other": "use other tools",
}
READ_FILE_TOOLS = frozenset({"Read", "NotebookRead"})
EDIT_FILE_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})

# Programs whose first argument names a group, so the habit is program + two words.
_GROUP_SUBCOMMANDS = frozenset(
    {"compose", "run", "exec", "dlx", "x", "pr", "issue", "repo", "release", "workflow",
     "stash", "remote", "worktree", "submodule"}
)  # fmt: skip
_WRAPPERS = frozenset({"sudo", "env", "time", "nohup", "command", "exec", "nice"})
_NOT_HABITS = frozenset(
    {"cd", "pushd", "popd", "export", "set", "unset", "source", ".", "true", "false", "exit",
     "sleep", "echo", "printf", "clear", "ls", "pwd", "cat", "head", "tail", "wc", "which",
     "find", "grep", "rg", "tree", "less", "file", "stat"}
)  # fmt: skip
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_SUBCOMMAND = re.compile(r"[A-Za-z][A-Za-z0-9:_-]*")
_PROGRAM = re.compile(r"[\w.+-]+")
_DURATION = re.compile(r"\d+(?:\.\d+)?[smhd]?")
_GLOB_CHARS = frozenset("*?[{")
_SEPARATORS = frozenset({"&&", "||", ";", "&", "\n", "(", ")"})


@dataclass(frozen=True, slots=True)
class SignalEvent:
    """One tool call as the signals see it: which tool, on what, and whether it worked."""

    session_id: str
    project: str
    tool: str
    target: str | None  # Bash command, or the file path / pattern / url it acted on
    success: bool | None  # None when the result was never seen
    at: datetime | None


@dataclass(frozen=True, slots=True)
class CategoryShare:
    """How many of a project's calls fall in one tool category, in how many sessions."""

    category: str
    calls: int
    share: float  # calls / all calls of the project
    sessions: int


@dataclass(frozen=True, slots=True)
class CommandHabit:
    """A normalised command (`pnpm test`) and how often it ran, failed, and in how many sessions."""

    command: str
    runs: int
    failures: int
    sessions: int


@dataclass(frozen=True, slots=True)
class FileHotspot:
    """A file the assistant keeps coming back to, relative to the project root when known."""

    path: str
    edits: int
    reads: int
    sessions: int


@dataclass(frozen=True, slots=True)
class ProjectPatterns:
    """What one project's tool calls say about how work happens there."""

    project: str
    calls: int
    sessions: int
    categories: tuple[CategoryShare, ...]  # most calls first
    commands: tuple[CommandHabit, ...]  # top 10, most runs first
    files: tuple[FileHotspot, ...]  # top 10, most touches first


def tool_category(tool: str) -> str:
    """The workflow category of a tool name; MCP tools by their `mcp__` prefix."""
    if tool.startswith("mcp__"):
        return "mcp"
    return CATEGORY_OF_TOOL.get(tool, "other")


def _shell_words(command: str) -> list[str]:
    """Words and control operators of a shell command, quotes removed; never fails.

    Unbalanced quotes (targets are cut at 500 characters) simply run to the end. A redirection
    such as `2>&1` stays one word instead of reading as a background `&`.
    """
    tokens: list[str] = []
    word: list[str] = []
    in_word = False  # true after a quote too, so '' is still a word
    quote: str | None = None
    i = 0

    def flush() -> None:
        nonlocal in_word
        if in_word:
            tokens.append("".join(word))
            word.clear()
            in_word = False

    while i < len(command):
        char = command[i]
        nxt = command[i + 1] if i + 1 < len(command) else ""
        if quote is not None:
            if char == quote:
                quote = None
            elif char == "\\" and quote == '"' and nxt:
                word.append(nxt)
                i += 1
            else:
                word.append(char)
        elif char in "'\"":
            quote, in_word = char, True
        elif char == "\\":
            if nxt and nxt != "\n":
                word.append(nxt)
                in_word = True
            i += 1
        elif char in " \t\r":
            flush()
        elif char == "#" and not in_word:
            while i + 1 < len(command) and command[i + 1] != "\n":
                i += 1
        elif char == "&" and ((word and word[-1] in ("<", ">")) or nxt == ">"):
            word.append(char)
            in_word = True
        elif char in "&|" and nxt == char:
            flush()
            tokens.append(char * 2)
            i += 1
        elif char in ";&|()\n":
            flush()
            tokens.append(char)
        else:
            word.append(char)
            in_word = True
        i += 1
    flush()
    return tokens


def simple_commands(command: str) -> list[list[str]]:
    """The simple commands of a command line; of a pipeline, only its first stage."""
    commands: list[list[str]] = [[]]
    in_pipe_tail = False
    for token in _shell_words(command):
        if token in _SEPARATORS:
            in_pipe_tail = False
            commands.append([])
        elif token == "|":
            in_pipe_tail = True
        elif not in_pipe_tail:
            commands[-1].append(token)
    return [words for words in commands if words]


def command_verb(words: list[str]) -> str | None:
    """`program subcommand` for one simple command, or None when it is not a habit."""
    index = 0
    while index < len(words):
        word = words[index]
        if _ASSIGNMENT.match(word) or (index > 0 and word.startswith("-")):
            index += 1  # FOO=1, or a wrapper's flag (`sudo -E`, `env -i`)
        elif word in _WRAPPERS:
            index += 1
        elif word == "timeout":
            index += 2 if index + 1 < len(words) and _DURATION.fullmatch(words[index + 1]) else 1
        else:
            break
    if index >= len(words):
        return None
    program = PurePosixPath(words[index]).name
    if program in _NOT_HABITS or not _PROGRAM.fullmatch(program):
        return None
    rest = words[index + 1 :]
    if program.startswith("python") and len(rest) >= 2 and rest[0] == "-m":
        return f"{program} -m {rest[1]}"  # `python -m pytest` is the pytest habit
    parts = [program]
    for word in rest[:2]:
        if not _SUBCOMMAND.fullmatch(word):
            break
        parts.append(word)
        if word not in _GROUP_SUBCOMMANDS:
            break
    return " ".join(parts)


def command_verbs(command: str) -> list[str]:
    """The normalised commands in one Bash call, in order (`cd x && pnpm test` → `pnpm test`)."""
    return [verb for words in simple_commands(command) if (verb := command_verb(words)) is not None]


def _is_file_path(target: str) -> bool:
    return not (
        _GLOB_CHARS.intersection(target)
        or "://" in target
        or target.endswith("/")
        or not target.strip()
    )


def _relative(path: str, root: str | None) -> str:
    if root:
        prefix = root.rstrip("/") + "/"
        if path.startswith(prefix) and len(path) > len(prefix):
            return path[len(prefix) :]
    return path


def _categories(events: Sequence[SignalEvent]) -> tuple[CategoryShare, ...]:
    calls: Counter[str] = Counter()
    sessions: defaultdict[str, set[str]] = defaultdict(set)
    for event in events:
        category = tool_category(event.tool)
        calls[category] += 1
        sessions[category].add(event.session_id)
    total = sum(calls.values())
    return tuple(
        CategoryShare(name, count, count / total, len(sessions[name]))
        for name, count in sorted(calls.items(), key=lambda item: (-item[1], item[0]))
    )


def _commands(events: Sequence[SignalEvent]) -> tuple[CommandHabit, ...]:
    runs: Counter[str] = Counter()
    failures: Counter[str] = Counter()
    sessions: defaultdict[str, set[str]] = defaultdict(set)
    for event in events:
        if event.tool != "Bash" or not event.target:
            continue
        for verb in command_verbs(event.target):
            runs[verb] += 1
            failures[verb] += event.success is False
            sessions[verb].add(event.session_id)
    ranked = sorted(runs, key=lambda verb: (-runs[verb], -len(sessions[verb]), verb))
    return tuple(
        CommandHabit(verb, runs[verb], failures[verb], len(sessions[verb])) for verb in ranked[:TOP]
    )


def _files(events: Sequence[SignalEvent], root: str | None) -> tuple[FileHotspot, ...]:
    edits: Counter[str] = Counter()
    reads: Counter[str] = Counter()
    sessions: defaultdict[str, set[str]] = defaultdict(set)
    for event in events:
        is_edit = event.tool in EDIT_FILE_TOOLS
        if not (is_edit or event.tool in READ_FILE_TOOLS) or event.success is False:
            continue
        if not event.target or not _is_file_path(event.target):
            continue
        path = _relative(event.target, root)
        (edits if is_edit else reads)[path] += 1
        sessions[path].add(event.session_id)
    ranked = sorted(sessions, key=lambda p: (-(edits[p] + reads[p]), -edits[p], p))
    return tuple(
        FileHotspot(path, edits[path], reads[path], len(sessions[path])) for path in ranked[:TOP]
    )


def project_patterns(
    events: Iterable[SignalEvent], project_paths: Mapping[str, str] | None = None
) -> dict[str, ProjectPatterns]:
    """Workflow mix, command habits and file hotspots of each project, keyed by project.

    `project_paths` maps a project to its root directory (the sessions' cwd), so hotspot paths
    are shown relative to it.
    """
    by_project: defaultdict[str, list[SignalEvent]] = defaultdict(list)
    for event in events:
        by_project[event.project].append(event)
    paths = project_paths or {}
    return {
        project: ProjectPatterns(
            project=project,
            calls=len(calls),
            sessions=len({event.session_id for event in calls}),
            categories=_categories(calls),
            commands=_commands(calls),
            files=_files(calls, paths.get(project)),
        )
        for project, calls in sorted(by_project.items())
    }


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _join(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _workflow_text(name: str, patterns: ProjectPatterns) -> str:
    shown = [c for c in patterns.categories if c.share >= MIN_SHARE_SHOWN][:MAX_CATEGORIES_SHOWN]
    mix = _join([f"{CATEGORY_PHRASES[c.category]} ({percent_label(c.share)})" for c in shown])
    delegated = next((c.sessions for c in patterns.categories if c.category == "delegate"), 0)
    agents = (
        f"it delegated to sub-agents in {delegated} of {_plural(patterns.sessions, 'session')}"
        if delegated
        else "it never delegated to sub-agents"
    )
    return (
        f"In {name} the assistant's tool calls ({patterns.calls} over "
        f"{_plural(patterns.sessions, 'session')}) mostly {mix}; {agents}."
    )


def _commands_text(name: str, patterns: ProjectPatterns) -> str:
    items = []
    for habit in patterns.commands:
        counts = [_plural(habit.runs, "run")]
        if habit.failures:
            counts.append(f"{habit.failures} failed")
        counts.append(_plural(habit.sessions, "session"))
        items.append(f"{habit.command} ({', '.join(counts)})")
    return f"Most-run commands in {name}: {', '.join(items)}."


def _files_text(name: str, patterns: ProjectPatterns) -> str:
    items = []
    for spot in patterns.files:
        counts = [_plural(n, noun) for n, noun in ((spot.edits, "edit"), (spot.reads, "read")) if n]
        items.append(f"{spot.path} ({', '.join(counts)})")
    return f"Most-touched files in {name}: {', '.join(items)}."


def pattern_memories(project: str, patterns: ProjectPatterns) -> list[tuple[str, str]]:
    """(stable key, text) for each aspect with data, so the caller can update it in place.

    Keys are `signals:workflow:<project>`, `signals:commands:<project>` and
    `signals:files:<project>`; the same patterns always give the same texts.
    """
    name = project or "this project"
    memories: list[tuple[str, str]] = []
    if patterns.calls:
        memories.append((f"signals:workflow:{project}", _workflow_text(name, patterns)))
    if patterns.commands:
        memories.append((f"signals:commands:{project}", _commands_text(name, patterns)))
    if patterns.files:
        memories.append((f"signals:files:{project}", _files_text(name, patterns)))
    return memories
