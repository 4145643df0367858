"""`./quickstart.sh --native --detach` from this checkout: health, UI, MCP, then `stop`."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import httpx
from fastmcp import Client

from tests.db_fixtures import free_port

ROOT = Path(__file__).resolve().parents[2]


async def test_quickstart_native_detach_serves_everything_and_stop_stops_it(
    tmp_path: Path,
) -> None:
    port = free_port()
    env = {
        **os.environ,
        "CLAUDE_MEMORY_HOME": str(tmp_path / "data"),
        "CLAUDE_MEMORY_PORT": str(port),
        "HOME": str(tmp_path / "home"),
    }
    env.pop("CLAUDE_MEMORY_DATABASE_URL", None)
    (tmp_path / "home").mkdir(exist_ok=True)
    stop = [str(ROOT / ".venv" / "bin" / "claude-memory"), "stop"]

    try:
        started = subprocess.run(
            [str(ROOT / "quickstart.sh"), "--native", "--detach", "--no-import"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert started.returncode == 0, started.stdout[-3000:] + started.stderr[-3000:]
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            health = await http.get("/health")
            ui = await http.get("/ui/")
        async with Client(f"http://127.0.0.1:{port}/sse") as client:
            context = await client.call_tool("startup_context", {})
    finally:
        stopped = subprocess.run(stop, env=env, capture_output=True, text=True, timeout=120)

    assert health.status_code == 200
    assert ui.status_code == 200
    assert '<div id="root">' in ui.text or "<script" in ui.text
    assert context.structured_content is not None
    assert "Memory context" in context.structured_content["markdown"]
    assert '"stopped"' in stopped.stdout
    assert "skipped (not a terminal" in started.stdout
