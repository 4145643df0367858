"""Dependency rules, checked by parsing imports (the layering in docs/ARCHITECTURE.md).

- every module sits in a layer of LAYERS, and imports (at any depth, lazy ones too) only from
  its own layer or a lower one; a new module fails until it is placed;
- psycopg and SQL live only in server/store/ and server/db/;
- adapters, schemas and the entry points never import server.store;
- adapters reach the service only through its face (server/service/face.py);
- hooks.py imports only the standard library, server/worktree and server/agents/about (the
  same rule), since the agents run it with `python -I -S`;
- an agent is named only by its own modules and the one list of agents;
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
# Lowest first. A module belongs to the layer of its longest matching prefix.
LAYERS = (
    # shared vocabulary; the stdlib-only hook client, the working-tree check it runs and the
    # agents' facts it reads
    ("server.core", "server.hooks", "server.worktree", "server.agents.about"),
    ("server.domain",),  # pure rules, no I/O
    ("server.db", "server.store"),  # getting a database; all SQL
    ("server.service",),  # MemoryService and its parts
    ("server.ingest", "server.learning"),  # jobs that feed the service
    ("server.recall",),  # the way out: what the hooks inject, checked against the code
    ("server.jobs", "server.agents"),  # what the CLI's commands run; the agents they reach
    ("server.schemas",),  # request and response models
    ("server.adapters",),  # REST, OpenAPI, MCP, hook routes, HTTP guards
    ("server.app", "server.cli"),  # entry points
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


def rank(module: str) -> int | None:
    """The layer of `module`; the bare package (`__version__` only) counts as the lowest."""
    if module == "server":
        return 0
    matches = [(len(p), i) for i, layer in enumerate(LAYERS) for p in layer if under(module, (p,))]
    return max(matches)[1] if matches else None


def test_every_module_is_in_a_layer() -> None:
    assert [name for name in modules() if rank(name) is None] == []


def test_imports_point_to_the_same_or_a_lower_layer() -> None:
    known = modules()
    upward = []
    for name, path in known.items():
        for target in {i for i in imports_of(path) if i in known}:
            if (rank(target) or 0) > (rank(name) or 0):
                upward.append(f"{name} -> {target}")
    assert sorted(upward) == []


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


def test_adapters_leave_the_project_to_the_service() -> None:
    """One project rule (server/service/projects.py), applied by the service to what a request
    names: an adapter or a command hands the project over as the user wrote it and never
    resolves it."""
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
    "server.agents.about",
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
AGENT_LISTS = ("server.agents.about", "server.agents.about.every", "server.agents.registry")
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
}


def agent_stems() -> dict[str, str]:
    """Each agent's name -> the stem of its modules (`claude_code` for claude-code)."""
    from server.agents.about.every import ABOUT

    return {name: about.__name__.rsplit(".", 1)[1] for name, about in ABOUT.items()}


def owner(module: str) -> str | None:
    """The stem of the agent whose own module `module` is: server/agents/about/<stem>.py,
    server/agents/<stem>.py, server/ingest/<stem>.py or <stem>_*.py, and the model that
    distils with its CLI, server/learning/<stem>_model.py; None for others."""
    package, _, last = module.rpartition(".")
    if package not in ("server.agents.about", "server.agents", "server.ingest", "server.learning"):
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
    the hook client included (it reads the agents from server/agents/about/)."""
    from server.agents.about.every import ABOUT

    words = set(ABOUT) | {about.LABEL for about in ABOUT.values()}
    offenders = [
        f"{name}:{node.lineno} {node.value!r}"
        for name, path in modules().items()
        if owner(name) is None and name not in AGENT_LISTS
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and node.value in words
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
    """Its facts in about/ and its connect module, whose Agent is the one the registry holds."""
    from server.agents.about.every import ABOUT
    from server.agents.registry import AGENTS

    assert list(AGENTS) == list(ABOUT)
    for name, agent in AGENTS.items():
        # The hook client imports server/agents/about/<name>.py by the agent's name alone.
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
