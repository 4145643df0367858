"""Shapes of the searches: the three MCP search tools, POST /api/search and POST /api/recall.

The tools' arguments are the shared start of POST /api/search's body, so a limit, a weight's
default or a filter is declared once and means the same on both sides. Both answer a
SearchResult: {mode, query, hits, took_ms, reranked_by, rerank_skipped}. /api/recall is the
established semantic search with `threshold`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

from pydantic import BaseModel, Field

from server.core.models.memories import MemoryFilter
from server.core.models.search import SearchHit, SearchParams
from server.schemas.fields import (
    Before,
    FusionWeight,
    KindName,
    ProjectFilter,
    ProjectOnly,
    Query,
    SearchLimit,
    Shape,
    Since,
    SourceFilter,
    TagFilter,
    Unit,
    WorkingTree,
)

SearchMode = Literal["hybrid", "semantic", "keyword"]
SEMANTIC_CUTOFF = (
    "Cut-off between 0 and 1; by default the one measured for the embedding model (0.15 for"
    " the bundled one), which drops what is unrelated."
)
HYBRID_CUTOFF = (
    "Cut-off between 0 and 1 on the similarity to the question; by default 0: hits found by"
    " their words alone stay."
)


class KeywordSearch(Shape):
    """search_memories: exact words and identifiers."""

    query: Query
    limit: SearchLimit = 10
    project: ProjectFilter = None
    project_only: ProjectOnly = False
    tag: TagFilter = None
    kind: KindName | None = None
    source: SourceFilter = None
    since: Since = None
    before: Before = None
    cwd: WorkingTree = None

    def memory_filter(self) -> MemoryFilter:
        """The service's filter for this search (the service resolves its project): its
        filter fields are MemoryFilter's, by the same name, but `project_only`."""
        filters = self.model_dump(include={"project", "tag", "kind", "source", "since", "before"})
        return MemoryFilter(with_general=not self.project_only, **filters)

    def search_params(self) -> SearchParams:
        """This search as server/recall/search.py runs it."""
        return SearchParams("keyword", self.query, self.limit, self.memory_filter(), cwd=self.cwd)


class SemanticSearch(KeywordSearch):
    """semantic_search: close in meaning."""

    min_similarity: Unit | None = Field(None, description=SEMANTIC_CUTOFF)

    def search_params(self) -> SearchParams:
        params = super().search_params()
        return replace(params, mode="semantic", min_similarity=self.min_similarity)


class HybridSearch(KeywordSearch):
    """hybrid_search: both lists fused."""

    keyword_weight: FusionWeight = 0.5
    semantic_weight: FusionWeight = 0.5
    min_similarity: Unit | None = Field(None, description=HYBRID_CUTOFF)
    include_archived: bool = Field(False, description="Also raw session turns already distilled.")

    def memory_filter(self) -> MemoryFilter:
        return replace(super().memory_filter(), include_archived=self.include_archived)

    def search_params(self) -> SearchParams:
        return replace(
            super().search_params(),
            mode="hybrid",
            min_similarity=self.min_similarity,
            keyword_weight=self.keyword_weight,
            semantic_weight=self.semantic_weight,
        )


class SearchRequest(HybridSearch, SemanticSearch):
    """POST /api/search: any mode, every filter, every score."""

    mode: SearchMode = "hybrid"
    min_similarity: Unit | None = Field(
        None, description=SEMANTIC_CUTOFF + " Hybrid mode's default is 0."
    )

    def search_params(self) -> SearchParams:
        return replace(super().search_params(), mode=self.mode)


class RecallRequest(Shape):
    """POST /api/recall: semantic search with a threshold, kept for compatibility."""

    query: Query
    threshold: Unit | None = Field(None, description=SEMANTIC_CUTOFF)
    limit: SearchLimit = 20
    project: ProjectFilter = None
    project_only: ProjectOnly = False

    def search_params(self) -> SearchParams:
        """This search as server/recall/search.py runs it: semantic, with no working tree."""
        where = MemoryFilter(project=self.project, with_general=not self.project_only)
        return SearchParams(
            "semantic", self.query, self.limit, where, min_similarity=self.threshold
        )


class SearchResponse(BaseModel):
    """What both search routes answer, as MCP's search tools do (SearchResult)."""

    mode: SearchMode
    query: str = Field(description="The question searched for.")
    hits: list[SearchHit] = Field(description="Best first.")
    took_ms: float
    reranked_by: str | None = Field(
        None, description="The reranker that ordered the first hits (hybrid mode), if any."
    )
    rerank_skipped: str | None = Field(
        None, description="Why the configured reranker did not order them: the fused order."
    )
