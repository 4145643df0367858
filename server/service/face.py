"""What the adapters (REST, MCP, the hook routes and the hooks' read path) may ask of the service.

`MemoryService` has more public methods than this: the learning jobs' steps, leases, the
importers' writes. An adapter is typed against `MemoryApi` instead, so mypy refuses a call to
anything else, and `tests/unit/test_architecture.py` keeps adapters from naming
`MemoryService` at all (only the app, which builds it, does). A method an adapter needs is
added here on purpose, with its signature as `MemoryService` has it (mypy checks they agree
where the app hands a `MemoryService` over).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence
    from datetime import datetime
    from typing import Any

    from server.core.config import Settings
    from server.core.models.journal import JournalFilter, JournalPage, JournalPrompt, SessionEvent
    from server.core.models.lessons import Lesson, LessonChange, LessonDraft
    from server.core.models.memories import (
        BulkDeleteResult,
        BulkSaveResult,
        CheckResult,
        DuplicatePair,
        Memory,
        MemoryDraft,
        MemoryFilter,
        MemoryPage,
        MemoryVersion,
        ProjectSummary,
        RelatedMemory,
        SaveOutcome,
        TagCount,
        UpdateOutcome,
    )
    from server.core.models.search import SearchResult
    from server.core.models.sessions import SessionPage
    from server.core.models.stats import Stats
    from server.core.models.views import PreferenceTiers, RecentContext, StartupContext, Timeline
    from server.domain.trajectories import Trajectory
    from server.service.cutoffs import SimilarityCutoffs
    from server.service.embeddings import Embedder


class MemoryApi(Protocol):
    """The service's face to the adapters."""

    settings: Settings
    embedder: Embedder
    cutoffs: SimilarityCutoffs

    async def resolve_project(self, name: str | None) -> str | None:
        """The stored name of the project `name` means: every way in (REST, MCP, the CLI) reads a
        project filter through this one rule."""
        ...

    async def search_semantic(
        self,
        query: str,
        *,
        limit: int = 10,
        min_similarity: float | None = None,
        where: MemoryFilter | None = None,
        use_prior: bool = True,
    ) -> SearchResult:
        """Memories closest in meaning to `query`, at or above `min_similarity` (by default the cut-
        off measured for the embedding model, server/service/cutoffs.py)."""
        ...

    async def search_keyword(
        self,
        query: str,
        *,
        limit: int = 10,
        where: MemoryFilter | None = None,
        use_prior: bool = True,
    ) -> SearchResult:
        """Memories containing the query's words or exact identifiers, most relevant first."""
        ...

    async def search_hybrid(
        self,
        query: str,
        *,
        limit: int = 10,
        keyword_weight: float = 0.5,
        semantic_weight: float = 0.5,
        min_similarity: float = 0.0,
        where: MemoryFilter | None = None,
        use_prior: bool = True,
    ) -> SearchResult:
        """Semantic and keyword results fused by score (server/core/ranking.score_fusion)."""
        ...

    async def list_memories(
        self, where: MemoryFilter | None = None, *, limit: int = 20, offset: int = 0
    ) -> MemoryPage:
        """A page of memories, newest first, with the total that match the filter."""
        ...

    async def get(self, memory_id: int) -> Memory:
        """One memory by id, deleted or not (here because `update` starts from it)."""
        ...

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
    ) -> SaveOutcome:
        """Store a memory unless it is already there."""
        ...

    async def save_many(
        self, drafts: Sequence[MemoryDraft], *, force: bool = False
    ) -> BulkSaveResult:
        """Store up to 1,000 drafts atomically and say what happened to each."""
        ...

    async def check(self, content: str) -> CheckResult:
        """What `save` would do with `content`: ADD, UPDATE (a close match) or NOOP."""
        ...

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
        """Change a live memory; new content is re-embedded once and passes the write guard."""
        ...

    async def soft_delete(self, memory_id: int) -> Memory:
        """Mark a memory deleted; it stays restorable until purged."""
        ...

    async def restore(self, memory_id: int) -> Memory:
        """Undo a soft delete."""
        ...

    async def purge(self, memory_id: int) -> Memory:
        """Delete a soft-deleted memory for good; a live one must be soft-deleted first."""
        ...

    async def set_locked(self, memory_id: int, locked: bool) -> Memory:
        """Lock a learned preference (the user confirms it: explicit tier) or unlock it."""
        ...

    async def bulk_soft_delete(
        self,
        *,
        tag: str | None = None,
        project: str | None = None,
        source: str | None = None,
        everything: bool = False,
        dry_run: bool = True,
    ) -> BulkDeleteResult:
        """Soft-delete every live memory with this tag/project/source (all given must match)."""
        ...

    async def related(self, memory_id: int, *, limit: int = 3) -> list[RelatedMemory]:
        """Live memories nearest to this one's stored vector."""
        ...

    async def versions(self, memory_id: int) -> list[MemoryVersion]:
        """The chain of versions a memory belongs to, oldest first (just itself if none)."""
        ...

    async def find_duplicates(
        self,
        *,
        threshold: float | None = None,
        limit: int = 20,
        project: str | None = None,
        scan_limit: int = 500,
    ) -> list[DuplicatePair]:
        """Near-duplicate pairs among the `scan_limit` newest memories, most similar first (by
        default at the cut-off measured for the embedding model, server/service/cutoffs.py)."""
        ...

    async def tags(self) -> list[TagCount]:
        """Tags of live memories with how often each is used."""
        ...

    async def projects(self) -> list[ProjectSummary]:
        """Projects with live memories, most recently active first."""
        ...

    async def stats(self) -> Stats:
        """Counts by project, source and kind; deleted rows; sizes on disk; sessions; cache."""
        ...

    async def export(
        self, where: MemoryFilter | None = None, output_format: str = "json"
    ) -> AsyncIterator[str]:
        """The matching memories as JSON, JSON Lines or Markdown, in chunks of any total size."""
        ...

    async def timeline(self, where: MemoryFilter | None = None, *, limit: int = 2_000) -> Timeline:
        """The newest `limit` matching memories as points, and per-day counts per project."""
        ...

    async def sessions(
        self,
        *,
        project: str | None = None,
        source: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> SessionPage:
        """Imported sessions, most recently active first, with import and learning state;
        `by_source` counts every agent's sessions whatever `source` picks, for a filter."""
        ...

    async def preferences(self, project: str | None = None) -> PreferenceTiers:
        """Learned preferences in three tiers, with confidence and evidence (100 per tier)."""
        ...

    async def startup_context(
        self, project: str | None = None, *, source: str | None = None
    ) -> StartupContext:
        """What an agent should know at session start, as Markdown of at most 4,000 chars."""
        ...

    async def recent_context(
        self, project: str | None = None, limit: int = 10, *, source: str | None = None
    ) -> RecentContext:
        """Newest distilled memories of a project, or the newest of any kind if none exist; from
        every agent unless `source` names one."""
        ...

    async def journal(self, where: JournalFilter | None = None, *, limit: int = 50) -> JournalPage:
        """Prompts and the calls that followed them, newest first, at most `limit` of each."""
        ...

    async def lessons(
        self, project: str | None = None, *, include_inactive: bool = True
    ) -> list[Lesson]:
        """The lessons the asking user sees, newest first; with a project, its own and those for
        every project."""
        ...

    async def add_lesson(self, draft: LessonDraft) -> Lesson:
        """Store a lesson; a bad pattern, an empty message or an unknown strictness is refused, and
        so is a user's lesson for a project they do not belong to (Forbidden)."""
        ...

    async def update_lesson(self, lesson_id: int, change: LessonChange) -> Lesson:
        """Edit, disable (active=False) or enable a lesson; NotFound when there is none, Forbidden
        when the asking user may not change it or move it to that project."""
        ...

    async def learn(
        self, trajectory: Trajectory, *, source: str = "", session_id: str | None = None
    ) -> SaveOutcome:
        """Store a trajectory (task, what worked, what to avoid) as a memory of its own kind."""
        ...

    async def reset_distill_failures(self, session: str | None = None) -> int:
        """Give failed sessions (one, or all) a fresh start; returns how many changed."""
        ...

    def invalidate_cache(self) -> None:
        """Drop cached reads now. Not needed after a write anywhere (the cache sees commits itself);
        POST /cache/invalidate keeps calling it for scripts written for older versions."""
        ...

    async def database_ok(self) -> bool:
        """Whether the database answers right now (for /health; never raises)."""
        ...

    async def vectors_waiting(self) -> int:
        """How many memories have no vector yet (saved while the embedder was down)."""
        ...

    async def lessons_for_call(
        self, tool: str, tool_input: Any, project: str | None
    ) -> list[Lesson]:
        """The active lessons the asking user sees that apply to a call of `tool` with `tool_input`
        in `project`."""
        ...

    async def record_calls(self, calls: Sequence[SessionEvent]) -> None:
        """Store calls a hook reported; an import of the same session later completes them."""
        ...

    async def record_prompts(self, prompts: Sequence[JournalPrompt]) -> None:
        """Store prompts a hook reported (keyed like the transcript's, so never twice)."""
        ...

    async def unknown_names(self, text: str) -> list[str]:
        """The names (tools, services, identifiers) `text` mentions that no memory holds."""
        ...
