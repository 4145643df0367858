"""The service package's docstring says which file holds each of MemoryService's public
methods (server/service/__init__.py); this keeps that table true as methods come and go."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import server.service
from server.service.memory import MemoryService

ROW = re.compile(r"^    (\w+\.py)\s+(\w+)\s+(.*)$")
CONTINUED = re.compile(r"^\s{20,}(\S.*)$")


def documented() -> dict[str, tuple[str, set[str]]]:
    """The docstring's table: class -> (file, its methods)."""
    table: dict[str, tuple[str, set[str]]] = {}
    current = ""
    for line in (server.service.__doc__ or "").splitlines():
        if row := ROW.match(line):
            file, current, methods = row.groups()
            table[current] = (file, set())
        elif current and (more := CONTINUED.match(line)):
            methods = more.group(1)
        else:
            current = ""
            continue
        table[current][1].update(m.strip() for m in methods.split(",") if m.strip())
    return table


def actual() -> dict[str, tuple[str, set[str]]]:
    """Each class MemoryService is made of: its file and the public methods it defines."""
    found: dict[str, tuple[str, set[str]]] = {}
    for cls in MemoryService.__mro__[:-1]:  # object last
        methods = {
            name
            for name, value in vars(cls).items()
            if not name.startswith("_") and inspect.isfunction(value)
        }
        found[cls.__name__] = (Path(inspect.getfile(cls)).name, methods)
    return found


def test_the_docstring_names_every_part_its_file_and_methods() -> None:
    assert documented() == actual()
