"""The `processes` marker `--quick` leaves out: set on the modules that start processes."""

from __future__ import annotations

from pathlib import Path

from tests.process_marks import starts_processes

TESTS = Path(__file__).parents[1]


def module(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    return path


def test_a_module_importing_subprocess_or_asyncios_subprocesses_starts_processes(
    tmp_path: Path,
) -> None:
    assert starts_processes(module(tmp_path, "a", "import subprocess\n"))
    assert starts_processes(module(tmp_path, "b", "from multiprocessing import Process\n"))
    spawn = "import asyncio\n\nasync def f():\n    await asyncio.create_subprocess_exec('x')\n"
    assert starts_processes(module(tmp_path, "c", spawn))


def test_a_module_importing_a_test_helper_that_starts_processes_starts_them_too(
    tmp_path: Path,
) -> None:
    assert starts_processes(TESTS / "integration" / "processes.py")
    assert starts_processes(module(tmp_path, "d", "from tests.integration import processes\n"))
    assert starts_processes(
        module(tmp_path, "e", "from tests.integration.processes import run_cli\n")
    )


def test_a_module_working_in_pytests_own_process_is_left_in_the_quick_loop(
    tmp_path: Path,
) -> None:
    source = (
        "import asyncio\nfrom server.core.config import Settings\nfrom tests import search_hits\n"
    )
    assert not starts_processes(module(tmp_path, "f", source))
    assert not starts_processes(TESTS / "integration" / "test_service_search.py")
