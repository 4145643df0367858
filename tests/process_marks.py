"""Which test modules start processes: the `processes` marker `--quick` leaves out."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

PROCESS_MODULES = frozenset({"subprocess", "multiprocessing", "pexpect"})
PROCESS_CALLS = frozenset({"create_subprocess_exec", "create_subprocess_shell"})


@cache
def starts_processes(path: Path) -> bool:
    """Whether the test module at `path` starts processes (a CLI, a server, an agent, a shell):
    it imports subprocess or multiprocessing, calls asyncio's subprocess functions, or imports
    a module of tests/ that does. Such tests are marked `processes`; `--quick` leaves them out,
    as they pay an interpreter, the model or an npm client per process."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in PROCESS_CALLS:
            return True
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        for name in names:
            if name.split(".")[0] in PROCESS_MODULES:
                return True
            own = _test_module_path(name)
            if own is not None and own != path and starts_processes(own):
                return True
    return False


def _test_module_path(name: str) -> Path | None:
    """tests/a/b.py for `tests.a.b`, if that file exists (a name from tests/ itself)."""
    if not name.startswith("tests."):
        return None
    candidate = Path(__file__).parent.joinpath(*name.split(".")[1:]).with_suffix(".py")
    return candidate if candidate.is_file() else None
