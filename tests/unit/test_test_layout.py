"""Where test helpers live, checked by parsing tests/ and bench/.

- a helper shared by test files lives in a helper module (no `test_` prefix): in tests/ when
  more than one test group uses it, in tests/<group>/ when only that group does; no module
  imports from a test module (`test_*.py`), whose names are pytest's to collect;
- a conftest holds fixtures and hooks, not a list of names for others: no module imports from
  one (pytest loads conftests itself), every name it imports it uses itself (a fixture shared
  by every group is a plugin in tests/conftest.py's `pytest_plugins`), and it has no `__all__`.
- every test file has a name of its own across the groups (pytest imports it by name).
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ROOTS = (REPO / "tests", REPO / "bench")


def python_files() -> list[Path]:
    return sorted(path for root in ROOTS for path in root.rglob("*.py"))


def package_of(path: Path) -> list[str]:
    return list(path.relative_to(REPO).parent.parts)


def imported_modules(source: str, package: list[str]) -> list[tuple[int, str]]:
    """(line, module) for every import of a module in `package`, relative ones resolved;
    `from a import b` gives both `a` and `a.b`, since b may be a module."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            found.append((node.lineno, module))
            found.extend((node.lineno, f"{module}.{alias.name}") for alias in node.names)
    return found


def not_importable(module: str) -> bool:
    """A test module or a conftest, or a name in one."""
    return any(part.startswith("test_") or part == "conftest" for part in module.split("."))


def unused_imports(path: Path) -> list[str]:
    """The names a module imports and never uses itself: what it holds only for others."""
    tree = ast.parse(path.read_text())
    imported: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                name = alias.asname or alias.name.split(".")[0]
                if name != "annotations":  # from __future__ import annotations
                    imported[name] = node.lineno
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    return [f"{name} (line {line})" for name, line in imported.items() if name not in used]


def exports(path: Path) -> bool:
    return any(
        isinstance(node, ast.Assign | ast.AnnAssign)
        and any(
            isinstance(target, ast.Name) and target.id == "__all__"
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        )
        for node in ast.walk(ast.parse(path.read_text()))
    )


def test_no_module_imports_from_a_test_module_or_a_conftest() -> None:
    offenders = [
        f"{path.relative_to(REPO)}:{line} imports {module}"
        for path in python_files()
        for line, module in imported_modules(path.read_text(), package_of(path))
        if not_importable(module)
    ]
    assert offenders == [], "move the helper into a helper module (see the docstring)"


def test_conftests_use_every_name_they_import_and_export_none() -> None:
    conftests = [path for path in python_files() if path.name == "conftest.py"]
    assert conftests
    held_for_others = {
        str(path.relative_to(REPO)): unused_imports(path) + (["__all__"] if exports(path) else [])
        for path in conftests
    }
    assert {path: names for path, names in held_for_others.items() if names} == {}


def test_the_rules_see_what_they_forbid(tmp_path: Path) -> None:
    """The checks above catch a test-module import (relative too) and a re-export."""
    source = "from .test_hooks import run_hook\nfrom . import test_mcp_tools\n"
    found = imported_modules(source, ["tests", "integration"])
    assert (1, "tests.integration.test_hooks") in found
    assert (2, "tests.integration.test_mcp_tools") in found
    assert not_importable("tests.e2e.conftest.Seeded")
    assert not not_importable("tests.integration.hook_runs")
    conftest = tmp_path / "conftest.py"
    conftest.write_text(
        "from tests.db_fixtures import free_port, serving\n__all__ = ['serving']\n"
        "def fixture() -> int:\n    return free_port()\n"
    )
    assert unused_imports(conftest) == ["serving (line 1)"]
    assert exports(conftest)


def test_every_test_file_name_is_unique_across_the_groups() -> None:
    """The test folders are not packages: pytest imports a test file by its name alone, and
    a second file of the same name in another group stops collection of the whole run."""
    names: dict[str, list[str]] = {}
    for path in (REPO / "tests").rglob("test_*.py"):
        names.setdefault(path.name, []).append(str(path.relative_to(REPO)))
    assert {name: paths for name, paths in names.items() if len(paths) > 1} == {}
