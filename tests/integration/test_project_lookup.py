"""A project found by its folder or its name without the project list (migration 024).

The hooks ask for the project of a session's working folder on every prompt and tool call,
and every filtered read resolves a project name. Both used to read the project list, a scan
of the whole store each time anything had been committed since (a receipt, the journal: on
every prompt of a working session). They are now index reads; these tests hold the rules
they keep and that the statements can use the indexes at all.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from server.core.errors import NotFound
from server.recall.hook import HookRecall
from server.service.memory import MemoryService
from server.store.memories import PROJECT_NAMED_SQL, PROJECTS_AT_FOLDERS_SQL
from server.store.tx import Pool

DAY = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


async def remember(service: MemoryService, text: str, project: str, path: str, days: int) -> int:
    outcome = await service.save(
        text,
        project=project,
        project_path=path,
        created_at=DAY + timedelta(days=days),
        force=True,
    )
    return outcome.id


@pytest.fixture
async def projects(service: MemoryService) -> MemoryService:
    await remember(service, "The shop API answers in JSON.", "shop", "/home/dev/Shop", 0)
    await remember(
        service, "The storefront is built with Vite.", "shop-web", "/home/dev/Shop/web/", 1
    )
    await remember(service, "Commit subjects are lower case.", "", "", 2)
    return service


async def test_a_folder_is_read_as_the_closest_project_folder_above_it(
    projects: MemoryService,
) -> None:
    assert await projects.project_at_folder("/home/dev/Shop") == "shop"
    assert await projects.project_at_folder("/HOME/dev/shop/src/api/") == "shop"
    assert await projects.project_at_folder("/home/dev/Shop/web") == "shop-web"
    assert await projects.project_at_folder("/home/dev/Shop/web/src/pages") == "shop-web"
    assert await projects.project_at_folder("/home/dev/Shopkeeper") is None
    assert await projects.project_at_folder("/home/dev") is None
    assert await projects.project_at_folder("/") is None
    assert await projects.project_at_folder("  ") is None
    assert await projects.project_at_folder("/home/dev/Shop\x00") is None  # no text holds NUL


async def test_every_way_in_reads_a_folder_by_the_same_rule(projects: MemoryService) -> None:
    """REST, MCP and the CLI resolve a project as the hooks do: a sub-folder of a project's
    folder is that project; a folder under none of them is an error naming the projects."""
    assert await projects.resolve_project("/home/dev/shop/src/api") == "shop"
    assert await projects.resolve_project("/home/dev/Shop/web/src") == "shop-web"
    assert await projects.resolve_project("SHOP-web") == "shop-web"
    with pytest.raises(NotFound, match="known projects: shop, shop-web"):
        await projects.resolve_project("/home/dev/Shopkeeper")
    context = await projects.startup_context("/home/dev/Shop/web/src/pages")
    assert context.project == "shop-web"


async def test_a_folder_two_projects_were_written_in_is_the_newer_ones(
    projects: MemoryService,
) -> None:
    renamed = await remember(
        projects, "The shop API is now GraphQL.", "shop-api", "/home/dev/Shop", 5
    )
    assert await projects.project_at_folder("/home/dev/Shop/src") == "shop-api"

    await projects.soft_delete(renamed)

    assert await projects.project_at_folder("/home/dev/Shop/src") == "shop"


async def test_a_project_written_just_now_is_found_at_once(projects: MemoryService) -> None:
    recall = HookRecall(projects, projects.settings)
    assert await recall.project_for("/srv/billing") is None

    await remember(projects, "Invoices are numbered per year.", "billing", "/srv/billing", 3)

    assert await recall.project_for("/srv/billing/worker") == "billing"
    assert await projects.resolve_project("BILLING") == "billing"


async def test_a_name_or_folder_resolves_to_its_project(projects: MemoryService) -> None:
    assert await projects.resolve_project("Shop-Web") == "shop-web"
    assert await projects.resolve_project("/home/dev/shop/web") == "shop-web"
    assert await projects.resolve_project("/home/dev/Shop/") == "shop"
    assert await projects.resolve_project("") is None
    assert await projects.resolve_project("shop\x00") == "shop"  # cleaned as all text is
    with pytest.raises(NotFound) as refused:
        await projects.resolve_project("/home/dev")
    assert "shop" in str(refused.value) and "shop-web" in str(refused.value)


async def plan(pool: Pool, statement: str, params: dict[str, Any]) -> str:
    """The plan the database chooses for `statement` when it may not read the whole table."""
    async with pool.connection() as conn, conn.transaction():
        await conn.execute("SET LOCAL enable_seqscan = off")
        await conn.execute("SET LOCAL enable_bitmapscan = off")
        cur = await conn.execute(f"EXPLAIN {statement}", params)
        return "\n".join(str(row[0]) for row in await cur.fetchall())


@pytest.mark.usefixtures("projects")
async def test_the_lookups_read_the_indexes_of_migration_024(
    pool: Pool,
) -> None:
    at_folders = await plan(pool, PROJECTS_AT_FOLDERS_SQL, {"folders": ["/home/dev/shop"]})
    named = await plan(pool, PROJECT_NAMED_SQL, {"name": "shop", "folder": "shop"})

    assert "memories_project_folder_idx" in at_folders, at_folders
    assert "memories_project_folded_idx" in named, named
    assert "memories_project_folder_idx" in named, named
