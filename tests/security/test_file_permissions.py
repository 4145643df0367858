"""Files holding memories are readable by their owner only, whatever the umask.

Other users of the machine must not read memories from disk any more than over HTTP: the
embedded database's files, backups, and the exports the MCP tool writes for large results are
all full copies of the memories.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastmcp import Client

from server.adapters.mcp.memories import INLINE_EXPORT_LIMIT
from server.core.models.memories import MemoryDraft
from server.db.embedded import EmbeddedPostgres
from server.jobs.backup import backup
from server.service.memory import MemoryService

pytestmark = pytest.mark.security


@pytest.fixture
def usual_umask() -> Iterator[None]:
    """The common 022 umask, under which files are world-readable unless made otherwise."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def others_can_read(path: Path) -> bool:
    return bool(path.stat().st_mode & (stat.S_IRWXG | stat.S_IRWXO))


def test_the_embedded_database_files_are_owner_only(pg_server: EmbeddedPostgres) -> None:
    assert not others_can_read(pg_server.pgdata)


def test_backups_are_owner_only(pg_url: str, tmp_path: Path, usual_umask: None) -> None:
    result = backup(pg_url, tmp_path / "backups", keep=1)

    assert not others_can_read(Path(result.file))


async def test_large_exports_written_by_the_mcp_tool_are_owner_only(
    service: MemoryService, app_url: str, usual_umask: None
) -> None:
    drafts = [
        MemoryDraft(f"Inventory line {n}: bin {n % 17} holds {n * 3} parts.")
        for n in range(INLINE_EXPORT_LIMIT + 1)
    ]
    await service.save_many(drafts, force=True)

    async with Client(f"{app_url}/mcp") as client:
        result = await client.call_tool("export_memories", {})

    assert result.structured_content is not None
    path = result.structured_content["path"]
    assert path is not None
    assert not others_can_read(Path(path))
