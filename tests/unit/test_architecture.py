"""Dependency rules, checked by parsing imports (the layering in docs/ARCHITECTURE.md).

- every module sits in a room (a package, or a top-level module) on a floor of LAYERS, and
  imports (at any depth, lazy ones too) only from its own room or a lower floor, never from a
  room beside it or above; a new module fails until it is placed;
- psycopg and SQL live only in server/store/ and server/db/;
- adapters, schemas and the entry points never import server.store;
- adapters reach the service only through its face (server/service/face.py);
- hooks.py imports only the standard library, server/worktree and server/agent_facts (the
  same rule), since the agents run it with `python -I -S`;
- an agent is named only by its own modules and the one list of agents, and its instruction
  files only by its facts (server/agent_facts/<agent>.py);
- no function in server/adapters/ is over 80 lines; every REST handler and MCP tool is a
  top-level function taking the service (the face) first, and no adapter keeps the service in a
  module-level variable.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

SERVER = Path(__file__).resolve().parents[2] / "server"
# The floors, lowest first; on each, its rooms. A module is in the room of its longest matching
# prefix. Each room is placed where its imports put it today (the lowest floor above everything
# it imports); rooms share a floor only where neither imports the other.
LAYERS = (
    # shared vocabulary; each agent's facts (stdlib only: the hook client reads them)
    ("server.core", "server.agent_facts"),
    # pure rules, no I/O; getting a database; memories checked against a tree (stdlib only)
    ("server.domain", "server.db", "server.worktree"),
    ("server.store", "server.hooks"),  # all SQL; the stdlib-only hook client the agents run
    ("server.service",),  # MemoryService and its parts
    ("server.learning",),  # distillation, signals, behavior, proposals
    ("server.ingest",),  # the way in: readers and importers (they reach learning's steps)
    # the way out: what the hooks inject, checked against the code; what the CLI's commands run
    ("server.recall", "server.jobs"),
    ("server.agents",),  # one module per agent (connect, detect) + registry, doctor, the plugin
    ("server.schemas",),  # request and response models
    ("server.adapters",),  # REST, OpenAPI, MCP, hook routes, HTTP guards
    ("server.app",),  # the Starlette app
    ("server.cli",),  # `claude-memory`: serves the app, runs the jobs
)
DATA_LAYERS = ("server.store", "server.db")
# Readers of another program's database (not ours): OpenCode keeps its sessions in SQLite.
FOREIGN_DATABASES = ("server.ingest.opencode_db",)
NO_STORE = ("server.adapters", "server.schemas", "server.app", "server.cli")
SQL_STATEMENT = re.compile(
    r"\b(SELECT\b.*\bFROM|INSERT INTO|UPDATE \w+ SET|DELETE FROM|CREATE (TABLE|INDEX|EXTENSION)"
    r"|ALTER TABLE|DROP (TABLE|INDEX|DATABASE)|TRUNCATE)\b",
    re.S,
)


def modules() -> dict[str, Path]:
    found = {}
    for path in SERVER.rglob("*.py"):
        parts = path.relative_to(SERVER.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports_of(path: Path) -> set[str]:
    """Every imported name, module-level or inside a function: `a.b` and `a.b.name`."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def under(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(f"{p}.") for p in prefixes)


def room(module: str) -> tuple[int, str] | None:
    """The floor and room of `module`; the bare package (`__version__` only) is its own room on
    the lowest floor."""
    if module == "server":
        return 0, "server"
    matches = [
        (len(p), p, i) for i, floor in enumerate(LAYERS) for p in floor if under(module, (p,))
    ]
    if not matches:
        return None
    _, prefix, floor = max(matches)
    return floor, prefix


def rank(module: str) -> int | None:
    """The floor of `module`."""
    found = room(module)
    return found[0] if found else None


def test_every_module_is_in_a_layer() -> None:
    assert [name for name in modules() if room(name) is None] == []


