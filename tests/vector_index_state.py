"""What the database holds of the HNSW indexes, read on a connection of its own."""

from __future__ import annotations

import psycopg

from server.db.migrate import VECTOR_TABLES
from server.store.embedding_model import HNSW_GRAPH

INDEXES = [index for _, index in VECTOR_TABLES]
CURRENT = sorted(f"{name}={value}" for name, value in HNSW_GRAPH)


def index_options(url: str) -> dict[str, list[str]]:
    """Each vector index that exists, with its storage options (sorted `name=value`)."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT relname, coalesce(reloptions, '{}') FROM pg_class"
            " WHERE relkind = 'i' AND relname = ANY(%s)",
            (INDEXES,),
        ).fetchall()
    return {str(name): sorted(options) for name, options in rows}


def indexes_by_validity(url: str, *, valid: bool) -> set[str]:
    """The vector indexes that are valid (or, with valid=False, left invalid by a failed
    concurrent build)."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
            " WHERE c.relname = ANY(%s) AND i.indisvalid = %s",
            (INDEXES, valid),
        ).fetchall()
    return {str(name) for (name,) in rows}
