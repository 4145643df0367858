"""Batch saves: many drafts, one embedding pass, few statements.

A mixin of MemoryService (server/service/memory.py). `save_many` applies the same write guard as
`save` — exact copies are duplicates (or restored when soft-deleted), near copies are noops
unless forced — for the whole batch with a fixed number of statements, whatever its size.
`import_files` is the importers' path: exact copies only (a raw turn is never dropped for
resembling another, and a memory the user deleted is not brought back by a re-import), one
embedding pass across files, and one transaction per file with its progress.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, replace

from server.core.config import Settings
from server.core.errors import InvalidInput, Unavailable
from server.core.models.memories import (
    BulkItemOutcome,
    BulkSaveResult,
    BulkStatus,
    Memory,
    MemoryDraft,
    NewMemory,
    SimilarMemory,
    similar_memory,
)
from server.core.models.output import preview
from server.core.models.sessions import FileImport, FileImportOutcome, ImportState
from server.core.redact import redact
from server.core.validation import prepare_draft
from server.domain.supersession_rules import redundant_near_copy
from server.service.bulk_indexes import vector_indexes_after
from server.service.embeddings import Embedder
from server.service.journal import redacted_call, redacted_prompt
from server.service.supersessions import link_new_memories
from server.service.turn_context import embed_in_context, place_of_new
from server.store import journal as journal_store
from server.store import memories as memory_store
from server.store import search as search_store
from server.store import sessions as session_store
from server.store.tx import Conn, Pool, transaction

logger = logging.getLogger(__name__)

MAX_BULK_ITEMS = 1_000


@dataclass(frozen=True, slots=True)
class _Candidate:
    """A valid draft that no stored row or earlier draft already holds."""

    index: int
    memory: NewMemory
    redacted: int


class BulkWrites:
    """`save_many`, for MemoryService; needs its pool, embedder and settings."""

    pool: Pool
    embedder: Embedder
    settings: Settings

    async def save_many(
        self, drafts: Sequence[MemoryDraft], *, force: bool = False
    ) -> BulkSaveResult:
        """Store up to 1,000 drafts atomically and say what happened to each.

        An invalid draft is reported (`invalid`, with the reason) and does not stop the
        others. A draft repeating an earlier one in the same batch is a `duplicate` of it.
        Near-copies are judged against what was stored before the batch, not against each
        other: two new, nearly identical drafts are both saved.
        """
        if len(drafts) > MAX_BULK_ITEMS:
            raise InvalidInput(f"at most {MAX_BULK_ITEMS} memories per batch, got {len(drafts)}")
        outcomes: dict[int, BulkItemOutcome] = {}
        candidates: list[_Candidate] = []
        repeats: dict[int, int] = {}  # draft index -> index of the first draft with its content
        first_with_hash: dict[str, int] = {}
        for index, draft in enumerate(drafts):
            try:
                memory, redacted = prepare_draft(draft, self.settings.max_content_chars)
            except InvalidInput as exc:
                outcomes[index] = BulkItemOutcome(index, "invalid", None, None, 0, str(exc))
                continue
            if memory.content_hash in first_with_hash:
                repeats[index] = first_with_hash[memory.content_hash]
                continue
            first_with_hash[memory.content_hash] = index
            candidates.append(_Candidate(index, memory, redacted))

        async with transaction(self.pool) as conn:
            stored = await memory_store.get_by_hashes(conn, list(first_with_hash))
        stored_by_hash = {memory.content_hash: memory for memory in stored}
        fresh = [c for c in candidates if c.memory.content_hash not in stored_by_hash]
        vectors = await embed_in_context(
            self.pool,
            self.embedder,
            [c.memory.content for c in fresh],
            [place_of_new(c.memory) for c in fresh],
            wait_if_down=True,
        )

        async with transaction(self.pool) as conn:
            to_restore = [m.id for m in stored if m.deleted_at is not None]
            restored = set(await memory_store.restore_many(conn, to_restore))
            for candidate in candidates:
                existing = stored_by_hash.get(candidate.memory.content_hash)
                if existing is not None:
                    status: BulkStatus = "restored" if existing.id in restored else "duplicate"
                    outcomes[candidate.index] = BulkItemOutcome(
                        candidate.index,
                        status,
                        existing.id,
                        similar_memory(existing, 1.0),
                        candidate.redacted,
                        None,
                    )
            inserting = list(zip(fresh, vectors, strict=True))
            if not force and inserting:
                nearest = await search_store.nearest_live_many(
                    conn, [vector.vector for _, vector in inserting]
                )
                close = {
                    c.index: hit
                    for (c, _), hit in zip(inserting, nearest, strict=True)
                    if hit is not None and hit[1] >= self.settings.guard_noop_threshold
                }
                targets = await _by_id(conn, [hit[0] for hit in close.values()])
                for candidate, _ in inserting:
                    hit = close.get(candidate.index)
                    if (
                        hit is not None
                        and hit[0] in targets
                        and redundant_near_copy(
                            candidate.memory.content,
                            targets[hit[0]].content,
                            hit[1],
                            self.settings.guard_noop_threshold,
                        )
                    ):
                        outcomes[candidate.index] = BulkItemOutcome(
                            candidate.index,
                            "noop",
                            hit[0],
                            similar_memory(targets[hit[0]], hit[1]),
                            candidate.redacted,
                            None,
                        )
                inserting = [(c, v) for c, v in inserting if c.index not in outcomes]
            ids = await memory_store.insert_many(
                conn, [c.memory for c, _ in inserting], [v for _, v in inserting]
            )
            await link_new_memories(conn, [new_id for new_id in ids if new_id is not None])
            raced = [c for (c, _), new_id in zip(inserting, ids, strict=True) if new_id is None]
            # Rows another writer stored with the same content while this batch was embedding.
            winners = {
                m.content_hash: m
                for m in await memory_store.get_by_hashes(
                    conn, [c.memory.content_hash for c in raced]
                )
            }
            for (candidate, _), new_id in zip(inserting, ids, strict=True):
                if new_id is not None:
                    outcomes[candidate.index] = BulkItemOutcome(
                        candidate.index, "saved", new_id, None, candidate.redacted, None
                    )
                else:
                    winner = winners[candidate.memory.content_hash]
                    outcomes[candidate.index] = BulkItemOutcome(
                        candidate.index,
                        "duplicate",
                        winner.id,
                        similar_memory(winner, 1.0),
                        candidate.redacted,
                        None,
                    )

        content_of = {c.index: c.memory.content for c in candidates}
        for index, first in repeats.items():
            original = outcomes[first]
            assert original.id is not None  # valid drafts always end with a stored id
            outcomes[index] = BulkItemOutcome(
                index,
                "noop" if original.status == "noop" else "duplicate",
                original.id,
                original.similar or SimilarMemory(original.id, 1.0, preview(content_of[first])),
                original.redacted,
                None,
            )
        items = [outcomes[index] for index in range(len(drafts))]
        saved = sum(1 for item in items if item.status in ("saved", "restored"))
        invalid = sum(1 for item in items if item.status == "invalid")
        logger.info("batch of %d: %d saved or restored, %d invalid", len(drafts), saved, invalid)
        return BulkSaveResult(
            saved=saved, skipped=len(items) - saved - invalid, invalid=invalid, items=items
        )

    async def import_state(self) -> ImportState:
        """Where every transcript file was left, and the project names already given."""
        async with transaction(self.pool) as conn:
            offsets = await session_store.file_offsets(conn)
            names = await session_store.known_project_names(conn)
        return ImportState(offsets=offsets, project_names=names)

    async def stored_record_uuids(self, uuids: Sequence[str]) -> set[str]:
        """Which transcript records are already stored (for dry runs)."""
        async with transaction(self.pool) as conn:
            return await memory_store.existing_record_uuids(conn, uuids)

    def vector_indexes_after(self, expected: int) -> AbstractAsyncContextManager[bool]:
        """For an import of about `expected` memories: the block runs without the vector
        indexes and builds them once, after, when that is cheaper (server/service/
        bulk_indexes.py); the context's value says whether it does."""
        return vector_indexes_after(self.pool, expected)

    async def import_files(self, imports: Sequence[FileImport]) -> list[FileImportOutcome]:
        """Store each file's new turns, events and read position, one transaction per file.

        Drafts already stored (same record uuid, or same content, live or deleted) and repeats
        within the batch are counted as duplicates and not embedded. A file whose transaction
        fails is reported in its outcome's `errors` and leaves nothing behind; the others go on.
        """
        prepared: list[list[_Candidate]] = []
        invalid: list[list[str]] = []
        for item in imports:
            candidates, problems = [], []
            for index, draft in enumerate(item.drafts):
                try:
                    memory, redacted = prepare_draft(draft, self.settings.max_content_chars)
                except InvalidInput as exc:
                    problems.append(f"turn {index}: {exc.message}")
                    continue
                candidates.append(_Candidate(index, memory, redacted))
            prepared.append(candidates)
            invalid.append(problems)

        everything = [c for candidates in prepared for c in candidates]
        async with transaction(self.pool) as conn:
            stored_hashes = {
                m.content_hash
                for m in await memory_store.get_by_hashes(
                    conn, [c.memory.content_hash for c in everything]
                )
            }
            stored_uuids = await memory_store.existing_record_uuids(
                conn, [u for c in everything if (u := c.memory.metadata.get("record_uuid"))]
            )
        seen = set(stored_hashes)
        fresh: list[list[_Candidate]] = []
        for candidates in prepared:
            keep = []
            for candidate in candidates:
                uuid = candidate.memory.metadata.get("record_uuid")
                if candidate.memory.content_hash in seen or uuid in stored_uuids:
                    continue
                seen.add(candidate.memory.content_hash)
                keep.append(candidate)
            fresh.append(keep)
        kept = [c.memory for keep in fresh for c in keep]
        vectors = iter(
            await embed_in_context(
                self.pool,
                self.embedder,
                [memory.content for memory in kept],
                [place_of_new(memory) for memory in kept],
                wait_if_down=True,
            )
        )

        outcomes: list[FileImportOutcome] = []
        for item, candidates, keep, problems in zip(imports, prepared, fresh, invalid, strict=True):
            file_vectors = [next(vectors) for _ in keep]
            try:
                async with transaction(self.pool) as conn:
                    ids = await memory_store.insert_many(
                        conn, [c.memory for c in keep], file_vectors
                    )
                    await link_new_memories(conn, [i for i in ids if i is not None])
                    saved = sum(1 for new_id in ids if new_id is not None)
                    await journal_store.insert_calls(
                        conn, [redacted_call(event) for event in item.events]
                    )
                    await journal_store.record_results(conn, item.results)
                    await journal_store.insert_prompts(
                        conn, [redacted_prompt(prompt) for prompt in item.prompts]
                    )
                    if item.progress is not None:
                        progress = item.progress
                        if progress.title:
                            progress = replace(progress, title=redact(progress.title).text)
                        await session_store.record_progress(conn, progress, saved, len(item.events))
            except Unavailable:
                raise
            except Exception as exc:  # one bad file must not stop the others
                logger.exception("import of %s failed", _label(item))
                outcomes.append(
                    FileImportOutcome(0, 0, len(problems), 0, [*problems, f"{_label(item)}: {exc}"])
                )
                continue
            outcomes.append(
                FileImportOutcome(
                    saved=saved,
                    duplicates=len(candidates) - saved,
                    invalid=len(problems),
                    redacted=sum(c.redacted for c in candidates),
                    errors=problems,
                )
            )
        return outcomes


def _label(item: FileImport) -> str:
    if item.progress is None:
        return "import batch"
    return item.progress.file_path or f"session {item.progress.session_id}"


async def _by_id(conn: Conn, ids: Sequence[int]) -> dict[int, Memory]:
    return {memory.id: memory for memory in await memory_store.get_many(conn, ids)}
