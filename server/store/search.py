"""Vector look-ups over the HNSW index (cosine distance, `<=>`)."""

from __future__ import annotations

import numpy as np

from server.models import Neighbour
from server.store.tx import Conn


async def nearest_live(
    conn: Conn, embedding: np.ndarray, *, exclude_id: int | None = None
) -> Neighbour | None:
    """The live memory closest to `embedding` (other than `exclude_id`), for the write guard."""
    cur = await conn.execute(
        "SELECT id, 1 - (embedding <=> %(vec)s) AS similarity, content"
        " FROM memories"
        " WHERE deleted_at IS NULL AND embedding IS NOT NULL"
        " AND (%(exclude)s::bigint IS NULL OR id <> %(exclude)s)"
        " ORDER BY embedding <=> %(vec)s LIMIT 1",
        {"vec": embedding, "exclude": exclude_id},
    )
    row = await cur.fetchone()
    if row is None:
        return None
    return Neighbour(id=row[0], similarity=float(row[1]), content=row[2], deleted=False)
