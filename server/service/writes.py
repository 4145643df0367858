"""One memory at a time: save (with the write guard), learn, check, get, update, delete,
restore, purge.

A mixin of MemoryService (server/service/memory.py), beside BulkWrites for batches. Saves and
content updates pass the write guard: an exact copy is a duplicate (or restored when soft-deleted),
a near copy of a live memory is a noop unless forced, or unless it changes the near copy's fact
("Node 22" after "Node 20"): then it is saved and supersedes it (server/service/supersessions.py).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from server.core.access import check_owner
from server.core.config import Settings
from server.core.errors import Conflict, InvalidInput, NotFound
from server.core.models.memories import (
    BulkDeleteResult,
    CheckResult,
    Memory,
    MemoryDraft,
    MemoryFilter,
    SaveOutcome,
    SimilarMemory,
    UpdateOutcome,
    similar_memory,
)
from server.core.models.output import preview
from server.core.models.vectors import DocumentVectors
from server.core.validation import (
    PreparedContent,
    blank_to_none,
    check_id,
    check_kind,
    clean_tags,
    prepare_content,
    prepare_draft,
    redacted_field,
)
from server.domain.supersession_rules import redundant_near_copy
from server.domain.trajectories import (
    TRAJECTORY_KIND,
    Trajectory,
    trajectory_content,
    trajectory_metadata,
)
from server.domain.trajectories import checked as checked_trajectory
from server.service.embeddings import Embedder
from server.service.projects import ProjectRule
from server.service.supersessions import link_new_memories, restore_links, set_link
from server.service.turn_context import embed_in_context, place_of_new, turn_place
from server.store import learning as learning_store
from server.store import memories as memory_store
from server.store import search as search_store
from server.store import supersessions as links_store
from server.store.tx import Pool, transaction

logger = logging.getLogger(__name__)

BULK_PREVIEW_ROWS = 10


class Writes(ProjectRule):
    """Single-memory writes, for MemoryService; needs its pool, embedder and settings."""

    pool: Pool
    embedder: Embedder
    settings: Settings

    async def save(
        self,
        content: str,
        *,
        tags: Sequence[str] = (),
        source: str = "",
        project: str = "",
        project_path: str = "",
        kind: str = "manual",
        session_id: str | None = None,
        role: str | None = None,
        created_at: datetime | None = None,
        metadata: dict[str, Any] | None = None,
        force: bool = False,
        visibility: str | None = None,
        supersedes: int | None = None,
        server_metadata: dict[str, Any] | None = None,
    ) -> SaveOutcome:
        """Store a memory unless it is already there.

        An exact copy (same content after redaction) is reported as `duplicate`, or restored
        and reported as `restored` if it had been soft-deleted. A near copy (cosine similarity at or
        above CLAUDE_MEMORY_GUARD_NOOP_THRESHOLD) is a `noop` unless `force` is set. `supersedes`
        links the new memory to the older one whose fact it replaces, in the same transaction.
        `server_metadata` is for the server's own callers: keys of SERVER_METADATA_KEYS in
        `metadata` are dropped (server/core/validation.py).
        """
        if supersedes is not None:
            check_id(supersedes)
        new, redacted = prepare_draft(
            MemoryDraft(
                content=content,
                tags=list(tags),
                source=source,
                project=project,
                project_path=project_path,
                kind=kind,
                session_id=session_id,
                role=role,
                created_at=created_at,
                metadata=metadata or {},
                visibility=visibility,
                server_metadata=server_metadata or {},
            ),
            self.settings.max_content_chars,
        )
        async with transaction(self.pool) as conn:
            existing = await memory_store.get_by_hash(conn, new.content_hash)
        if existing is not None:
            return await self._exact_match(existing, redacted)

        [vectors] = await embed_in_context(
            self.pool, self.embedder, [new.content], [place_of_new(new)], wait_if_down=True
        )
        async with transaction(self.pool) as conn:
            if not force:
                # Two near copies saved at once would each find nothing close and both insert.
                await memory_store.lock_near_copy_checks(conn)
                nearest = await search_store.nearest_live(conn, vectors.vector)
                if nearest is not None and redundant_near_copy(
                    new.content,
                    nearest.content,
                    nearest.similarity,
                    self.settings.guard_noop_threshold,
                ):
                    target = await memory_store.get(conn, nearest.id)
                    if target is not None:
                        return SaveOutcome(
                            status="noop",
                            id=target.id,
                            memory=target,
                            similar=similar_memory(target, nearest.similarity),
                            redacted=redacted,
                        )
            inserted = await memory_store.insert(conn, new, vectors)
            if inserted is not None and supersedes is not None:
                await set_link(conn, inserted.id, supersedes)
                inserted = await memory_store.get(conn, inserted.id) or inserted
            elif inserted is not None and await link_new_memories(conn, [inserted.id]):
                inserted = await memory_store.get(conn, inserted.id) or inserted
        if inserted is None:
            # Another writer stored the same content between our check and our insert.
            async with transaction(self.pool) as conn:
                existing = await memory_store.get_by_hash(conn, new.content_hash)
            if existing is None:
                raise Conflict("the memory changed while it was being saved; try again")
            return await self._exact_match(existing, redacted)
        logger.info("saved memory %d (kind %s, %d redactions)", inserted.id, new.kind, redacted)
        return SaveOutcome(
            status="saved",
            id=inserted.id,
            memory=inserted,
            similar=None,
            redacted=redacted,
        )

    async def learn(
        self, trajectory: Trajectory, *, source: str = "", session_id: str | None = None
    ) -> SaveOutcome:
        """Store a trajectory (task, what worked, what to avoid) as a memory of its own kind.

        It goes through `save`, so it is redacted and deduplicated like any memory, and it
        supersedes only an earlier trajectory of the project (server/store/supersessions.py).
        """
        checked = checked_trajectory(trajectory)
        return await self.save(
            trajectory_content(checked),
            tags=checked.tags,
            source=source,
            project=checked.project,
            kind=TRAJECTORY_KIND,
            session_id=session_id,
            metadata=trajectory_metadata(checked),
        )

    async def _exact_match(self, existing: Memory, redacted: int) -> SaveOutcome:
        if existing.deleted_at is None:
            return SaveOutcome(
                status="duplicate",
                id=existing.id,
                memory=existing,
                similar=similar_memory(existing, 1.0),
                redacted=redacted,
            )
        async with transaction(self.pool) as conn:
            await memory_store.restore(conn, existing.id)
            restored = await memory_store.get(conn, existing.id)
        if restored is None:
            raise NotFound(f"memory {existing.id} was purged while it was being restored")
        logger.info("restored memory %d on an exact re-save", existing.id)
        return SaveOutcome(
            status="restored",
            id=restored.id,
            memory=restored,
            similar=similar_memory(restored, 1.0),
            redacted=redacted,
        )

    async def check(self, content: str) -> CheckResult:
        """What `save` would do with `content`: ADD, UPDATE (a close match) or NOOP."""
        prepared = prepare_content(content, self.settings.max_content_chars)
        async with transaction(self.pool) as conn:
            existing = await memory_store.get_by_hash(conn, prepared.content_hash)
        if existing is not None:
            reason = (
                f"identical to memory {existing.id}"
                if existing.deleted_at is None
                else f"identical to deleted memory {existing.id}; saving it would restore it"
            )
            return CheckResult(
                action="NOOP",
                similarity=1.0,
                target_id=existing.id,
                target_preview=preview(existing.content),
                reason=reason,
            )
        # Only the memory's own vector is compared: no statement vectors.
        [vectors] = await self.embedder.embed_documents_async([prepared.content], context_from=0)
        async with transaction(self.pool) as conn:
            nearest = await search_store.nearest_live(conn, vectors.vector)
        if nearest is None:
            return CheckResult("ADD", None, None, None, "no memories stored yet")
        similarity = round(nearest.similarity, 4)
        target_preview = preview(nearest.content)
        if nearest.similarity >= self.settings.guard_noop_threshold:
            return CheckResult(
                "NOOP",
                similarity,
                nearest.id,
                target_preview,
                f"near duplicate of memory {nearest.id} (similarity {similarity:.2f} >= "
                f"{self.settings.guard_noop_threshold}); save with force=true to keep both",
            )
        if nearest.similarity >= self.settings.guard_update_threshold:
            return CheckResult(
                "UPDATE",
                similarity,
                nearest.id,
                target_preview,
                f"close to memory {nearest.id} (similarity {similarity:.2f}); consider "
                f"update_memory({nearest.id}) instead of a new memory",
            )
        return CheckResult(
            "ADD",
            similarity,
            nearest.id,
            target_preview,
            f"new information: the closest memory ({nearest.id}) has similarity {similarity:.2f}",
        )

    async def update(
        self,
        memory_id: int,
        *,
        content: str | None = None,
        tags: Sequence[str] | None = None,
        project: str | None = None,
        kind: str | None = None,
        supersedes: int | None = None,
        force: bool = False,
    ) -> UpdateOutcome:
        """Change a live memory; new content is re-embedded once and passes the write guard.

        `supersedes` links the memory to the older one whose fact it replaces (0 clears the
        link, and the rules will not link that pair again); None leaves it as it is.
        """
        check_id(memory_id)
        if supersedes is not None and supersedes != 0:
            check_id(supersedes)
        new_tags, tag_redactions = clean_tags(tags) if tags is not None else (None, 0)
        new_project, project_redactions = (
            redacted_field(project, "project") if project is not None else (None, 0)
        )
        new_kind = check_kind(kind) if kind is not None else None
        current = await self.get(memory_id)
        check_owner(current)
        if current.deleted_at is not None:
            raise Conflict(f"memory {memory_id} is deleted; call restore_memory({memory_id}) first")
        prepared = (
            prepare_content(content, self.settings.max_content_chars)
            if content is not None
            else None
        )
        content_changes = prepared is not None and prepared.content_hash != current.content_hash
        redacted = (prepared.redacted if prepared is not None else 0) + tag_redactions
        redacted += project_redactions

        vectors: DocumentVectors | None = None
        if prepared is not None and content_changes:
            collision = await self._update_collision(memory_id, prepared, force)
            if collision is not None:
                return UpdateOutcome("duplicate", current, collision, redacted)
            place = turn_place(
                new_kind or current.kind,
                current.session_id,
                current.metadata,
                current.created_at,
                current.id,
            )
            [vectors] = await embed_in_context(
                self.pool, self.embedder, [prepared.content], [place], wait_if_down=True
            )

        nothing_else = (
            new_tags is None and new_project is None and new_kind is None and supersedes is None
        )
        if vectors is None and nothing_else:
            return UpdateOutcome("unchanged", current, None, redacted)

        async with transaction(self.pool) as conn:
            if vectors is not None and not force:
                # The look for a near copy and the write are one step, as in `save`.
                await memory_store.lock_near_copy_checks(conn)
                nearest = await search_store.nearest_live(
                    conn, vectors.vector, exclude_id=memory_id
                )
                if nearest is not None and nearest.similarity >= self.settings.guard_noop_threshold:
                    similar = SimilarMemory(
                        nearest.id, round(nearest.similarity, 4), preview(nearest.content)
                    )
                    return UpdateOutcome("noop", current, similar, redacted)
            locked = await memory_store.get_for_update(conn, memory_id)
            if locked is None or locked.deleted_at is not None:
                raise Conflict(f"memory {memory_id} was deleted while it was being updated")
            if prepared is not None and vectors is not None:
                changed = await memory_store.update_content(
                    conn, memory_id, prepared.content, prepared.content_hash, vectors
                )
                if changed is None:
                    raise Conflict(f"memory {memory_id} changed while it was being updated")
            updated = await memory_store.update_fields(
                conn, memory_id, tags=new_tags, project=new_project, kind=new_kind
            )
            # The memory's versions stay with their project: links to or from a memory of the
            # project it left go (#65 H1).
            moved = new_project is not None and updated is not None
            if moved and await links_store.cut_links_across_projects(conn, memory_id):
                updated = await memory_store.get(conn, memory_id)
            if supersedes is not None and updated is not None:
                # After the move to a new project, so the link is checked against it.
                await set_link(conn, memory_id, supersedes or None)
                updated = await memory_store.get(conn, memory_id)
        if updated is None:
            raise Conflict(f"memory {memory_id} changed while it was being updated")
        logger.info("updated memory %d", memory_id)
        return UpdateOutcome("updated", updated, None, redacted)

    async def _update_collision(
        self, memory_id: int, prepared: PreparedContent, force: bool
    ) -> SimilarMemory | None:
        """An exact copy elsewhere blocks an update even with force: hashes are unique."""
        async with transaction(self.pool) as conn:
            other = await memory_store.get_by_hash(conn, prepared.content_hash)
        if other is None or other.id == memory_id:
            return None
        if other.deleted_at is not None and force:
            raise Conflict(
                f"deleted memory {other.id} has exactly this content; restore_memory({other.id})"
                " or purge it first"
            )
        return similar_memory(other, 1.0)

    async def set_locked(self, memory_id: int, locked: bool) -> Memory:
        """Lock a learned preference (the user confirms it: explicit tier) or unlock it."""
        check_id(memory_id)
        async with transaction(self.pool) as conn:
            memory = await memory_store.get_for_update(conn, memory_id)
            if memory is None or memory.deleted_at is not None:
                raise NotFound(f"no live memory with id {memory_id}")
            check_owner(memory)
            if memory.kind not in ("preference", "pattern", "behavior"):
                raise InvalidInput(
                    f"memory {memory_id} is a {memory.kind}; only preference, pattern and "
                    "behavior memories can be locked"
                )
            metadata = {**memory.metadata, "locked": locked, "confirmed": locked}
            await learning_store.set_metadata(conn, memory_id, metadata)
            updated = await memory_store.get(conn, memory_id)
        if updated is None:
            raise NotFound(f"memory {memory_id} was purged meanwhile")
        return updated

    async def restore_links(self, links: Sequence[tuple[str, str, str]]) -> int:
        """Supersession links read from an export, as (newer, older) content hashes and reason;
        returns how many were made (server/service/supersessions.py `restore_links`)."""
        return await restore_links(self.pool, links)

    async def get(self, memory_id: int) -> Memory:
        """One memory by id, deleted or not (here because `update` starts from it)."""
        check_id(memory_id)
        async with transaction(self.pool) as conn:
            memory = await memory_store.get(conn, memory_id)
        if memory is None:
            raise NotFound(f"no memory with id {memory_id}")
        return memory

    async def get_many(self, memory_ids: Sequence[int]) -> dict[int, Memory]:
        """These memories by id, deleted ones included, in one query; ids of none left out."""
        if not memory_ids:
            return {}
        async with transaction(self.pool) as conn:
            return {m.id: m for m in await memory_store.get_many(conn, list(memory_ids))}

    async def soft_delete(self, memory_id: int) -> Memory:
        """Mark a memory deleted; it stays restorable until purged."""
        return await self._mark_deleted(memory_id, deleted=True)

    async def restore(self, memory_id: int) -> Memory:
        """Undo a soft delete."""
        return await self._mark_deleted(memory_id, deleted=False)

    async def _mark_deleted(self, memory_id: int, *, deleted: bool) -> Memory:
        """Soft-delete or restore one memory; NotFound if missing, Conflict if already so."""
        check_id(memory_id)
        change = memory_store.soft_delete if deleted else memory_store.restore
        async with transaction(self.pool) as conn:
            changed = await change(conn, memory_id)
            memory = await memory_store.get(conn, memory_id)
        if memory is None:
            raise NotFound(f"no memory with id {memory_id}")
        check_owner(memory)
        if not changed:
            already = "already deleted" if deleted else "not deleted; there is nothing to restore"
            raise Conflict(f"memory {memory_id} is {already}")
        logger.info("%s memory %d", "soft-deleted" if deleted else "restored", memory_id)
        return memory

    async def purge(self, memory_id: int) -> Memory:
        """Delete a soft-deleted memory for good; a live one must be soft-deleted first."""
        check_id(memory_id)
        async with transaction(self.pool) as conn:
            memory = await memory_store.get_for_update(conn, memory_id)
            if memory is None:
                raise NotFound(f"no memory with id {memory_id}")
            check_owner(memory)
            if memory.deleted_at is None:
                raise Conflict(
                    f"memory {memory_id} is not deleted; call delete_memory({memory_id}) first,"
                    " then purge it"
                )
            await memory_store.purge(conn, memory_id)
        logger.info("purged memory %d", memory_id)
        return memory

    async def bulk_soft_delete(
        self,
        *,
        tag: str | None = None,
        project: str | None = None,
        source: str | None = None,
        everything: bool = False,
        dry_run: bool = True,
    ) -> BulkDeleteResult:
        """Soft-delete every live memory with this tag/project/source (all given must match).

        `everything` (and no filter) soft-deletes every memory: restorable, like any delete.
        """
        where = MemoryFilter(
            tag=blank_to_none(tag),
            project=await self.resolve_project(project),
            source=blank_to_none(source),
            include_archived=True,
            owned_only=True,
        )
        unfiltered = where.tag is None and where.project is None and where.source is None
        if unfiltered and not everything:
            raise InvalidInput(
                "give at least one of tag, project or source to bulk delete (or all=true)"
            )
        if everything and not unfiltered:
            raise InvalidInput("all=true deletes everything; do not combine it with filters")
        async with transaction(self.pool) as conn:
            matched = await memory_store.count(conn, where)
            shown = await memory_store.preview_matching(conn, where, BULK_PREVIEW_ROWS)
            deleted = 0 if dry_run else await memory_store.soft_delete_matching(conn, where)
            logger.info("bulk soft-deleted %d memories", deleted)
        previews = [type(p)(id=p.id, preview=preview(p.preview)) for p in shown]
        return BulkDeleteResult(dry_run=dry_run, matched=matched, deleted=deleted, preview=previews)
