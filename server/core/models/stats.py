"""What `stats` reports: counts, storage sizes, sessions and the read cache."""

from __future__ import annotations

from dataclasses import dataclass

from server.core.models.receipts import ReceiptTotals


@dataclass(frozen=True, slots=True)
class StorageSizes:
    """On-disk sizes in bytes, as Postgres reports them."""

    table_bytes: int
    index_bytes: int
    vector_bytes: int
    total_bytes: int


@dataclass(frozen=True, slots=True)
class SessionCounts:
    imported: int
    distilled: int
    failed: int
    pending: int


@dataclass(frozen=True, slots=True)
class CacheStats:
    size: int
    max_size: int
    ttl_seconds: float
    hits: int
    misses: int


@dataclass(frozen=True, slots=True)
class Stats:
    """Counts of live memories by project, source and kind, plus deleted rows and sizes."""

    total: int
    active: int
    deleted: int
    by_project: dict[str, int]
    by_source: dict[str, int]
    by_kind: dict[str, int]
    storage: StorageSizes
    sessions: SessionCounts
    cache: CacheStats
    embedding_model: str
    embedding_dimension: int
    embedding_provider: str
    vectors_waiting: int  # saved while the embedder was down; embedded when it answers
    context: ReceiptTotals  # what the hooks injected for the caller, receipts kept (#38)