def test_no_import_runs_back_up() -> None:
    """An import stays in its room or goes down a floor: never up, nor across to a room beside
    it (rooms share a floor only while neither needs the other). server/cli included."""
    known = modules()
    offenders = []
    for name, path in known.items():
        for target in {i for i in imports_of(path) if i in known}:
            (floor, here), (to, there) = room(name) or (0, ""), room(target) or (0, "")
            if here != there and to >= floor:
                offenders.append(f"{name} -> {target}")
    assert sorted(offenders) == []


def test_the_way_in_does_not_import_the_way_out() -> None:
    """ingest/ imports sessions, notes and exports; recall/ decides what the agent is told.
    Recall may use ingest's readers (a hook payload's text), never the other way round."""
    offenders = [
        f"{name} -> {i}"
        for name, path in modules().items()
        if under(name, ("server.ingest",))
        for i in imports_of(path)
        if under(i, ("server.recall",))
    ]
    assert offenders == []


def test_adapters_and_the_cli_leave_the_project_to_the_service() -> None:
    """One project rule (server/service/projects.py), applied by the service to what a request
    or a command names: an adapter or the CLI hands the project over as the user wrote it and
    never resolves it."""
    offenders = [
        f"{name}:{node.lineno}"
        for name, path in modules().items()
        if under(name, ("server.adapters", "server.cli"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute) and node.attr in ("resolve_project", "project_at_folder")
    ]
    assert offenders == []


def test_psycopg_is_imported_only_by_the_data_layers() -> None:
    offenders = [
        name
        for name, path in modules().items()
        if not under(name, DATA_LAYERS)
        and any(i.split(".")[0] in ("psycopg", "psycopg_pool") for i in imports_of(path))
    ]
    assert offenders == []


def test_sql_strings_appear_only_in_the_data_layers() -> None:
    offenders = []
    for name, path in modules().items():
        if under(name, DATA_LAYERS + FOREIGN_DATABASES):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and SQL_STATEMENT.search(node.value)
            ):
                offenders.append(f"{name}: {node.value[:40]!r}")
    assert offenders == []


def test_adapters_do_not_reach_into_the_store() -> None:
    offenders = [
        name
        for name, path in modules().items()
        if under(name, NO_STORE) and any(under(i, ("server.store",)) for i in imports_of(path))
    ]
    assert offenders == []


# What adapters may import from the service layer: its face (server/service/face.py), and the
# users' directory the auth guard asks about tokens.
SERVICE_FACE = ("server.service.face", "server.service.users")


def test_adapters_reach_the_service_only_through_its_face() -> None:
    """REST, MCP and the hook routes are typed against MemoryApi, never MemoryService, so mypy
    refuses a call to a method the face does not list."""
    offenders = [
        f"{name} imports {i}"
        for name, path in modules().items()
        if under(name, ("server.adapters",))
        for i in imports_of(path)
        if under(i, ("server.service",)) and not under(i, SERVICE_FACE)
    ]
    assert offenders == []


def test_store_does_not_import_service_or_adapters() -> None:
    offenders = [
        name
        for name, path in modules().items()
        if under(name, DATA_LAYERS)
        and any((rank(i) or 0) > rank(name) for i in imports_of(path) if i.startswith("server."))
    ]
    assert offenders == []


# What the hook client may import besides the standard library: the working-tree check, the
# redaction it applies to what it shows (and how it reads text), and the agents' facts (all
# standard library only).
HOOK_PROCESS = (
    "server.worktree",
    "server.core.redact",
    "server.core.readable",
    "server.agent_facts",
)


def test_hooks_use_only_the_standard_library() -> None:
    hook_process = [
        path
        for name, path in modules().items()
        if name == "server.hooks" or under(name, HOOK_PROCESS)
    ]
    third_party = [
        f"{path.name}: {i}"
        for path in hook_process
        for i in imports_of(path)
        if i.split(".")[0] not in sys.stdlib_module_names
        and not i.startswith("__future__")
        and not under(i, HOOK_PROCESS)
    ]
    assert third_party == []


