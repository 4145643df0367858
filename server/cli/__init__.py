"""`claude-memory`: the command line. `main.py` holds the parser and the server's own commands
(serve, stop, mcp-stdio, migrate, reembed, ...); each other module adds one group of commands
and runs it through the jobs and the service: `jobs.py` (import, distill, signals, behavior,
profile, export-training, hooks), `connect.py`, `learn.py`, `lessons.py`, `users.py`.
"""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """The `claude-memory` entry point (pyproject's `server.cli:main`, which the scripts
    installed before the CLI became a package call too); the commands are in `main.py`."""
    from server.cli.main import main as run

    return run(argv)
