"""Every third-party package the server imports is installed by its runtime dependencies.

The test environment also has the `dev` extra, so a module imported by the server but declared
only there (httpx, once) passes every other test and then fails the Docker image, which installs
`[project].dependencies` alone. This walks those dependencies and what they require, as the
installed distributions declare it, and checks every import in server/ against that set.
"""

from __future__ import annotations

import ast
import sys
import tomllib
from importlib.metadata import PackageNotFoundError, distribution, packages_distributions
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]


def imported_top_level_names() -> set[str]:
    """The first part of every absolute import in server/, lazy imports included."""
    names: set[str] = set()
    for path in (ROOT / "server").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
    return {name for name in names if name not in sys.stdlib_module_names and name != "server"}


def runtime_closure() -> set[str]:
    """The declared runtime dependencies and, recursively, what they require (no extras)."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    pending = [Requirement(line) for line in declared]
    seen: set[str] = set()
    while pending:
        requirement = pending.pop()
        name = canonicalize_name(requirement.name)
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = distribution(name).requires or []
        except PackageNotFoundError:
            continue  # a platform-specific requirement this machine does not install
        for line in requires:
            child = Requirement(line)
            if child.marker is None or child.marker.evaluate({"extra": ""}):
                pending.append(child)
    return seen


def test_every_imported_package_comes_with_the_runtime_dependencies() -> None:
    installed_by = packages_distributions()
    closure = runtime_closure()
    missing = {
        name: installed_by.get(name, ["(not installed)"])
        for name in sorted(imported_top_level_names())
        if not any(canonicalize_name(dist) in closure for dist in installed_by.get(name, []))
    }
    assert not missing, (
        f"server/ imports {missing}, which [project].dependencies in pyproject.toml does not "
        "install (the Docker image would fail to start): add it there"
    )


def test_the_walk_sees_what_the_server_is_known_to_need() -> None:
    """The closure is not vacuous: direct and transitive runtime packages are in it."""
    closure = runtime_closure()
    assert {"torch", "psycopg", "fastmcp", "starlette"} <= closure
    assert "pydantic" in closure  # required by fastmcp/mcp, never declared by us
    assert "pytest" not in closure and "playwright" not in closure