# The one list of agents, and the registry that loads each agent's connect module from it.
AGENT_LISTS = ("server.agent_facts", "server.agent_facts.every", "server.agents.registry")
# Modules that import one agent's module on purpose, and why.
AGENT_IMPORTS_ALLOWED = {
    # Claude Code is the default agent of the importer (hooks that name no agent predate it).
    "server.ingest.importer": "claude_code",
    "server.ingest.session_imports": "claude_code",
    # `install-hooks` writes Claude Code's settings.json (it predates `connect`).
    "server.jobs.hook_install": "claude_code",
    # `export-training` reads Claude Code transcripts only.
    "server.ingest.training": "claude_code",
    # Prompt recall strips the <hook_context> blocks Gemini CLI folds into a prompt.
    "server.recall.hook": "gemini",
    # `import --from claude-md` reads Claude Code's config folder and memory files.
    "server.ingest.from_claude_md": "claude_code",
    # `profile --patch-claude-md` points Claude Code's user-wide CLAUDE.md at the profile.
    "server.learning.profile": "claude_code",
    # Claude Code's transcripts are found under its config folder.
    "server.ingest.discovery": "claude_code",
}


def agent_stems() -> dict[str, str]:
    """Each agent's name -> the stem of its modules (`claude_code` for claude-code)."""
    from server.agent_facts.every import ABOUT

    return {name: about.__name__.rsplit(".", 1)[1] for name, about in ABOUT.items()}


def owner(module: str) -> str | None:
    """The stem of the agent whose own module `module` is: server/agent_facts/<stem>.py,
    server/agents/<stem>.py, server/ingest/<stem>.py or <stem>_*.py, and the model that
    distils with its CLI, server/learning/<stem>_model.py; None for others."""
    package, _, last = module.rpartition(".")
    if package not in ("server.agent_facts", "server.agents", "server.ingest", "server.learning"):
        return None
    return next(
        (
            stem
            for stem in agent_stems().values()
            if (last == stem and package != "server.learning")
            or (package == "server.ingest" and last.startswith(f"{stem}_"))
            or (package == "server.learning" and last == f"{stem}_model")
        ),
        None,
    )


def test_an_agent_is_named_only_by_its_own_modules() -> None:
    """Adding an agent is its modules and one line in the list: no other module names one,
    the hook client included (it reads the agents from server/agent_facts/)."""
    from server.agent_facts.every import ABOUT

    words = set(ABOUT) | {about.LABEL for about in ABOUT.values()}
    offenders = [
        f"{name}:{node.lineno} {node.value!r}"
        for name, path in modules().items()
        if owner(name) is None and name not in AGENT_LISTS
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and node.value in words
    ]
    assert offenders == []


def instruction_files() -> dict[str, set[str]]:
    """Each instruction file's name (its path at a repository's root, and its bare name) ->
    the facts modules that declare it (AGENTS.md is Codex's and OpenCode's)."""
    from server.agent_facts.every import ABOUT

    declared: dict[str, set[str]] = {}
    for about in ABOUT.values():
        for path in (about.INSTRUCTIONS_FILE, *about.MORE_INSTRUCTIONS_FILES):
            for name in (path, Path(path).name):
                declared.setdefault(name, set()).add(about.__name__)
    return declared


