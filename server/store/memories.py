"""SQL for the `memories` table: insert, read, change, delete, list, count and tag.

Optional filters are written in SQL (`%(x)s::text IS NULL OR ...`) so every statement is a
constant string with named parameters; the caller owns the transaction.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from server.core.models.memories import (
    Memory,
    MemoryFilter,
    MemoryPreview,
    NewMemory,
    ProjectSummary,
    TagCount,
)
from server.core.models.vectors import DocumentVectors, TurnPlace
from server.store.anchors import replace_anchors
from server.store.tx import Conn, returned_ids
from server.store.visibility import OWNED_SQL, VISIBLE_SQL, visible

# `superseded_by` is read through memories_supersedes_idx: the newest live memory linking here
# that the reader may see. `owner` is the name of the user who saved it (None: no users then).
COLUMNS = (
    "id, content, content_hash, kind, tags, source, project, project_path, session_id, role,"
    " created_at, updated_at, deleted_at, metadata, supersedes, archived_at, supersede_reason,"
    " (SELECT s.id FROM memories AS s WHERE s.supersedes = memories.id AND s.deleted_at IS NULL"
    f"  AND {visible('s')}"
    "  ORDER BY s.created_at DESC, s.id DESC LIMIT 1) AS superseded_by,"
    " (SELECT u.name FROM users AS u WHERE u.id = memories.owner_id) AS owner, visibility"
)

# The WHERE clause every filtered statement shares; parameters come from `filter_params`.
# A source filter naming an agent also matches what was distilled from its sessions
# (`metadata.agent`, written by distillation), so "from Codex" keeps Codex's facts.
FILTER_SQL = (
    "(%(project)s::text IS NULL OR project = %(project)s OR project_path = %(project)s"
    "  OR (%(with_general)s AND project = ''))"
    " AND (NOT %(general_only)s OR project = '')"
    " AND (%(tag)s::text IS NULL OR tags @> ARRAY[%(tag)s::text])"
    " AND (%(kind)s::text IS NULL OR kind = %(kind)s)"
    " AND (%(source)s::text IS NULL OR source = %(source)s OR metadata->>'agent' = %(source)s)"
    " AND (%(since)s::timestamptz IS NULL OR created_at >= %(since)s)"
    " AND (%(before)s::timestamptz IS NULL OR created_at < %(before)s)"
    " AND (%(include_deleted)s OR %(only_deleted)s OR deleted_at IS NULL)"
    " AND (NOT %(only_deleted)s OR deleted_at IS NOT NULL)"
    " AND (%(include_archived)s OR archived_at IS NULL)"
    " AND (%(session_id)s::text IS NULL OR session_id = %(session_id)s)"
    " AND (%(text)s::text IS NULL OR tsv @@ websearch_to_tsquery('english', %(text)s))"
    f" AND {VISIBLE_SQL}"
    f" AND (NOT %(owned_only)s OR {OWNED_SQL})"
    " AND (NOT %(names_code)s OR NOT anchors_indexed"
    "  OR EXISTS (SELECT 1 FROM memory_anchors AS a WHERE a.memory_id = memories.id))"
)


# The rows an insert by this transaction's user would collide with: the same owner's.
_SAME_OWNER = "coalesce(owner_id, 0) = coalesce(current_viewer(), 0)"

# One row from `_insert_params`; an existing content hash of the same owner inserts nothing.
_INSERT_SQL = (
    "INSERT INTO memories (content, content_hash, kind, tags, source, project, project_path,"
    " session_id, role, embedding, units_indexed, anchors_indexed, created_at, updated_at,"
    " metadata, supersedes, visibility)"
    " VALUES (%(content)s, %(hash)s, %(kind)s, %(tags)s, %(source)s, %(project)s,"
    " %(project_path)s, %(session_id)s, %(role)s, %(embedding)s, %(units_indexed)s, true,"
    " coalesce(%(created_at)s, now()), now(), %(metadata)s, %(supersedes)s,"
    " new_memory_visibility(%(visibility)s, %(project)s))"
    " ON CONFLICT (content_hash, coalesce(owner_id, 0)) DO NOTHING"
)


def filter_params(where: MemoryFilter) -> dict[str, Any]:
    return {
        "project": where.project,
        "with_general": where.with_general,
        "general_only": where.general_only,
        "tag": where.tag,
        "kind": where.kind,
        "source": where.source,
        "since": where.since,
        "before": where.before,
        "include_deleted": where.include_deleted,
        "include_archived": where.include_archived,
        "only_deleted": where.only_deleted,
        "session_id": where.session_id,
        "text": where.text,
        "owned_only": where.owned_only,
        "names_code": where.names_code,
    }


async def insert(conn: Conn, memory: NewMemory, vectors: DocumentVectors) -> Memory | None:
    """Insert a memory with its anchors and passage vectors; None when its content hash
    already exists."""
    async with conn.cursor(row_factory=class_row(Memory)) as cur:
        await cur.execute(
            f"{_INSERT_SQL} RETURNING {COLUMNS}",
            _insert_params(memory, vectors),
        )
        inserted = await cur.fetchone()
    if inserted is not None:
        await replace_anchors(conn, [(inserted.id, inserted.content)])
        if vectors.searched:
            await replace_chunks(conn, inserted.id, vectors)
    return inserted


async def insert_many(
    conn: Conn, memories: Sequence[NewMemory], vectors: Sequence[DocumentVectors]
) -> list[int | None]:
    """Insert a batch in one pipelined round of statements; None where the hash existed."""
    if not memories:
        return []
    ids = await returned_ids(
        conn,
        f"{_INSERT_SQL} RETURNING id",
        [_insert_params(m, v) for m, v in zip(memories, vectors, strict=True)],
    )
    await replace_anchors(
        conn, [(i, m.content) for i, m in zip(ids, memories, strict=True) if i is not None]
    )
    await _store_passages(conn, ids, vectors)
    return ids


def _insert_params(memory: NewMemory, vectors: DocumentVectors) -> dict[str, Any]:
    return {
        "content": memory.content,
        "hash": memory.content_hash,
        "kind": memory.kind,
        "tags": memory.tags,
        "source": memory.source,
        "project": memory.project,
        "project_path": memory.project_path,
        "session_id": memory.session_id,
        "role": memory.role,
        "embedding": vectors.vector,
        "units_indexed": vectors.vector is not None,
        "created_at": memory.created_at,
        "metadata": Jsonb(memory.metadata),
        "supersedes": memory.supersedes,
        "visibility": memory.visibility,
    }


async def _store_passages(
    conn: Conn, ids: Sequence[int | None], documents: Sequence[DocumentVectors]
) -> None:
    """Passage and statement vectors for the memories of a batch that have them (None ids
    were not inserted)."""
    for memory_id, document in zip(ids, documents, strict=True):
        if memory_id is not None and document.searched:
            await replace_chunks(conn, memory_id, document)


async def replace_chunks(conn: Conn, memory_id: int, vectors: DocumentVectors) -> None:
    """Store a memory's passage and statement vectors in place of any it had (a short memory
    stating one thing has none)."""
    await conn.execute("DELETE FROM memory_chunks WHERE memory_id = %(id)s", {"id": memory_id})
    rows = vectors.searched
    if not rows:
        return
    async with conn.cursor() as cur:
        await cur.executemany(
            "INSERT INTO memory_chunks"
            " (memory_id, chunk_index, unit, start_char, end_char, embedding)"
            " VALUES (%(id)s, %(index)s, %(unit)s, %(start)s, %(end)s, %(embedding)s)",
            [
                {
                    "id": memory_id,
                    "index": index,
                    "unit": unit,
                    "start": window.start,
                    "end": window.end,
                    "embedding": vector,
                }
                for index, (unit, window, vector) in enumerate(rows)
            ],
        )


async def lock_near_copy_checks(conn: Conn) -> None:
    """Serialise every store that looks for a near copy before it inserts, until the
    transaction ends.

    A save, a distilled memory and a behaviour observation each look for the closest stored
    memory, then insert. Two of them side by side (two sessions that teach the same thing, an
    agent saving one fact twice at once) would each find nothing close and both insert: a near
    copy stored twice past the write guard, or (same content hash) the second insert dropped
    with the evidence its session brought. Transaction-scoped, so it holds across processes
    and behind a transaction-pooling PgBouncer."""
    await conn.execute("SELECT pg_advisory_xact_lock(hashtext('claude-memory near-copy checks'))")


async def get(conn: Conn, memory_id: int) -> Memory | None:
    async with conn.cursor(row_factory=class_row(Memory)) as cur:
        await cur.execute(
            f"SELECT {COLUMNS} FROM memories WHERE id = %(id)s AND {VISIBLE_SQL}", {"id": memory_id}
        )
        return await cur.fetchone()


async def get_for_update(conn: Conn, memory_id: int) -> Memory | None:
    """Read and lock a row until the transaction ends, so concurrent changes queue up."""
    async with conn.cursor(row_factory=class_row(Memory)) as cur:
        await cur.execute(
            f"SELECT {COLUMNS} FROM memories WHERE id = %(id)s AND {VISIBLE_SQL} FOR UPDATE",
            {"id": memory_id},
        )
        return await cur.fetchone()


async def get_by_hash(conn: Conn, content_hash: str) -> Memory | None:
    async with conn.cursor(row_factory=class_row(Memory)) as cur:
        await cur.execute(
            f"SELECT {COLUMNS} FROM memories WHERE content_hash = %(hash)s AND {_SAME_OWNER}",
            {"hash": content_hash},
        )
        return await cur.fetchone()


async def get_by_hashes(conn: Conn, hashes: Sequence[str]) -> list[Memory]:
    async with conn.cursor(row_factory=class_row(Memory)) as cur:
        await cur.execute(
            f"SELECT {COLUMNS} FROM memories"
            f" WHERE content_hash = ANY(%(hashes)s) AND {_SAME_OWNER}",
            {"hashes": list(hashes)},
        )
        return await cur.fetchall()


async def get_many(conn: Conn, memory_ids: Sequence[int]) -> list[Memory]:
    async with conn.cursor(row_factory=class_row(Memory)) as cur:
        await cur.execute(
            f"SELECT {COLUMNS} FROM memories WHERE id = ANY(%(ids)s) AND {VISIBLE_SQL} ORDER BY id",
            {"ids": list(memory_ids)},
        )
        return await cur.fetchall()


# For each place, the raw turns of its session and subagent just before it, nearest first,
# through the SQL function turns_before (migration 007): the one definition of "before", which
# the trigger giving each turn the words of the turns before it reads too.
_TURNS_BEFORE_SQL = (
    "SELECT place.ord, turn.content"
    " FROM unnest(%(sessions)s::text[], %(agents)s::text[], %(times)s::timestamptz[],"
    " %(ids)s::bigint[]) WITH ORDINALITY AS place(session_id, agent_id, created_at, id, ord)"
    " CROSS JOIN LATERAL turns_before(place.session_id, place.agent_id, place.created_at,"
    " place.id, %(count)s) AS turn"
    " ORDER BY place.ord, turn.created_at DESC, turn.id DESC"
)


async def turns_before(conn: Conn, places: Sequence[TurnPlace], count: int) -> list[list[str]]:
    """The contents of up to `count` turns said just before each place, nearest first."""
    if not places:
        return []
    cur = await conn.execute(
        _TURNS_BEFORE_SQL,
        {
            "sessions": [p.session_id for p in places],
            "agents": [p.agent_id for p in places],
            "times": [p.created_at for p in places],
            "ids": [p.order_id for p in places],
            "count": count,
        },
    )
    found: list[list[str]] = [[] for _ in places]
    for ordinal, content in await cur.fetchall():
        found[int(ordinal) - 1].append(str(content))
    return found


async def update_content(
    conn: Conn, memory_id: int, content: str, content_hash: str, vectors: DocumentVectors
) -> Memory | None:
    async with conn.cursor(row_factory=class_row(Memory)) as cur:
        await cur.execute(
            "UPDATE memories SET content = %(content)s, content_hash = %(hash)s,"
            " embedding = %(embedding)s, units_indexed = %(units_indexed)s, updated_at = now()"
            f" WHERE id = %(id)s AND deleted_at IS NULL AND {OWNED_SQL} RETURNING {COLUMNS}",
            {
                "id": memory_id,
                "content": content,
                "hash": content_hash,
                "embedding": vectors.vector,
                "units_indexed": vectors.vector is not None,
            },
        )
        updated = await cur.fetchone()
    if updated is not None:
        await replace_anchors(conn, [(memory_id, content)])
        await replace_chunks(conn, memory_id, vectors)
    return updated


async def update_fields(
    conn: Conn,
    memory_id: int,
    *,
    tags: list[str] | None,
    project: str | None,
    kind: str | None,
) -> Memory | None:
    """Change the given fields of a live memory; None leaves a field as it is."""
    async with conn.cursor(row_factory=class_row(Memory)) as cur:
        await cur.execute(
            "UPDATE memories SET tags = coalesce(%(tags)s, tags),"
            " project = coalesce(%(project)s, project), kind = coalesce(%(kind)s, kind),"
            " updated_at = now()"
            f" WHERE id = %(id)s AND deleted_at IS NULL AND {OWNED_SQL} RETURNING {COLUMNS}",
            {"id": memory_id, "tags": tags, "project": project, "kind": kind},
        )
        return await cur.fetchone()


async def soft_delete(conn: Conn, memory_id: int) -> bool:
    """Mark a live memory deleted; False if it was missing or already deleted."""
    cur = await conn.execute(
        "UPDATE memories SET deleted_at = now(), updated_at = now()"
        f" WHERE id = %(id)s AND deleted_at IS NULL AND {OWNED_SQL}",
        {"id": memory_id},
    )
    return cur.rowcount == 1


async def restore(conn: Conn, memory_id: int) -> bool:
    """Undo a soft delete; False if the memory was missing or not deleted."""
    cur = await conn.execute(
        "UPDATE memories SET deleted_at = NULL, updated_at = now()"
        f" WHERE id = %(id)s AND deleted_at IS NOT NULL AND {OWNED_SQL}",
        {"id": memory_id},
    )
    return cur.rowcount == 1


async def restore_many(conn: Conn, memory_ids: Sequence[int]) -> list[int]:
    """Undo the soft delete of several memories; returns the ids that really changed."""
    cur = await conn.execute(
        "UPDATE memories SET deleted_at = NULL, updated_at = now()"
        f" WHERE id = ANY(%(ids)s) AND deleted_at IS NOT NULL AND {OWNED_SQL} RETURNING id",
        {"ids": list(memory_ids)},
    )
    return [int(row[0]) for row in await cur.fetchall()]


async def purge(conn: Conn, memory_id: int) -> bool:
    """Delete a soft-deleted row for good; False if it was missing or still live."""
    cur = await conn.execute(
        f"DELETE FROM memories WHERE id = %(id)s AND deleted_at IS NOT NULL AND {OWNED_SQL}",
        {"id": memory_id},
    )
    return cur.rowcount == 1


async def count(conn: Conn, where: MemoryFilter) -> int:
    cur = await conn.execute(
        f"SELECT count(*) FROM memories WHERE {FILTER_SQL}", filter_params(where)
    )
    row = await cur.fetchone()
    return int(row[0]) if row else 0


async def count_all(conn: Conn) -> int:
    """Every row, deleted and archived ones included: what the vector indexes hold."""
    cur = await conn.execute("SELECT count(*) FROM memories")
    row = await cur.fetchone()
    return int(row[0]) if row else 0


async def newest_created_at(conn: Conn, where: MemoryFilter) -> datetime | None:
    """When the newest memory the filter selects was made; None when it selects none."""
    cur = await conn.execute(
        f"SELECT max(created_at) FROM memories WHERE {FILTER_SQL}", filter_params(where)
    )
    row = await cur.fetchone()
    return row[0] if row else None


async def oldest_created_at(conn: Conn, where: MemoryFilter) -> datetime | None:
    """When the oldest memory the filter selects was made; None when it selects none."""
    cur = await conn.execute(
        f"SELECT min(created_at) FROM memories WHERE {FILTER_SQL}", filter_params(where)
    )
    row = await cur.fetchone()
    return row[0] if row else None


async def oldest_turn(conn: Conn, where: MemoryFilter) -> int | None:
    """The id of the oldest conversation turn (a memory of a session) the filter selects."""
    cur = await conn.execute(
        f"SELECT id FROM memories WHERE session_id IS NOT NULL AND {FILTER_SQL}"
        " ORDER BY created_at, id LIMIT 1",
        filter_params(where),
    )
    row = await cur.fetchone()
    return int(row[0]) if row else None


async def list_page(conn: Conn, where: MemoryFilter, limit: int, offset: int) -> list[Memory]:
    """Newest first; id breaks ties so pages never overlap or skip."""
    async with conn.cursor(row_factory=class_row(Memory)) as cur:
        await cur.execute(
            f"SELECT {COLUMNS} FROM memories WHERE {FILTER_SQL}"
            " ORDER BY created_at DESC, id DESC LIMIT %(limit)s OFFSET %(offset)s",
            {**filter_params(where), "limit": limit, "offset": offset},
        )
        return await cur.fetchall()


async def list_after(conn: Conn, where: MemoryFilter, after_id: int, limit: int) -> list[Memory]:
    """Oldest id first, keyset-paged: for exports that walk the whole table."""
    async with conn.cursor(row_factory=class_row(Memory)) as cur:
        await cur.execute(
            f"SELECT {COLUMNS} FROM memories WHERE {FILTER_SQL} AND id > %(after)s"
            " ORDER BY id LIMIT %(limit)s",
            {**filter_params(where), "after": after_id, "limit": limit},
        )
        return await cur.fetchall()


async def preview_matching(conn: Conn, where: MemoryFilter, limit: int) -> list[MemoryPreview]:
    cur = await conn.execute(
        f"SELECT id, content FROM memories WHERE {FILTER_SQL}"
        " ORDER BY created_at DESC, id DESC LIMIT %(limit)s",
        {**filter_params(where), "limit": limit},
    )
    return [MemoryPreview(id=row[0], preview=row[1]) for row in await cur.fetchall()]


async def soft_delete_matching(conn: Conn, where: MemoryFilter) -> int:
    """Soft-delete every live memory the filter matches; returns the rows really changed."""
    live = dataclasses.replace(where, include_deleted=False)
    cur = await conn.execute(
        "UPDATE memories SET deleted_at = now(), updated_at = now()"
        f" WHERE {FILTER_SQL} AND {OWNED_SQL}",
        filter_params(live),
    )
    return cur.rowcount


async def tag_counts(conn: Conn) -> list[TagCount]:
    """Tags of live memories, most used first."""
    async with conn.cursor(row_factory=class_row(TagCount)) as cur:
        await cur.execute(
            "SELECT tag, count(*)::int AS count"
            f" FROM memories, unnest(tags) AS tag WHERE deleted_at IS NULL AND {VISIBLE_SQL}"
            " GROUP BY tag ORDER BY count(*) DESC, tag"
        )
        return await cur.fetchall()


async def set_embeddings(
    conn: Conn, ids: Sequence[int], documents: Sequence[DocumentVectors]
) -> None:
    """Store a batch of re-computed vectors (reembed), passages included."""
    async with conn.cursor() as cur:
        await cur.executemany(
            "UPDATE memories SET embedding = %(embedding)s, units_indexed = true WHERE id = %(id)s",
            [
                {"id": memory_id, "embedding": document.vector}
                for memory_id, document in zip(ids, documents, strict=True)
            ],
        )
    await _store_passages(conn, ids, documents)


async def fill_missing_vectors(
    conn: Conn, memories: Sequence[Memory], documents: Sequence[DocumentVectors]
) -> set[int]:
    """Give memories saved without a vector the one computed for their content; ids filled.

    A row that has a vector meanwhile, or other content (edited since it was read), is left.
    """
    returned = await returned_ids(
        conn,
        "UPDATE memories SET embedding = %(embedding)s, units_indexed = true WHERE id = %(id)s"
        " AND embedding IS NULL AND content_hash = %(hash)s RETURNING id",
        [
            {"id": m.id, "embedding": document.vector, "hash": m.content_hash}
            for m, document in zip(memories, documents, strict=True)
        ],
    )
    filled = {memory_id for memory_id in returned if memory_id is not None}
    await _store_passages(
        conn, [m.id if m.id in filled else None for m in memories], list(documents)
    )
    return filled


async def project_summaries(conn: Conn) -> list[ProjectSummary]:
    """Each project with live memories: its path, count and newest memory time."""
    async with conn.cursor(row_factory=class_row(ProjectSummary)) as cur:
        await cur.execute(
            "SELECT project, project_path, count(*)::int AS count, max(created_at) AS last_at"
            f" FROM memories WHERE deleted_at IS NULL AND {VISIBLE_SQL}"
            " GROUP BY project, project_path ORDER BY max(created_at) DESC"
        )
        return await cur.fetchall()


# The project of a folder and the project a name means, each newest memory first, read through
# the indexes of migration 024 (tests/integration/test_project_lookup.py checks that they are).
PROJECTS_AT_FOLDERS_SQL = (
    "SELECT f.folder, m.project FROM unnest(%(folders)s::text[]) AS f(folder)"
    " CROSS JOIN LATERAL (SELECT project FROM memories"
    "   WHERE lower(rtrim(project_path, '/')) = f.folder AND project_path <> ''"
    f"  AND deleted_at IS NULL AND {VISIBLE_SQL}"
    "   ORDER BY created_at DESC LIMIT 1) AS m"
)
PROJECT_NAMED_SQL = (
    "SELECT project FROM ("
    "  (SELECT project, created_at FROM memories WHERE lower(project) = %(name)s"
    f"   AND deleted_at IS NULL AND {VISIBLE_SQL} ORDER BY created_at DESC LIMIT 1)"
    "  UNION ALL"
    "  (SELECT project, created_at FROM memories"
    "   WHERE lower(rtrim(project_path, '/')) = %(folder)s AND project_path <> ''"
    f"   AND deleted_at IS NULL AND {VISIBLE_SQL} ORDER BY created_at DESC LIMIT 1)"
    ") AS found ORDER BY created_at DESC LIMIT 1"
)


async def projects_at_folders(conn: Conn, folders: Sequence[str]) -> dict[str, str]:
    """For each of `folders` (lower case, no trailing '/') that is a live memory's project
    folder, the project most recently written there: one index read per folder."""
    folders = [folder for folder in folders if "\x00" not in folder]  # none can be stored
    if not folders:
        return {}
    cur = await conn.execute(PROJECTS_AT_FOLDERS_SQL, {"folders": folders})
    return {folder: project for folder, project in await cur.fetchall()}


async def project_named(conn: Conn, folded: str) -> str | None:
    """The project whose name or folder is `folded` (lower case), the one written most
    recently when the name and the folder match two: one index read each."""
    if "\x00" in folded:  # Postgres text cannot hold it, so no project is named so
        return None
    cur = await conn.execute(
        PROJECT_NAMED_SQL, {"name": folded, "folder": folded.rstrip("/") or None}
    )
    row = await cur.fetchone()
    return str(row[0]) if row else None


async def learned_preferences(
    conn: Conn, project: str | None, limit: int, *, general_only: bool = False
) -> list[Memory]:
    """Live preference, pattern and behavior memories, newest first: a project's own plus the
    general ones (stored without a project); every project's when `project` is None, the
    general ones alone when `general_only`."""
    async with conn.cursor(row_factory=class_row(Memory)) as cur:
        await cur.execute(
            f"SELECT {COLUMNS} FROM memories"
            " WHERE kind IN ('preference', 'pattern', 'behavior') AND deleted_at IS NULL"
            f" AND {VISIBLE_SQL}"
            " AND (%(project)s::text IS NULL OR project IN ('', %(project)s)"
            "      OR project_path = %(project)s)"
            " AND (NOT %(general_only)s OR project = '')"
            " ORDER BY created_at DESC, id DESC LIMIT %(limit)s",
            {"project": project, "limit": limit, "general_only": general_only},
        )
        return await cur.fetchall()


async def existing_record_uuids(conn: Conn, uuids: Sequence[str]) -> set[str]:
    """Which transcript record uuids are already stored as raw turns of the transaction's user
    (ownerless ones with none): another user's import of the same file holds back none."""
    if not uuids:
        return set()
    cur = await conn.execute(
        "SELECT metadata->>'record_uuid' FROM memories"
        " WHERE metadata ? 'record_uuid' AND metadata->>'record_uuid' = ANY(%(uuids)s)"
        f" AND {_SAME_OWNER}",
        {"uuids": list(uuids)},
    )
    return {row[0] for row in await cur.fetchall()}
