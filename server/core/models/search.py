"""Search results: each hit with every score it was ranked by."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from server.core.models.memories import MemoryFilter
from server.core.models.vectors import Window

SearchMode = Literal["semantic", "keyword", "hybrid"]


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One search result with every score it was ranked by.

    `similarity`: cosine similarity to the query (best passage for long memories).
    `keyword_score`: IDF-weighted term matches (0 when no query term is in the memory).
    `fused_score`: the fused score (hybrid mode only): per list, its weight times the hit's
    score as a share of that list's best (server/core/ranking.score_fusion).
    `score`: what the results are ordered by: the mode's base score times the ranking prior
    (kind weight, recency, a turn that asks), or the base score itself when the prior is
    switched off.
    `supersedes` / `superseded_by`: the older and newer versions of the hit's fact, and
    `version_note` why the ranking moved this version (server/domain/versions.py); `time_note` that
    it is from the period the question names (server/domain/query_dates.py).
    `verdict` / `verdict_note`: whether the working tree a search named (`cwd`) still agrees
    with what the hit says about the code (fresh, drifted, orphaned, unchecked) and, when it
    drifted or is orphaned, what changed (server/recall/working_tree.py); None without a `cwd`.
    `rerank_score`: what the configured reranker scored the hit (higher first), for the hits it
    reordered (server/service/rerank.py); None otherwise.
    """

    id: int
    content: str
    kind: str
    tags: list[str]
    source: str
    project: str
    project_path: str
    session_id: str | None
    created_at: datetime
    similarity: float | None
    keyword_score: float | None
    fused_score: float | None
    score: float
    supersedes: int | None = None
    superseded_by: int | None = None
    version_note: str | None = None
    time_note: str | None = None
    owner: str | None = None  # who saved it, on a team's server (Memory.owner)
    role: str | None = None  # who said it, for a conversation turn: "user" or "assistant"
    visibility: str = "shared"
    verdict: str | None = None
    verdict_note: str | None = None
    rerank_score: float | None = None


@dataclass(frozen=True, slots=True)
class SearchResult:
    """`reranked_by`: the reranker that ordered the first hits (server/service/rerank.py);
    `rerank_skipped`: why the configured reranker did not, the fused order standing."""

    mode: str
    query: str
    hits: list[SearchHit]
    took_ms: float
    reranked_by: str | None = None
    rerank_skipped: str | None = None


@dataclass(frozen=True, slots=True)
class SearchParams:
    """One search as POST /api/search, /api/recall and the MCP search tools ask for it: the
    mode, the question, its filter and scores, and the working tree (`cwd`) whose verdicts
    the hits carry (server/recall/search.py runs it). `min_similarity` None is the mode's
    default: the measured cut-off for semantic search, 0 for hybrid."""

    mode: SearchMode
    query: str
    limit: int
    where: MemoryFilter
    min_similarity: float | None = None
    keyword_weight: float = 0.5
    semantic_weight: float = 0.5
    cwd: str | None = None


@dataclass(frozen=True, slots=True)
class RecallEvidence:
    """What prompt recall weighs beside a hit's similarity, read in one transaction: the
    factor recall learned of each memory's use (server/service/uses.py; absent: none
    learned), the share of the prompt's weighted words each holds (0 to 1), and, for a
    prompt in a project, the largest share one memory holds there (or in general knowledge)
    and in any other project (server/recall/cutoff.asked_elsewhere); and, for prompt recall,
    the span of each hit's statement nearest the prompt in meaning (`statements`: only hits
    stating several things have one), which the hook shows first of a long hit
    (server/domain/context.py `answering`)."""

    use_factors: dict[int, float]
    term_shares: dict[int, float]
    words_here: float = 0.0
    words_elsewhere: float = 0.0
    statements: dict[int, Window] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PromptRead:
    """What prompt recall asks of the store for one prompt (MemoryService.prompt_recall):
    the prompt's `query`, the session's `folder` (its project's) and `session_id` (its budget
    spent), how many hits to fetch, and the lowest similarity that can count: `floor`, or
    `floor_unknown` when the prompt names something no memory holds (server/recall/cutoff.py)."""

    query: str
    folder: str
    session_id: str
    limit: int
    floor: float
    floor_unknown: float


@dataclass(frozen=True, slots=True)
class PromptFacts:
    """All prompt recall reads for one prompt, in one transaction: the folder's `project`
    (None: no project's), the names the prompt gives that no memory holds, the search's
    `result`, the `evidence` on its hits, and the tokens the session was given so far."""

    project: str | None
    unknown: list[str]
    result: SearchResult
    evidence: RecallEvidence
    spent_tokens: int
