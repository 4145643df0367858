"""What the adapters (REST, MCP, the hook routes) and recall may ask of the service.

`MemoryService` has more public methods than this: the learning jobs' steps, leases, the
importers' writes. An adapter is typed against `MemoryApi` instead, so mypy refuses a call to
anything else, and `tests/unit/test_architecture.py` keeps adapters from naming
`MemoryService` at all (only the app, which builds it, does). A method an adapter needs is
added here on purpose, with its signature as `MemoryService` has it (mypy checks they agree
where the app hands a `MemoryService` over); each method's documentation is on its
implementation, so it is written once.
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
        FolderProject,
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
    from server.core.models.promotion import PromotedLine, UseRecord
    from server.core.models.receipts import (
        ContextReport,
        Injection,
        ReceiptFilter,
        ReceiptPage,
        SessionWork,
    )
    from server.core.models.search import PromptFacts, PromptRead, RecallEvidence, SearchResult
    from server.core.models.sessions import SessionPage
    from server.core.models.stats import Stats
    from server.core.models.views import (
        MemoryCheck,
        PreferenceTiers,
        RecentContext,
        StartupContext,
        Timeline,
    )
    from server.domain.anchors import Anchor
    from server.domain.trajectories import Trajectory
    from server.service.cutoffs import SimilarityCutoffs
    from server.service.embeddings import Embedder


class MemoryApi(Protocol):
    """The service's face to the adapters."""

    settings: Settings
    embedder: Embedder
    cutoffs: SimilarityCutoffs

    async def resolve_project(self, name: str | None) -> str | None: ...

    async def project_at_folder(self, folder: str) -> str | None: ...

    async def session_folders(self, project: str) -> list[str]: ...
    async def name_folder(self, folder: str, project: str | None) -> FolderProject: ...

    async def search_semantic(
        self,
        query: str,
        *,
        limit: int = 10,
        min_similarity: float | None = None,
        where: MemoryFilter | None = None,
        use_prior: bool = True,
    ) -> SearchResult: ...

    async def search_keyword(
        self,
        query: str,
        *,
        limit: int = 10,
        where: MemoryFilter | None = None,
        use_prior: bool = True,
    ) -> SearchResult: ...

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
        hook: bool = False,
    ) -> SearchResult: ...

    async def list_memories(
        self, where: MemoryFilter | None = None, *, limit: int = 20, offset: int = 0
    ) -> MemoryPage: ...

    async def get(self, memory_id: int) -> Memory: ...

    async def get_many(self, memory_ids: Sequence[int]) -> dict[int, Memory]: ...

    async def anchors(self, memory: Memory) -> list[Anchor]: ...

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
    ) -> SaveOutcome: ...

    async def save_many(
        self, drafts: Sequence[MemoryDraft], *, force: bool = False
    ) -> BulkSaveResult: ...

    async def check(self, content: str) -> CheckResult: ...

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
    ) -> UpdateOutcome: ...

    async def soft_delete(self, memory_id: int) -> Memory: ...

    async def restore(self, memory_id: int) -> Memory: ...

    async def purge(self, memory_id: int) -> Memory: ...

    async def set_locked(self, memory_id: int, locked: bool) -> Memory: ...

    async def bulk_soft_delete(
        self,
        *,
        tag: str | None = None,
        project: str | None = None,
        source: str | None = None,
        everything: bool = False,
        dry_run: bool = True,
    ) -> BulkDeleteResult: ...

    async def related(self, memory_id: int, *, limit: int = 3) -> list[RelatedMemory]: ...

    async def versions(self, memory_id: int) -> list[MemoryVersion]: ...

    async def find_duplicates(
        self,
        *,
        threshold: float | None = None,
        limit: int = 20,
        project: str | None = None,
        scan_limit: int = 500,
    ) -> list[DuplicatePair]: ...

    async def tags(self) -> list[TagCount]: ...

    async def projects(self) -> list[ProjectSummary]: ...

    async def stats(self) -> Stats: ...

    async def export(
        self, where: MemoryFilter | None = None, output_format: str = "json"
    ) -> AsyncIterator[str]: ...

    async def timeline(
        self, where: MemoryFilter | None = None, *, limit: int = 2_000
    ) -> Timeline: ...

    async def sessions(
        self,
        *,
        project: str | None = None,
        source: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> SessionPage: ...

    async def preferences(self, project: str | None = None) -> PreferenceTiers: ...

    async def startup_context(
        self,
        project: str | None = None,
        *,
        source: str | None = None,
        vet: MemoryCheck | None = None,
        max_chars: int | None = None,
    ) -> StartupContext: ...

    async def recent_context(
        self, project: str | None = None, limit: int = 10, *, source: str | None = None
    ) -> RecentContext: ...

    async def journal(
        self, where: JournalFilter | None = None, *, limit: int = 50
    ) -> JournalPage: ...

    async def lessons(
        self, project: str | None = None, *, include_inactive: bool = True
    ) -> list[Lesson]: ...

    async def add_lesson(self, draft: LessonDraft) -> Lesson: ...

    async def update_lesson(self, lesson_id: int, change: LessonChange) -> Lesson: ...

    async def learn(
        self, trajectory: Trajectory, *, source: str = "", session_id: str | None = None
    ) -> SaveOutcome: ...

    async def reset_distill_failures(self, session: str | None = None) -> int: ...

    def invalidate_cache(self) -> None: ...

    async def database_ok(self) -> bool: ...

    async def vectors_waiting(self) -> int: ...

    async def context_report(
        self, project: str | None = None, *, days: int = 30, top: int = 10
    ) -> ContextReport: ...

    async def receipts(
        self, where: ReceiptFilter | None = None, *, limit: int = 50
    ) -> ReceiptPage: ...

    async def judge_injections(self, work: Sequence[SessionWork]) -> int: ...

    async def promoted_lines(self, paths: Sequence[str]) -> list[PromotedLine]: ...

    async def record_promoted(
        self,
        path: str,
        *,
        written: dict[int, str] | None = None,
        declined: Sequence[int] = (),
        removed: Sequence[int] = (),
    ) -> None: ...

    async def use_records(self, memory_ids: Sequence[int]) -> dict[int, UseRecord]: ...


class RecallApi(MemoryApi, Protocol):
    """The face plus what only the hooks' server side (server/recall/hook.py) asks: REST and
    MCP are typed against `MemoryApi` and cannot reach these."""

    async def claim_folder(self, folder: str) -> FolderProject | None: ...

    # The parts of `prompt_recall`, each on its own (tests and benches weigh them apart).
    async def unknown_names(self, text: str) -> list[str]: ...

    async def recall_evidence(
        self, query: str, memory_ids: Sequence[int], project: str | None = None
    ) -> RecallEvidence: ...

    async def prompt_recall(self, read: PromptRead) -> PromptFacts: ...

    async def record_prompt_turn(
        self, receipt: Injection | None, prompt: JournalPrompt | None
    ) -> None: ...

    async def injected_tokens(self, session_id: str) -> int: ...

    async def record_injection(self, injection: Injection) -> bool: ...

    async def lessons_for_call(
        self, tool: str, tool_input: Any, project: str | None
    ) -> list[Lesson]: ...

    async def open_listed(self, session_id: str, memory_id: int, tool: str) -> bool: ...

    async def record_calls(self, calls: Sequence[SessionEvent]) -> None: ...

    async def record_prompts(self, prompts: Sequence[JournalPrompt]) -> None: ...
