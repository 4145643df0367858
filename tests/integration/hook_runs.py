"""Running the Claude Code hook as Claude Code does, and reading what it printed.

run_hook    the exact command `install-hooks` registers, through the shell, with a payload on
            stdin; started with asyncio, so a server in the test's own event loop keeps serving
run_command the same for any hook command line (another agent's)
wait_for_turns  until a session's import (the session-end hook's, in the background) stored
            its turns
payload     a payload from shared/fixtures/hooks/, with fields changed
context_of  additionalContext from the one documented output shape; fails on any other
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import dataclass
from typing import Any

from server.core.models.memories import MemoryFilter
from server.jobs.hook_install import hook_command
from server.service.memory import MemoryService
from tests.fixture_sessions import SHARED_FIXTURES

HOOK_FIXTURES = SHARED_FIXTURES / "hooks"
CONTEXT_LIMIT = 10_000  # Claude Code's cap on additionalContext


@dataclass(frozen=True)
class HookRun:
    returncode: int
    stdout: str
    stderr: str

    def output(self) -> dict[str, Any]:
        assert self.returncode == 0, self.stderr
        parsed = json.loads(self.stdout)
        assert isinstance(parsed, dict)
        return parsed


def payload(name: str, **changes: Any) -> dict[str, Any]:
    data = json.loads((HOOK_FIXTURES / f"{name}.json").read_text())
    assert isinstance(data, dict)
    return {**data, **changes}


async def run_hook(
    event: str, data: dict[str, Any], url: str, env: dict[str, str] | None = None
) -> HookRun:
    """The registered command line, through the shell, with `data` on stdin."""
    environment = {k: v for k, v in os.environ.items() if k != "CLAUDE_MEMORY_TOKEN"}
    return await run_command(hook_command(event, url), data, {**environment, **(env or {})})


async def run_command(
    command: str, data: dict[str, Any], env: dict[str, str] | None = None
) -> HookRun:
    """A hook's command line (any agent's), through the shell, with `data` on stdin, in `env`
    (this process's environment when None)."""
    process = await asyncio.create_subprocess_shell(
        command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    out, err = await asyncio.wait_for(process.communicate(json.dumps(data).encode()), 30)
    return HookRun(process.returncode or 0, out.decode(), err.decode())


async def wait_for_turns(
    service: MemoryService, session_id: str, at_least: int = 1, timeout: float = 60
) -> int:
    """Poll until `session_id` has `at_least` turns stored; their number. The timeout is a
    deadline for a loaded machine, not a bound the test asserts."""
    deadline = time.monotonic() + timeout
    while True:
        page = await service.list_memories(MemoryFilter(session_id=session_id), limit=1)
        if page.total >= at_least:
            return page.total
        assert time.monotonic() < deadline, f"{session_id}: {page.total} turns imported"
        await asyncio.sleep(0.1)


def context_of(run: HookRun, event: str) -> str:
    """additionalContext from the one documented shape; fails on any other shape."""
    output = run.output()
    assert set(output) == {"hookSpecificOutput"}
    specific = output["hookSpecificOutput"]
    assert specific["hookEventName"] == event
    context = specific["additionalContext"]
    assert isinstance(context, str)
    assert 0 < len(context) < CONTEXT_LIMIT
    return context
