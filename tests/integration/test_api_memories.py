"""REST endpoints for memories, stats, projects, tags, recall and export, over real HTTP."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx
import pytest

from server.service.memory import MemoryService

PNPM = "This repository uses pnpm, never npm; CI rejects a package-lock.json."
PAGINATION = "GET /orders uses keyset pagination with an opaque base64url cursor."


@pytest.fixture
async def client(app_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=app_url, timeout=60) as http:
        yield http


async def live_count(service: MemoryService) -> int:
    async with service.pool.connection() as conn:
        cur = await conn.execute("SELECT count(*) FROM memories WHERE deleted_at IS NULL")
        row = await cur.fetchone()
        return int(row[0]) if row else 0


async def test_create_returns_201_with_the_memory(
    client: httpx.AsyncClient, service: MemoryService
) -> None:
    response = await client.post(
        "/api/memories",
        json={
            "content": PNPM,
            "tags": ["tooling"],
            "project": "acme-api",
            "kind": "preference",
            "created_at": "2026-04-14T09:00:00Z",
            "metadata": {"session": "3f6c2a1e"},
        },
    )

    assert response.status_code == 201
    body = response.json()
    assert (body["content"], body["kind"], body["tags"]) == (PNPM, "preference", ["tooling"])
    assert body["created_at"] == "2026-04-14T09:00:00+00:00"
    stored = await service.get(body["id"])
    assert stored.metadata == {"session": "3f6c2a1e"}


async def test_create_of_known_content_is_200_duplicate(
    client: httpx.AsyncClient, service: MemoryService
) -> None:
    saved = await service.save(PNPM)

    response = await client.post("/api/memories", json={"content": PNPM})

    assert response.status_code == 200
    assert response.json()["status"] == "duplicate"
    assert response.json()["similar"]["id"] == saved.id
    assert await live_count(service) == 1


@pytest.mark.parametrize(
    ("payload", "status", "code"),
    [
        ({"content": ""}, 400, "invalid_input"),
        ({"content": "x" * 100_001}, 400, "invalid_input"),
        ({"content": "fine", "kind": "gossip"}, 400, "invalid_input"),
        ({"content": "fine", "created_at": "yesterday-ish"}, 400, "invalid_input"),
        ({"content": 42}, 422, "unprocessable"),
        ({"content": "fine", "tags": "a,b"}, 422, "unprocessable"),
        ({"content": "fine", "tags": [1, 2]}, 422, "unprocessable"),
        ({"content": "fine", "metadata": [1]}, 422, "unprocessable"),
    ],
    ids=["empty", "huge", "kind", "date", "type", "tags-str", "tags-int", "metadata"],
)
async def test_create_rejects_bad_input_and_writes_nothing(
    client: httpx.AsyncClient, service: MemoryService, payload: object, status: int, code: str
) -> None:
    response = await client.post("/api/memories", json=payload)

    assert response.status_code == status
    assert response.json()["error"]["code"] == code
    assert await live_count(service) == 0


async def test_body_over_2mb_is_413(client: httpx.AsyncClient, service: MemoryService) -> None:
    response = await client.post("/api/memories", json={"content": "x" * (2 * 1024 * 1024)})

    assert response.status_code == 413
    assert response.json()["error"]["code"] == "too_large"
    assert await live_count(service) == 0


async def test_chunked_body_over_2mb_is_413(client: httpx.AsyncClient) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(3):
            yield b"x" * (1024 * 1024)

    response = await client.post("/api/memories", content=chunks())

    assert response.status_code == 413


async def test_get_memory_and_404_for_unknown_and_422_for_non_numeric_id(
    client: httpx.AsyncClient, service: MemoryService
) -> None:
    saved = await service.save(PNPM)

    found = await client.get(f"/api/memories/{saved.id}")
    missing = await client.get("/api/memories/99999")
    garbage = await client.get("/api/memories/abc")

    assert found.json()["content"] == PNPM
    assert missing.status_code == 404
    assert missing.json() == {"error": {"code": "not_found", "message": "no memory with id 99999"}}
    assert garbage.status_code == 422


async def test_list_pages_filters_and_keyword_q(
    client: httpx.AsyncClient, service: MemoryService
) -> None:
    await service.save(PNPM, project="acme-api", tags=["tooling"])
    await service.save(PAGINATION, project="acme-api", tags=["api"])
    await service.save("Money is stored as integer cents.", project="acme-web")

    page = await client.get("/api/memories", params={"project": "acme-api", "limit": 1})
    keyword = await client.get("/api/memories", params={"q": "keyset cursor", "unknown": "x"})
    too_big = await client.get("/api/memories", params={"limit": 501})
    wrong_type = await client.get("/api/memories", params={"limit": "many"})

    assert (page.json()["total"], page.json()["limit"], len(page.json()["memories"])) == (2, 1, 1)
    assert [m["content"] for m in keyword.json()["memories"]] == [PAGINATION]
    assert too_big.status_code == 400
    assert wrong_type.status_code == 422


async def test_patch_changes_content_tags_project_and_kind(
    client: httpx.AsyncClient, service: MemoryService
) -> None:
    saved = await service.save(PNPM)

    response = await client.patch(
        f"/api/memories/{saved.id}",
        json={"content": PAGINATION, "tags": ["api"], "project": "acme-api", "kind": "note"},
    )

    assert response.status_code == 200
    assert response.json()["status"] == "updated"
    stored = await service.get(saved.id)
    assert (stored.content, stored.tags, stored.project, stored.kind) == (
        PAGINATION,
        ["api"],
        "acme-api",
        "note",
    )


async def test_delete_restore_and_purge_with_status_codes(
    client: httpx.AsyncClient, service: MemoryService
) -> None:
    saved = await service.save(PNPM)

    early_purge = await client.delete(f"/api/memories/{saved.id}", params={"purge": "true"})
    deleted = await client.delete(f"/api/memories/{saved.id}")
    again = await client.delete(f"/api/memories/{saved.id}")
    restored = await client.post(f"/api/memories/{saved.id}/restore")
    await client.delete(f"/api/memories/{saved.id}")
    purged = await client.delete(f"/api/memories/{saved.id}", params={"purge": "true"})

    assert early_purge.status_code == 409
    assert deleted.json()["deleted_at"] is not None
    assert again.status_code == 409
    assert restored.json()["deleted_at"] is None
    assert purged.json() == {"purged_id": saved.id}
    assert (await client.get(f"/api/memories/{saved.id}")).status_code == 404


async def test_related_lists_neighbours(client: httpx.AsyncClient, service: MemoryService) -> None:
    source = await service.save("Invoices are numbered per customer, starting at 1.")
    twin = await service.save("Invoice numbers restart at 1 for every customer.")
    await service.save("The office plants need water on Mondays.")

    response = await client.get(f"/api/memories/{source.id}/related", params={"limit": 1})

    assert [r["id"] for r in response.json()] == [twin.id]
    assert isinstance(response.json()[0]["similarity"], float)


async def test_bulk_delete_defaults_to_dry_run(
    client: httpx.AsyncClient, service: MemoryService
) -> None:
    await service.save(PNPM, project="acme-api")
    await service.save(PAGINATION, project="acme-api")

    dry = await client.delete("/api/memories", params={"project": "acme-api"})
    live_after_dry = await live_count(service)
    real = await client.delete("/api/memories", params={"project": "acme-api", "dry_run": "false"})
    unfiltered = await client.delete("/api/memories", params={"dry_run": "false"})

    assert (dry.json()["dry_run"], dry.json()["matched"], dry.json()["deleted"]) == (True, 2, 0)
    assert live_after_dry == 2
    assert (real.json()["matched"], real.json()["deleted"]) == (2, 2)
    assert await live_count(service) == 0
    assert unfiltered.status_code == 400


async def test_stats_projects_and_tags(client: httpx.AsyncClient, service: MemoryService) -> None:
    await service.save(PNPM, project="acme-api", tags=["tooling"], source="cli")
    await service.save(PAGINATION, project="acme-web", tags=["api", "tooling"])

    stats = (await client.get("/api/stats")).json()
    projects = (await client.get("/api/projects")).json()
    tags = (await client.get("/api/tags")).json()

    assert stats["active"] == 2
    assert stats["by_source"] == {"cli": 1, "": 1}
    assert stats["storage"]["total_bytes"] > 0
    assert {p["project"] for p in projects} == {"acme-api", "acme-web"}
    assert all(isinstance(p["count"], int) for p in projects)
    assert tags == [{"tag": "tooling", "count": 2}, {"tag": "api", "count": 1}]


async def test_recall_is_semantic_search_with_threshold(
    client: httpx.AsyncClient, service: MemoryService
) -> None:
    saved = await service.save(PNPM)
    await service.save("The office plants need water on Mondays.")

    response = await client.post(
        "/api/recall", json={"query": "which package manager?", "threshold": 0.2, "limit": 5}
    )

    assert response.status_code == 200
    assert response.json()["hits"][0]["id"] == saved.id
    assert all(r["similarity"] >= 0.2 for r in response.json()["hits"])


@pytest.mark.parametrize("output_format", ["json", "jsonl", "markdown"])
async def test_export_streams_a_download(
    client: httpx.AsyncClient, service: MemoryService, output_format: str
) -> None:
    await service.save(PNPM, project="acme-api")
    await service.save(PAGINATION, project="acme-web")

    response = await client.get(
        "/api/export", params={"format": output_format, "project": "acme-api"}
    )

    assert response.status_code == 200
    assert "attachment" in response.headers["content-disposition"]
    assert PNPM in response.text
    assert PAGINATION not in response.text
    if output_format == "json":
        assert [m["content"] for m in json.loads(response.text)] == [PNPM]


async def test_export_rejects_unknown_format(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/export", params={"format": "xml"})

    assert response.status_code == 400
