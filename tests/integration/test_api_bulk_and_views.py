"""REST: bulk create, timeline, preferences, sessions and the OpenAPI document, over real HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime

import httpx
import pytest

from server.service.memory import MemoryService

PNPM = "This repository uses pnpm, never npm; CI rejects a package-lock.json."
CURSOR = "GET /orders uses keyset pagination with an opaque base64url cursor."
RATE = "POST /invoices is rate limited per API key at 30 requests a minute."


@pytest.fixture
async def client(app_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=app_url, timeout=120) as http:
        yield http


async def count_rows(service: MemoryService) -> int:
    async with service.pool.connection() as conn:
        cur = await conn.execute("SELECT count(*) FROM memories")
        row = await cur.fetchone()
        return int(row[0]) if row else 0


# ----- POST /api/memories/bulk ----------------------------------------------------------------


async def test_bulk_create_reports_each_item(
    client: httpx.AsyncClient, service: MemoryService
) -> None:
    known = await service.save(RATE)
    deleted = await service.save("The web UI formats money as de-DE euros, integer cents.")
    await service.soft_delete(deleted.id)

    response = await client.post(
        "/api/memories/bulk",
        json={
            "memories": [
                {"content": PNPM, "tags": ["tooling"], "project": "acme-api"},
                {"content": CURSOR, "kind": "distilled", "created_at": "2026-04-14T09:00:00Z"},
                {"content": PNPM},
                {"content": RATE},
                {"content": "The web UI formats money as de-DE euros, integer cents."},
                {"content": "   "},
                {"content": "ok", "kind": "nonsense"},
            ]
        },
    )

    assert response.status_code == 200
    body = response.json()
    statuses = [item["status"] for item in body["items"]]
    assert statuses == [
        "saved",
        "saved",
        "duplicate",
        "duplicate",
        "restored",
        "invalid",
        "invalid",
    ]
    assert [item["index"] for item in body["items"]] == list(range(7))
    assert (body["saved"], body["skipped"], body["invalid"]) == (3, 2, 2)
    first, second, repeat, known_item = body["items"][:4]
    assert repeat["id"] == first["id"]
    assert known_item["id"] == known.id
    assert "empty" in body["items"][5]["error"]
    assert "kind must be one of" in body["items"][6]["error"]
    stored = await service.get(second["id"])
    assert (stored.kind, stored.created_at.isoformat()) == (
        "distilled",
        "2026-04-14T09:00:00+00:00",
    )
    assert (await service.get(first["id"])).tags == ["tooling"]
    assert (await service.get(deleted.id)).deleted_at is None


async def test_bulk_create_applies_the_near_copy_guard_unless_forced(
    client: httpx.AsyncClient, service: MemoryService
) -> None:
    original = await service.save(PNPM)
    near_copy = PNPM.replace("never npm;", "never npm!")

    guarded = await client.post("/api/memories/bulk", json={"memories": [{"content": near_copy}]})
    forced = await client.post(
        "/api/memories/bulk", json={"memories": [{"content": near_copy}], "force": True}
    )

    [noop] = guarded.json()["items"]
    assert noop["status"] == "noop"
    assert noop["id"] == original.id
    assert noop["similar"]["similarity"] >= 0.92
    [saved] = forced.json()["items"]
    assert saved["status"] == "saved"
    assert saved["id"] != original.id


async def test_bulk_create_redacts_secrets_and_counts_them(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/api/memories/bulk",
        json={"memories": [{"content": "Deploy key is AKIAIOSFODNN7EXAMPLE for the staging box."}]},
    )

    [item] = response.json()["items"]
    assert item["redacted"] == 1
    stored = await client.get(f"/api/memories/{item['id']}")
    assert "AKIAIOSFODNN7EXAMPLE" not in stored.json()["content"]


async def test_bulk_create_of_many_memories_embeds_them_all(
    client: httpx.AsyncClient, service: MemoryService
) -> None:
    drafts = [
        {"content": f"Release note {n}: service {n} moved to region eu-{n}."} for n in range(60)
    ]

    response = await client.post("/api/memories/bulk", json={"memories": drafts, "force": True})

    assert response.json()["saved"] == 60
    async with service.pool.connection() as conn:
        cur = await conn.execute("SELECT count(*) FROM memories WHERE embedding IS NOT NULL")
        row = await cur.fetchone()
    assert row is not None and row[0] == 60


@pytest.mark.parametrize(
    ("body", "status", "fragment"),
    [
        ({}, 400, "memories"),
        ({"memories": "text"}, 422, "memories has the wrong type"),
        ({"memories": ["text"]}, 422, "memories[0] must be a JSON object"),
        ({"memories": [{"content": 5}]}, 422, "memories[0]: content has the wrong type"),
        ({"memories": [{"content": "x", "tags": [1]}]}, 422, "memories[0]: tags must be"),
        ({"memories": [{"content": "x", "created_at": "yesterday-ish"}]}, 400, "memories[0]"),
    ],
)
async def test_bulk_create_rejects_malformed_requests_and_stores_nothing(
    client: httpx.AsyncClient,
    service: MemoryService,
    body: dict[str, object],
    status: int,
    fragment: str,
) -> None:
    response = await client.post("/api/memories/bulk", json=body)

    assert response.status_code == status
    assert fragment in response.json()["error"]["message"]
    assert await count_rows(service) == 0


async def test_bulk_create_refuses_more_than_a_thousand(
    client: httpx.AsyncClient, service: MemoryService
) -> None:
    drafts = [{"content": f"n{n}"} for n in range(1001)]

    response = await client.post("/api/memories/bulk", json={"memories": drafts})

    assert response.status_code == 400
    assert "at most 1000" in response.json()["error"]["message"]
    assert await count_rows(service) == 0


# ----- GET /api/timeline ----------------------------------------------------------------------


async def seed_timeline(service: MemoryService) -> None:
    for content, project, day in [
        (PNPM, "acme-api", "2026-04-14T09:00:00Z"),
        (CURSOR + "\nMore detail on the second line.", "acme-api", "2026-04-14T10:00:00Z"),
        (RATE, "acme-api", "2026-04-21T08:00:00Z"),
        ("Dashboard uses TanStack Query.", "acme.web_ui", "2025-11-06T12:00:00Z"),
    ]:
        created_at = datetime.fromisoformat(day)
        await service.save(content, project=project, created_at=created_at, force=True)


async def test_timeline_gives_points_and_day_counts(
    client: httpx.AsyncClient, service: MemoryService
) -> None:
    await seed_timeline(service)

    body = (await client.get("/api/timeline")).json()

    assert body["total"] == 4
    assert body["truncated"] is False
    assert [p["created_at"][:10] for p in body["points"]] == [
        "2026-04-21",
        "2026-04-14",
        "2026-04-14",
        "2025-11-06",
    ]
    cursor_point = body["points"][1]
    assert cursor_point["title"] == CURSOR
    assert cursor_point["length"] == len(CURSOR + "\nMore detail on the second line.")
    assert body["days"] == [
        {"day": "2025-11-06", "project": "acme.web_ui", "count": 1},
        {"day": "2026-04-14", "project": "acme-api", "count": 2},
        {"day": "2026-04-21", "project": "acme-api", "count": 1},
    ]


async def test_timeline_filters_and_bounds(
    client: httpx.AsyncClient, service: MemoryService
) -> None:
    await seed_timeline(service)

    filtered = (
        await client.get(
            "/api/timeline",
            params={"project": "acme-api", "since": "2026-04-15T00:00:00Z", "limit": 5},
        )
    ).json()
    cut = (await client.get("/api/timeline", params={"limit": 2})).json()

    assert [p["title"] for p in filtered["points"]] == [RATE]
    assert cut["truncated"] is True
    assert len(cut["points"]) == 2
    assert sum(day["count"] for day in cut["days"]) == 4
    assert (await client.get("/api/timeline", params={"limit": 0})).status_code == 400
    assert (await client.get("/api/timeline", params={"limit": "x"})).status_code == 422
    assert (await client.get("/api/timeline", params={"since": "someday"})).status_code == 400


# ----- GET /api/preferences -------------------------------------------------------------------


async def test_preferences_are_grouped_in_tiers_with_evidence(
    client: httpx.AsyncClient, service: MemoryService
) -> None:
    await service.save(PNPM, kind="preference", project="acme-api")
    await service.save("Prefers short answers with the diff first.", kind="preference")
    await service.save(
        "In acme-api the user corrected the assistant: no npm, pnpm only.",
        kind="preference",
        source="signals",
        project="acme-api",
        metadata={"evidence_sessions": ["s1", "s4", "s9"], "signal_key": "k1"},
    )
    await service.save(
        "Most-run commands in acme-api: pnpm test, pnpm lint.",
        kind="pattern",
        source="signals",
        project="acme-api",
    )
    await service.save(
        "Reads failing tests before the code they cover.", kind="behavior", source="behavior"
    )
    await service.save("Dashboard uses TanStack Query.", kind="preference", project="acme.web_ui")
    await service.save(CURSOR, kind="distilled")

    everything = (await client.get("/api/preferences")).json()
    for_api = (await client.get("/api/preferences", params={"project": "acme-api"})).json()

    assert len(everything["explicit"]) == 3
    assert {p["memory"]["kind"] for p in everything["signals"]} == {"preference", "pattern"}
    assert [p["memory"]["kind"] for p in everything["inferred"]] == ["behavior"]
    assert {p["memory"]["content"] for p in for_api["explicit"]} == {
        PNPM,
        "Prefers short answers with the diff first.",
    }
    correction = next(p for p in everything["signals"] if p["memory"]["kind"] == "preference")
    habit = next(p for p in everything["signals"] if p["memory"]["kind"] == "pattern")
    assert correction["evidence_sessions"] == 3
    assert correction["confidence"] > habit["confidence"]
    assert {p["tier"] for p in everything["explicit"]} == {"explicit"}
    assert all(p["confidence"] == 0.9 for p in everything["explicit"])


async def test_a_newer_preference_on_the_same_subject_supersedes_the_older(
    client: httpx.AsyncClient, service: MemoryService
) -> None:
    older = await service.save(
        "Rate limit POST /invoices per client IP address at 30 requests per minute.",
        kind="preference",
        project="acme-api",
        created_at=datetime.fromisoformat("2026-04-20T10:00:00+00:00"),
    )
    newer = await service.save(
        "Rate limit POST /invoices per API key at 30 requests per minute, not per IP.",
        kind="preference",
        project="acme-api",
        created_at=datetime.fromisoformat("2026-04-21T10:00:00+00:00"),
        force=True,
    )

    explicit = (await client.get("/api/preferences", params={"project": "acme-api"})).json()[
        "explicit"
    ]

    assert [p["memory"]["id"] for p in explicit] == [newer.id, older.id]
    assert explicit[0]["superseded_by"] is None
    assert explicit[1]["superseded_by"] == newer.id


async def test_preferences_are_empty_tiers_when_nothing_is_learned(
    client: httpx.AsyncClient,
) -> None:
    body = (await client.get("/api/preferences")).json()

    assert body == {"explicit": [], "signals": [], "inferred": []}


# ----- GET /api/sessions ----------------------------------------------------------------------


async def insert_session(service: MemoryService, session_id: str, project: str, last: str) -> None:
    async with service.pool.connection() as conn:
        await conn.execute(
            "INSERT INTO imported_sessions (session_id, project, project_path, file_path,"
            " message_count, first_message_at, last_message_at)"
            " VALUES (%s, %s, %s, %s, 3, %s, %s)",
            (session_id, project, f"/home/dev/{project}", f"/tmp/{session_id}.jsonl", last, last),
        )


async def test_sessions_lists_import_and_learning_state(
    client: httpx.AsyncClient, service: MemoryService
) -> None:
    await insert_session(service, "3f6c2a1e-8b4d-4c9e-a1f7-2d5e9b0c7a41", "acme-api", "2026-04-14")
    await insert_session(service, "c71e5d08-2a6f-4b1d-9e34-58f0b2c6d917", "acme-api", "2026-04-22")
    await insert_session(
        service, "5e0a9d3c-7f21-4c68-8b0e-e93a6d1f4b72", "acme.web_ui", "2025-11-06"
    )

    body = (await client.get("/api/sessions", params={"limit": 2})).json()
    only_web = (await client.get("/api/sessions", params={"project": "acme.web_ui"})).json()

    assert (body["total"], body["limit"], body["offset"]) == (3, 2, 0)
    assert [s["session_id"][:8] for s in body["sessions"]] == ["c71e5d08", "3f6c2a1e"]
    first = body["sessions"][0]
    assert first["distill_state"] == "pending"
    assert first["message_count"] == 3
    assert first["last_message_at"].startswith("2026-04-22")
    assert [s["project"] for s in only_web["sessions"]] == ["acme.web_ui"]
    assert (await client.get("/api/sessions", params={"limit": 501})).status_code == 400


# ----- GET /api/openapi.json ------------------------------------------------------------------


async def test_openapi_document_lists_every_route(client: httpx.AsyncClient) -> None:
    from server.adapters.rest import routes

    document = (await client.get("/api/openapi.json")).json()

    assert document["openapi"] == "3.1.0"
    documented = {
        (path, method.upper()) for path, item in document["paths"].items() for method in item
    }
    served = {
        (route.path, method)
        for route in routes(service=None)  # type: ignore[arg-type]
        for method in (route.methods or ())  # type: ignore[attr-defined]
        if method != "HEAD"
    }
    assert served <= documented
    assert {("/health", "GET"), ("/cache/invalidate", "POST")} <= documented