def strings(path: Path) -> list[ast.Constant]:
    """The string literals of a module, its docstrings left out (prose may name a file)."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ]


def test_an_instruction_file_is_named_only_by_its_agents_facts() -> None:
    """CLAUDE.md, AGENTS.md, GEMINI.md, .github/copilot-instructions.md...: each is declared
    once, in the facts of the agent that reads it; promote, the importer, connect and the rules
    of what is promoted read it from there. A literal equal to one, or a path ending in one,
    anywhere else in server/ is a second list."""
    declared = instruction_files()
    assert {"CLAUDE.md", "AGENTS.md", "GEMINI.md", ".github/copilot-instructions.md"} <= set(
        declared
    )
    offenders = [
        f"{name}:{node.lineno} {node.value!r}"
        for name, path in modules().items()
        for node in strings(path)
        for file, owners in declared.items()
        if (node.value == file or node.value.endswith(f"/{file}")) and name not in owners
    ]
    assert offenders == []


def test_only_an_agents_own_modules_import_it() -> None:
    known = modules()
    offenders = []
    for name, path in known.items():
        for target in {i for i in imports_of(path) if i in known}:
            stem = owner(target)
            if stem is None or stem == owner(name) or name in AGENT_LISTS:
                continue
            if AGENT_IMPORTS_ALLOWED.get(name) != stem:
                offenders.append(f"{name} -> {target}")
    assert sorted(offenders) == []


def test_every_agent_has_its_modules() -> None:
    """Its facts in agent_facts/ and its connect module, whose Agent is the registry's."""
    from server.agent_facts.every import ABOUT
    from server.agents.registry import AGENTS

    assert list(AGENTS) == list(ABOUT)
    for name, agent in AGENTS.items():
        # The hook client imports server/agent_facts/<name>.py by the agent's name alone.
        assert agent_stems()[name] == name.replace("-", "_")
        assert agent.about is ABOUT[name]
        assert agent.connect.__module__ in (f"server.agents.{agent_stems()[name]}", "functools")
        if agent.format is not None:
            assert agent.format.source == name
            assert owner(agent.format.read.__module__) == agent_stems()[name]


def test_the_service_shows_the_adapters_face_and_the_importers_writes_only() -> None:
    """The jobs' own steps are composed parts (`service.learning`, `.leases`, ...), not methods."""
    import inspect

    from server.service.face import MemoryApi, RecallApi
    from server.service.memory import MemoryService

    def public(cls: type) -> set[str]:
        return {n for n, v in inspect.getmembers(cls) if not n.startswith("_") and callable(v)}

    importers = {
        "import_files",
        "import_state",
        "stored_record_uuids",
        "restore_links",
        "vector_indexes_after",
    }
    assert public(MemoryService) - public(RecallApi) == importers
    assert public(MemoryApi) <= public(RecallApi) <= public(MemoryService)


MAX_ADAPTER_FUNCTION_LINES = 80


def test_no_adapter_function_is_over_80_lines() -> None:
    """A handler that grows past a screen is doing the service's work (or holds nested ones)."""
    too_long = [
        f"{name}.{node.name}: {node.end_lineno - node.lineno + 1} lines"
        for name, path in modules().items()
        if under(name, ("server.adapters",))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > MAX_ADAPTER_FUNCTION_LINES
    ]
    assert too_long == []


def test_rest_handlers_and_mcp_tools_are_top_level_and_take_the_service_first() -> None:
    """Each can be imported and called alone: `await handler(service, ...)`."""
    import inspect
    from typing import get_type_hints

    from server.adapters.mcp import TOOLS
    from server.adapters.rest import HANDLERS
    from server.service.face import MemoryApi

    functions = [*HANDLERS.values(), *(tool.function for tool in TOOLS)]
    offenders = [
        f"{function.__module__}.{function.__qualname__}"
        for function in functions
        if function.__qualname__ != function.__name__
        or next(iter(inspect.signature(function).parameters)) != "service"
        or get_type_hints(function)["service"] is not MemoryApi
    ]
    assert len(HANDLERS) == 36 and len(TOOLS) == 22
    assert offenders == []


def test_no_adapter_holds_the_service_in_a_global() -> None:
    """MCP tools get the service from FastMCP's lifespan context, REST handlers as bound by
    server/adapters/rest/__init__.py: neither through module state."""
    offenders = [
        f"{name}:{node.lineno}"
        for name, path in modules().items()
        if under(name, ("server.adapters",))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Global)
    ]
    assert offenders == []
