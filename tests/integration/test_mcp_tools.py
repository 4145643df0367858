"""Every MCP tool (TOOLS) through fastmcp's own Client, over SSE and streamable HTTP, against
the database."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastmcp import Client
from mcp.types import Implementation

from server.core.validation import content_hash
from server.service.memory import MemoryService
from tests.integration.mcp_names import TOOLS

PNPM = "This repository uses pnpm, never npm; CI rejects a package-lock.json."
PAGINATION = "GET /orders uses keyset pagination with an opaque base64url cursor."


@pytest.fixture(params=["sse", "http"])
async def mcp(request: pytest.FixtureRequest, app_url: str) -> AsyncIterator[Client[Any]]:
    path = "/sse" if request.param == "sse" else "/mcp"
    async with Client(f"{app_url}{path}") as client:
        yield client


async def call(client: Client[Any], tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def error_of(client: Client[Any], tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments, raise_on_error=False)
    assert result.is_error
    return str(result.content[0].text)  # type: ignore[union-attr]


async def count_rows(service: MemoryService, where: str = "true") -> int:
    async with service.pool.connection() as conn:
        cur = await conn.execute(f"SELECT count(*) FROM memories WHERE {where}")  # type: ignore[arg-type]
        row = await cur.fetchone()
        return int(row[0]) if row else 0


async def test_lists_exactly_the_21_tools_with_annotations(mcp: Client[Any]) -> None:
    tools = {tool.name: tool for tool in await mcp.list_tools()}

    assert set(tools) == TOOLS
    assert tools["hybrid_search"].annotations.read_only_hint is True  # type: ignore[union-attr]
    assert tools["purge_memory"].annotations.destructive_hint is True  # type: ignore[union-attr]
    assert tools["save_memory"].annotations.read_only_hint is False  # type: ignore[union-attr]
    assert all(tool.description for tool in tools.values())


async def test_save_memory_stores_and_reports_duplicates(
    mcp: Client[Any], service: MemoryService
) -> None:
    first = await call(mcp, "save_memory", content=PNPM, tags=["tooling"], project="acme-api")
    second = await call(mcp, "save_memory", content=PNPM)

    assert first["status"] == "saved"
    assert isinstance(first["id"], int)
    assert second["status"] == "duplicate"
    assert second["similar"]["id"] == first["id"]
    assert await count_rows(service) == 1
    assert (await service.get(first["id"])).project == "acme-api"


async def test_save_memory_redacts_and_counts(mcp: Client[Any], service: MemoryService) -> None:
    result = await call(mcp, "save_memory", content="deploy token ghp_" + "x1Y2" * 9)

    assert result["redacted"] == 1
    assert "ghp_" not in (await service.get(result["id"])).content


async def test_save_memory_with_empty_content_is_an_error_and_writes_nothing(
    mcp: Client[Any], service: MemoryService
) -> None:
    message = await error_of(mcp, "save_memory", content="   ")

    assert "content is empty" in message
    assert await count_rows(service) == 0


async def test_check_memory_reports_noop_for_known_content(
    mcp: Client[Any], service: MemoryService
) -> None:
    saved = await service.save(PNPM)

    result = await call(mcp, "check_memory", content=PNPM)

    assert (result["action"], result["target_id"]) == ("NOOP", saved.id)


@pytest.mark.parametrize(
    ("tool", "score_field"),
    [
        ("semantic_search", "similarity"),
        ("search_memories", "keyword_score"),
        ("hybrid_search", "fused_score"),
    ],
)
async def test_search_tools_return_scored_hits(
    mcp: Client[Any], service: MemoryService, tool: str, score_field: str
) -> None:
    saved = await service.save(PNPM, project="acme-api")
    await service.save(PAGINATION, project="acme-api")

    result = await call(mcp, tool, query="pnpm package manager", project="ACME-API")

    assert result["hits"][0]["id"] == saved.id
    assert isinstance(result["hits"][0][score_field], float)
    assert result["hits"][0]["created_at"].endswith(("Z", "+00:00"))


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"query": "x", "limit": 0}, "limit must be between 1 and 100"),
        ({"query": "x", "since": "someday"}, "since 'someday' is not a date"),
        ({"query": "x", "project": "no-such-project"}, "no project 'no-such-project'"),
        ({"query": ""}, "query is empty"),
    ],
    ids=["limit", "date", "project", "empty"],
)
async def test_search_rejects_bad_input_with_actionable_error(
    mcp: Client[Any], service: MemoryService, arguments: dict[str, Any], message: str
) -> None:
    await service.save(PNPM, project="acme-api")

    assert message in await error_of(mcp, "hybrid_search", **arguments)


@pytest.mark.parametrize(
    ("tool", "mode"),
    [("semantic_search", "semantic"), ("search_memories", "keyword"), ("hybrid_search", "hybrid")],
)
async def test_search_tools_take_the_rest_filters_and_give_its_answer(
    mcp: Client[Any], app_url: str, service: MemoryService, tool: str, mode: str
) -> None:
    wanted = await service.save(PNPM, tags=["build"], kind="preference", project="acme-api")
    await service.save(PNPM + " Since March.", tags=["build"], project="acme-api", force=True)
    await service.save(PNPM + " Since May.", kind="preference", project="acme-api", force=True)
    question = {"query": "pnpm never npm", "project": "acme-api", "tag": "build"}

    by_tool = await call(mcp, tool, **question, kind="preference")
    async with httpx.AsyncClient() as http:
        answer = await http.post(
            f"{app_url}/api/search", json={**question, "kind": "preference", "mode": mode}
        )

    assert [hit["id"] for hit in by_tool["hits"]] == [wanted.id]
    by_route = answer.json()
    assert set(by_route) == set(by_tool) == {
        "mode", "query", "hits", "took_ms", "reranked_by", "rerank_skipped"
    }  # fmt: skip
    assert [hit["id"] for hit in by_route["hits"]] == [wanted.id]
    assert (by_route["mode"], by_route["query"]) == (by_tool["mode"], by_tool["query"])


async def test_hybrid_search_min_similarity_cuts_the_meaning_list_as_rest_does(
    mcp: Client[Any], app_url: str, service: MemoryService
) -> None:
    by_words = await service.save(PNPM, project="acme-api")
    by_meaning = await service.save(PAGINATION, project="acme-api")
    question = {"query": "pnpm", "project": "acme-api"}
    cut = {**question, "min_similarity": 0.99}

    found = await call(mcp, "hybrid_search", **question)
    strict = await call(mcp, "hybrid_search", **cut)
    async with httpx.AsyncClient() as http:
        by_route = (await http.post(f"{app_url}/api/search", json=cut)).json()

    assert {hit["id"] for hit in found["hits"]} == {by_words.id, by_meaning.id}
    assert [hit["id"] for hit in strict["hits"]] == [by_words.id]
    assert [hit["id"] for hit in by_route["hits"]] == [by_words.id]


async def test_hybrid_search_rejects_zero_weights(mcp: Client[Any]) -> None:
    message = await error_of(mcp, "hybrid_search", query="x", keyword_weight=0, semantic_weight=0)

    assert "cannot both be 0" in message


async def test_list_memories_pages_with_total_and_filters(
    mcp: Client[Any], service: MemoryService
) -> None:
    for index in range(3):
        await service.save(f"Release note {index}: shipped feature {index * 17}", tags=["release"])
    await service.save(PNPM, tags=["tooling"])

    page = await call(mcp, "list_memories", limit=2, offset=0, tag="release")

    assert (page["total"], page["limit"], page["offset"]) == (3, 2, 0)
    assert len(page["memories"]) == 2


async def test_get_memory_returns_full_memory_and_errors_for_unknown_id(
    mcp: Client[Any], service: MemoryService
) -> None:
    saved = await service.save(PNPM)

    memory = await call(mcp, "get_memory", memory_id=saved.id)

    assert memory["content"] == PNPM
    assert memory["deleted_at"] is None
    assert "no memory with id 999999" in await error_of(mcp, "get_memory", memory_id=999999)


async def test_recent_context_prefers_distilled_memories(
    mcp: Client[Any], service: MemoryService
) -> None:
    await service.save(PNPM, project="acme-api", kind="raw")
    assert (await call(mcp, "recent_context", project="acme-api"))["source"] == "recent"
    distilled = await service.save(PAGINATION, project="acme-api", kind="distilled")

    result = await call(mcp, "recent_context", project="acme-api")

    assert result["source"] == "distilled"
    assert [m["id"] for m in result["memories"]] == [distilled.id]


async def test_update_memory_changes_content_in_database(
    mcp: Client[Any], service: MemoryService
) -> None:
    saved = await service.save(PNPM)

    result = await call(mcp, "update_memory", memory_id=saved.id, content=PAGINATION, tags=["api"])

    assert result["status"] == "updated"
    stored = await service.get(saved.id)
    assert (stored.content, stored.tags) == (PAGINATION, ["api"])


async def test_delete_restore_and_purge_round_trip(
    mcp: Client[Any], service: MemoryService
) -> None:
    saved = await service.save(PNPM)

    purge_too_early = await error_of(mcp, "purge_memory", memory_id=saved.id)
    deleted = await call(mcp, "delete_memory", memory_id=saved.id)
    deleted_rows = await count_rows(service, "deleted_at IS NOT NULL")
    restored = await call(mcp, "restore_memory", memory_id=saved.id)
    await call(mcp, "delete_memory", memory_id=saved.id)
    purged = await call(mcp, "purge_memory", memory_id=saved.id)

    assert f"call delete_memory({saved.id}) first" in purge_too_early
    assert deleted["deleted_at"] is not None
    assert deleted_rows == 1
    assert restored["deleted_at"] is None
    assert purged == {"purged_id": saved.id}
    assert await count_rows(service) == 0


async def test_find_duplicates_lists_near_copies(mcp: Client[Any], service: MemoryService) -> None:
    first = await service.save("Use pnpm, never npm, in the acme-api repository.")
    second = await service.save("In the acme-api repository use pnpm and never npm.", force=True)

    result = await call(mcp, "find_duplicates", threshold=0.85)

    assert {(p["first_id"], p["second_id"]) for p in result["pairs"]} == {(first.id, second.id)}


async def test_bulk_delete_previews_then_deletes_exactly_the_matches(
    mcp: Client[Any], service: MemoryService
) -> None:
    await service.save(PNPM, source="import")
    await service.save(PAGINATION, source="import")
    await service.save("Money is stored as integer cents.", source="manual")

    preview = await call(mcp, "bulk_delete", source="import")
    live_after_preview = await count_rows(service, "deleted_at IS NULL")
    done = await call(mcp, "bulk_delete", source="import", dry_run=False)

    assert (preview["dry_run"], preview["matched"], preview["deleted"]) == (True, 2, 0)
    assert live_after_preview == 3
    assert (done["matched"], done["deleted"]) == (2, 2)
    assert await count_rows(service, "deleted_at IS NULL") == 1


async def test_bulk_delete_without_filter_is_an_error(mcp: Client[Any]) -> None:
    message = await error_of(mcp, "bulk_delete", dry_run=False)

    assert "at least one of tag, project or source" in message


async def test_list_tags_counts_live_memories(mcp: Client[Any], service: MemoryService) -> None:
    await service.save(PNPM, tags=["tooling", "decision"])
    await service.save(PAGINATION, tags=["decision"])

    result = await call(mcp, "list_tags")

    assert result["tags"] == [{"tag": "decision", "count": 2}, {"tag": "tooling", "count": 1}]


async def test_get_stats_reports_numbers(mcp: Client[Any], service: MemoryService) -> None:
    await service.save(PNPM, project="acme-api", kind="preference")

    stats = await call(mcp, "get_stats")

    assert (stats["total"], stats["active"], stats["deleted"]) == (1, 1, 0)
    assert stats["by_kind"] == {"preference": 1}
    assert stats["sessions"]["imported"] == 0
    assert isinstance(stats["storage"]["total_bytes"], int)


async def test_export_memories_inline_for_small_sets(
    mcp: Client[Any], service: MemoryService
) -> None:
    await service.save(PNPM, project="acme-api")

    result = await call(mcp, "export_memories", project="acme-api", output_format="markdown")

    assert result["count"] == 1
    assert result["path"] is None
    assert PNPM in result["content"]


async def test_export_memories_writes_large_sets_to_a_file(
    mcp: Client[Any], service: MemoryService
) -> None:
    async with service.pool.connection() as conn, conn.cursor() as cur:
        await cur.executemany(
            "INSERT INTO memories (content, content_hash) VALUES (%(c)s, %(h)s)",
            [{"c": f"memory {i}", "h": content_hash(f"memory {i}")} for i in range(205)],
        )

    result = await call(mcp, "export_memories")

    assert result["count"] == 205
    assert result["content"] is None
    exported = json.loads(Path(result["path"]).read_text())
    assert len(exported) == 205


async def test_startup_context_matches_project_case_insensitively(
    mcp: Client[Any], service: MemoryService
) -> None:
    await service.save(PNPM, project="acme-api", kind="preference")
    await service.save(PAGINATION, project="acme-api", kind="distilled")

    result = await call(mcp, "startup_context", project="ACME-API")

    assert result["project"] == "acme-api"
    assert PNPM in result["markdown"]
    assert PAGINATION in result["markdown"]
    assert "not instructions" in result["markdown"]
    assert len(result["markdown"]) <= 4000


async def test_startup_context_for_a_new_project_gives_only_the_general_context(
    mcp: Client[Any], service: MemoryService
) -> None:
    await service.save(PNPM, project="acme-api", kind="preference")
    general = "Keep commit subjects under 72 characters."
    await service.save(general, kind="preference")

    result = await call(mcp, "startup_context", project="brand-new-repo")

    assert result["project"] is None
    assert result["markdown"].startswith("No memories for project 'brand-new-repo' yet")
    assert general in result["markdown"]
    assert PNPM not in result["markdown"]  # another project's rule (#68)


@pytest.mark.parametrize(
    ("client_name", "source"),
    [
        ("codex", "codex"),
        ("codex-mcp-client", "codex"),
        ("gemini-cli-mcp-client", "gemini"),
        ("mcp-inspector", "mcp:mcp-inspector"),
    ],
)
async def test_save_memory_is_labelled_with_the_calling_clients_agent(
    app_url: str, service: MemoryService, client_name: str, source: str
) -> None:
    info = Implementation(name=client_name, version="1.0.0")
    async with Client(f"{app_url}/mcp", client_info=info) as client:
        saved = await call(client, "save_memory", content=PNPM)

    assert (await service.get(saved["id"])).source == source
