"""Dependency rules, checked by parsing imports (the layering in docs/ARCHITECTURE.md).

- psycopg and SQL live only in server/store/ and server/db/;
- adapters (api, mcp_tools, cli, app) never import server.store;
- the store never imports the service or the adapters;
- hooks.py (when it exists) imports only the standard library.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

SERVER = Path(__file__).resolve().parents[2] / "server"
DATA_LAYERS = ("store", "db")
ADAPTERS = ("server.api", "server.mcp_tools", "server.cli", "server.app")
SQL_STATEMENT = re.compile(
    r"\b(SELECT\b.*\bFROM|INSERT INTO|UPDATE \w+ SET|DELETE FROM|CREATE (TABLE|INDEX|EXTENSION)"
    r"|ALTER TABLE|DROP (TABLE|INDEX|DATABASE)|TRUNCATE)\b",
    re.S,
)


def modules() -> dict[str, Path]:
    found = {}
    for path in SERVER.rglob("*.py"):
        parts = path.relative_to(SERVER.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def in_data_layer(module: str) -> bool:
    return any(module.startswith(f"server.{layer}") for layer in DATA_LAYERS)


def test_psycopg_is_imported_only_by_the_data_layers() -> None:
    offenders = [
        name
        for name, path in modules().items()
        if not in_data_layer(name)
        and any(i.split(".")[0] in ("psycopg", "psycopg_pool") for i in imports_of(path))
    ]
    assert offenders == []


def test_sql_strings_appear_only_in_the_data_layers() -> None:
    offenders = []
    for name, path in modules().items():
        if in_data_layer(name):
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
        if name in ADAPTERS and any(i.startswith("server.store") for i in imports_of(path))
    ]
    assert offenders == []


def test_store_does_not_import_service_or_adapters() -> None:
    upward = ("server.memory", "server.app", "server.api", "server.mcp_tools", "server.cli")
    offenders = [
        name
        for name, path in modules().items()
        if name.startswith("server.store") and any(i.startswith(upward) for i in imports_of(path))
    ]
    assert offenders == []


def test_hooks_use_only_the_standard_library() -> None:
    path = SERVER / "hooks.py"
    if not path.exists():
        return
    third_party = [
        i
        for i in imports_of(path)
        if i.split(".")[0] not in sys.stdlib_module_names and not i.startswith("__future__")
    ]
    assert third_party == []
