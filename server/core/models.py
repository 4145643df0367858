"""Value types shared by the store, the service and the adapters.

Frozen dataclasses: rows come out of the store as these, the service returns them, and the
adapters turn them into JSON with `to_json()` (numbers stay numbers, times are ISO 8601 UTC).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Literal, get_args

import numpy as np

MemoryKind = Literal[
    "raw", "distilled", "note", "preference", "pattern", "behavior", "manual", "trajectory"
]
MEMORY_KINDS: tuple[str, ...] = get_args(MemoryKind)

SaveStatus = Literal["saved", "noop", "duplicate", "restored"]
UpdateStatus = Literal["updated", "unchanged", "noop", "duplicate"]
CheckAction = Literal["ADD", "UPDATE", "NOOP"]
ExportFormat = Literal["json", "jsonl", "markdown"]
EXPORT_FORMATS: tuple[str, ...] = get_args(ExportFormat)

PREVIEW_CHARS = 160


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    """The first `limit` characters on one line, with an ellipsis when cut."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def to_json(value: Any) -> Any:
    """Turn dataclasses, datetimes and containers of them into JSON-ready values."""
    if hasattr(value, "__dataclass_fields__"):
        return {key: to_json(item) for key, item in asdict(value).items()}
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {key: to_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [to_json(item) for item in value]
    return value


@dataclass(frozen=True, slots=True)
class Memory:
    """One stored memory, as a row of `memories` without its vector."""

    id: int
    content: str
    content_hash: str
    kind: str
    tags: list[str]
    source: str
    project: str
    project_path: str
    session_id: str | None
    role: str | None
    created_at: datetime
    updated_at: datetime
    deleted_at: datetime | None
    metadata: dict[str, Any]
    supersedes: int | None
    archived_at: datetime | None
    supersede_reason: str = ""
    superseded_by: int | None = None  # the newest live memory that supersedes this one
    owner: str | None = None  # the user who saved it; None when the server had no users
    visibility: str = "shared"  # private to its owner, or shared with its project's team


@dataclass(frozen=True, slots=True)
class NewMemory:
    """What the service hands the store to insert: content already redacted and hashed."""

    content: str
    content_hash: str
    kind: str = "manual"
    tags: list[str] = field(default_factory=list)
    source: str = ""
    project: str = ""
    project_path: str = ""
    session_id: str | None = None
    role: str | None = None
    created_at: datetime | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    supersedes: int | None = None
    visibility: str | None = None  # None: the server's DEFAULT_VISIBILITY for a user's save


@dataclass(frozen=True, slots=True)
class Neighbour:
    """The nearest stored memory to a vector, with its cosine similarity."""

    id: int
    similarity: float
    content: str
    deleted: bool


@dataclass(frozen=True, slots=True)
class SimilarMemory:
    """The memory a write collided with, as reported to the caller."""

    id: int
    similarity: float
    preview: str


def similar_memory(memory: Memory, similarity: float) -> SimilarMemory:
    """How a write reports the stored memory it collided with."""
    return SimilarMemory(
        id=memory.id, similarity=round(similarity, 4), preview=preview(memory.content)
    )


@dataclass(frozen=True, slots=True)
class SaveOutcome:
    """What `save` did: saved a new row, or pointed at the row that made it unnecessary."""

    status: SaveStatus
    id: int
    memory: Memory
    similar: SimilarMemory | None
    redacted: int


@dataclass(frozen=True, slots=True)
class CheckResult:
    """What `save` would do with this content, without writing anything."""

    action: CheckAction
    similarity: float | None
    target_id: int | None
    target_preview: str | None
    reason: str


@dataclass(frozen=True, slots=True)
class UpdateOutcome:
    """What `update` did; on noop/duplicate, `memory` is unchanged and `similar` says why."""

    status: UpdateStatus
    memory: Memory
    similar: SimilarMemory | None
    redacted: int


@dataclass(frozen=True, slots=True)
class MemoryFilter:
    """Optional filters shared by list, search, bulk delete and export; None means "any".

    `text` keeps memories containing all of its words (web-search syntax, English stemming).
    Raw turns archived by distillation are left out unless `include_archived`; `only_deleted`
    keeps soft-deleted memories only (the UI's deleted view). `with_general` lets a project
    filter keep the memories of no project too (notes without front matter, claude.ai chats):
    searches and prompt recall in a project include that general knowledge unless asked for
    the project alone; lists, exports and deletes keep to the project."""

    project: str | None = None
    with_general: bool = False
    tag: str | None = None
    kind: str | None = None
    source: str | None = None
    since: datetime | None = None
    before: datetime | None = None
    include_deleted: bool = False
    text: str | None = None
    include_archived: bool = False
    only_deleted: bool = False
    session_id: str | None = None
    owned_only: bool = False  # only the asking user's own memories (bulk delete)


@dataclass(frozen=True, slots=True)
class MemoryPage:
    """One page of a filtered list, with the total across all pages."""

    total: int
    limit: int
    offset: int
    memories: list[Memory]


@dataclass(frozen=True, slots=True)
class TagCount:
    tag: str
    count: int


@dataclass(frozen=True, slots=True)
class MemoryPreview:
    id: int
    preview: str


@dataclass(frozen=True, slots=True)
class BulkDeleteResult:
    """`matched` live memories fit the filter; `deleted` is how many rows really changed."""

    dry_run: bool
    matched: int
    deleted: int
    preview: list[MemoryPreview]


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


@dataclass(frozen=True, slots=True)
class EmbeddingModelRecord:
    """The model the stored vectors were made with (table `embedding_model`)."""

    provider: str
    model: str
    dimension: int
    state: str
    recorded_at: datetime


@dataclass(frozen=True, slots=True)
class Window:
    """A passage of a text: characters [start, end)."""

    start: int
    end: int


# How much the turn before a conversation turn, and the one before that, count towards it: in
# its vector (server/service/turn_context.py) and in its keyword score (server/store/search.py).
TURN_CONTEXT_WEIGHTS = (0.5, 0.25)


@dataclass(frozen=True, slots=True)
class TurnPlace:
    """Where a conversation turn sits: its session and subagent, its time, its id if stored.

    Turns are ordered by (created_at, id) within a (session_id, agent_id) pair; a turn not
    stored yet (`memory_id` None) comes after every stored turn of the same time.
    """

    session_id: str
    agent_id: str
    created_at: datetime
    memory_id: int | None = None

    @property
    def order_id(self) -> int:
        """The id the turn sorts by: past every stored id while it is not stored."""
        return self.memory_id if self.memory_id is not None else 2**63 - 1


@dataclass(frozen=True, slots=True)
class DocumentVectors:
    """A text's vector, and its windows' vectors when it is longer than the model reads.

    `vector` is the text's own embedding for short texts, and the normalised mean of its
    window vectors for long ones (what the write guard and related-memory look-ups compare);
    a conversation turn's is then blended with the turns before it (server/service/turn_context.py).
    `vector` is None while the embeddings endpoint is down: the memory is stored without one
    and server/service/vector_backfill.py embeds it later.
    """

    vector: np.ndarray | None
    windows: list[tuple[Window, np.ndarray]]


WAITING_FOR_VECTOR = DocumentVectors(None, [])


SearchMode = Literal["semantic", "keyword", "hybrid"]
SEARCH_MODES: tuple[str, ...] = get_args(SearchMode)


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
    visibility: str = "shared"


@dataclass(frozen=True, slots=True)
class SearchResult:
    mode: str
    query: str
    hits: list[SearchHit]
    took_ms: float


@dataclass(frozen=True, slots=True)
class RelatedMemory:
    id: int
    similarity: float
    kind: str
    project: str
    created_at: datetime
    preview: str


@dataclass(frozen=True, slots=True)
class MemoryVersion:
    """One version of a changed fact, in a memory's chain of versions (oldest first).

    `reason` says why this version replaced the one before it ("number 20 -> 22", "set by
    hand"); `current` marks the live version nothing live replaces.
    """

    id: int
    created_at: datetime
    kind: str
    preview: str
    reason: str
    deleted: bool
    current: bool


@dataclass(frozen=True, slots=True)
class DuplicatePair:
    first_id: int
    second_id: int
    similarity: float
    first_preview: str
    second_preview: str


@dataclass(frozen=True, slots=True)
class ProjectSummary:
    project: str
    project_path: str
    count: int
    last_at: datetime


@dataclass(frozen=True, slots=True)
class RecentContext:
    """Newest memories for a project; `source` says whether they are distilled or any kind."""

    source: Literal["distilled", "recent"]
    project: str | None
    memories: list[Memory]


@dataclass(frozen=True, slots=True)
class StartupContext:
    """Session-start context: Markdown for the agent plus the figures it was built from."""

    project: str | None
    markdown: str
    preferences: int
    patterns: int
    recent: int
    project_memories: int
    total_memories: int


@dataclass(frozen=True, slots=True)
class MemoryDraft:
    """One memory a batch caller wants stored, before validation and redaction."""

    content: str
    tags: list[str] = field(default_factory=list)
    source: str = ""
    project: str = ""
    project_path: str = ""
    kind: str = "manual"
    session_id: str | None = None
    role: str | None = None
    created_at: datetime | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    visibility: str | None = None  # None: the server's DEFAULT_VISIBILITY for a user's save


BulkStatus = Literal["saved", "noop", "duplicate", "restored", "invalid"]


@dataclass(frozen=True, slots=True)
class BulkItemOutcome:
    """What a batch save did with one draft; `index` is its position in the request.

    `id` is the stored memory (new or the one that made the draft unnecessary); None only for
    `invalid`, whose `error` says what was wrong.
    """

    index: int
    status: BulkStatus
    id: int | None
    similar: SimilarMemory | None
    redacted: int
    error: str | None


@dataclass(frozen=True, slots=True)
class BulkSaveResult:
    """Per-draft outcomes of one batch, plus counts by status."""

    saved: int
    skipped: int
    invalid: int
    items: list[BulkItemOutcome]


@dataclass(frozen=True, slots=True)
class TimelinePoint:
    """One memory as a dot on the timeline: enough to place and label it, not its text."""

    id: int
    project: str
    created_at: datetime
    kind: str
    length: int
    title: str


@dataclass(frozen=True, slots=True)
class DayCount:
    day: str
    project: str
    count: int


@dataclass(frozen=True, slots=True)
class Timeline:
    """The newest `len(points)` of `total` matching memories, and per-day counts for all."""

    total: int
    truncated: bool
    points: list[TimelinePoint]
    days: list[DayCount]


@dataclass(frozen=True, slots=True)
class ImportedSession:
    """A session the importers have read, with how far they got and what learning did."""

    session_id: str
    title: str | None
    source: str
    project: str
    project_path: str
    file_path: str | None
    bytes_imported: int
    lines_imported: int
    message_count: int
    first_message_at: datetime | None
    last_message_at: datetime | None
    imported_at: datetime
    distill_state: str
    distill_failures: int
    distill_last_error: str | None
    distilled_at: datetime | None
    signals_state: str
    behavior_state: str


@dataclass(frozen=True, slots=True)
class SessionPage:
    total: int
    limit: int
    offset: int
    sessions: list[ImportedSession]
    by_source: dict[str, int]


PreferenceTier = Literal["explicit", "signals", "inferred"]


@dataclass(frozen=True, slots=True)
class Preference:
    """A learned preference with the evidence behind it.

    `confidence` (0-1) grows with the number of sessions that support it and with recent
    support, and is highest when the user stated or confirmed it; `confidence_percent` is the
    same as the whole percent every view shows (server/core/percent.py). `superseded_by` names a
    newer preference on the same subject that replaces this one.
    """

    memory: Memory
    tier: PreferenceTier
    confidence: float
    confidence_percent: int
    evidence_sessions: int
    last_seen: datetime
    confirmed: bool
    superseded_by: int | None


@dataclass(frozen=True, slots=True)
class PreferenceTiers:
    """Preferences by the strength of their source, best first within each tier.

    `explicit`: saved as a preference by the user or an agent, or locked by the user;
    `signals`: counted from corrections and habits, without an LLM;
    `inferred`: an LLM's reading of sessions (distilled preferences, behaviour).
    """

    explicit: list[Preference]
    signals: list[Preference]
    inferred: list[Preference]


@dataclass(frozen=True, slots=True)
class SessionEvent:
    """A tool call: tool, what it acted on (its input summary), and how it went.

    From a transcript or, live, from a hook (which knows no `record_uuid`). `prompt_key` names
    the human prompt it followed (see JournalPrompt); `output_preview` is the start of its
    output and `error` its error message when it failed. Unknown parts are None.
    """

    session_id: str
    agent_id: str | None
    record_uuid: str | None
    tool_use_id: str
    tool: str
    target: str | None
    success: bool | None
    at: datetime | None
    project: str
    prompt_key: str | None = None
    output_preview: str | None = None
    error: str | None = None


# Bounds of what the journal keeps of a call and a prompt, in characters.
OUTPUT_PREVIEW_CHARS = 400
ERROR_CHARS = 500
PROMPT_CHARS = 4_000


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """A tool call's result, read with its call or later (a result can be in a later read)."""

    success: bool
    output_preview: str | None = None
    error: str | None = None
    prompt_key: str | None = None


@dataclass(frozen=True, slots=True)
class JournalPrompt:
    """A human prompt in the journal (table `journal_prompts`).

    `prompt_key` is Claude Code's promptId (2.1 and later; hooks send it as `prompt_id`), or the
    prompt record's uuid in older transcripts. `text` is redacted and cut to a bounded size.
    """

    session_id: str
    prompt_key: str
    text: str
    at: datetime | None
    project: str


Strictness = Literal["warn", "ask"]
STRICTNESS: tuple[str, ...] = get_args(Strictness)


@dataclass(frozen=True, slots=True)
class Lesson:
    """A reminder before a tool call (table `lessons`).

    It matches a call when `tool` is the call's tool ("" for any), `pattern` (a regular
    expression, case-insensitive) is found in the call's input, and `project` is the call's
    ("" for every project). "warn" adds `message` to the agent's context; "ask" also makes
    Claude Code ask the user before the call runs; Codex and Gemini CLI, whose hooks cannot ask
    (server/hooks.py), refuse the call with the message. `origin` says who wrote it: user, agent,
    or `journal:<session id>` / `correction:<session id>` for a lesson proposed from that
    session's journal. `proposed`: proposed and not yet accepted (enabled) or dismissed
    (disabled) by the user; a proposal is inactive.
    """

    id: int
    tool: str
    pattern: str
    project: str
    message: str
    strictness: str
    origin: str
    active: bool
    created_at: datetime
    updated_at: datetime
    proposed: bool


@dataclass(frozen=True, slots=True)
class LessonDraft:
    pattern: str
    message: str
    tool: str = ""
    project: str = ""
    strictness: str = "warn"
    origin: str = "user"


@dataclass(frozen=True, slots=True)
class LessonChange:
    """What an edit changes; None keeps a field."""

    tool: str | None = None
    pattern: str | None = None
    project: str | None = None
    message: str | None = None
    strictness: str | None = None
    active: bool | None = None


@dataclass(frozen=True, slots=True)
class JournalFilter:
    """Which calls and prompts a journal read returns; None means any."""

    project: str | None = None
    session_id: str | None = None  # a session id or its prefix
    tool: str | None = None  # case-insensitive: "bash" matches Bash
    failed_only: bool = False
    since: datetime | None = None
    before: datetime | None = None
    text: str | None = None  # words in the prompt or in the call's input summary


@dataclass(frozen=True, slots=True)
class JournalCall:
    tool_use_id: str
    tool: str
    target: str | None
    success: bool | None
    error: str | None
    output_preview: str | None
    at: datetime | None
    agent_id: str | None


@dataclass(frozen=True, slots=True)
class JournalEntry:
    """A prompt and the calls that followed it (oldest first); prompt is None when unknown."""

    session_id: str
    project: str
    prompt_key: str | None
    prompt: str | None
    at: datetime | None
    calls: list[JournalCall]


@dataclass(frozen=True, slots=True)
class JournalPage:
    """Journal entries, newest first. `truncated`: more calls or prompts matched than shown."""

    entries: list[JournalEntry]
    calls: int
    truncated: bool


@dataclass(frozen=True, slots=True)
class FileProgress:
    """How far an importer has read one transcript file, and the session it belongs to.

    `main_file` is True for the session's own transcript (not a sub-agent's), whose offsets
    and title the session row shows. `file_path` is None for sessions that do not come from a
    file read by offset (a claude.ai conversation): only the session row is written.
    """

    file_path: str | None
    session_id: str
    agent_id: str | None
    source: str
    project: str
    project_path: str
    bytes_imported: int
    lines_imported: int
    main_file: bool
    title: str | None
    first_at: datetime | None
    last_at: datetime | None


@dataclass(frozen=True, slots=True)
class FileImport:
    """One file's new turns, events and progress: written in one transaction, or not at all.

    `results` carries tool outcomes for calls read in an earlier run (tool_use_id -> outcome).
    `prompts` are the file's human prompts for the journal. `progress` is None for sources
    without sessions (notes, memory files).
    """

    drafts: list[MemoryDraft]
    events: list[SessionEvent] = field(default_factory=list)
    results: dict[str, ToolOutcome] = field(default_factory=dict)
    progress: FileProgress | None = None
    prompts: list[JournalPrompt] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class FileImportOutcome:
    saved: int
    duplicates: int
    invalid: int
    redacted: int
    errors: list[str]


@dataclass(frozen=True, slots=True)
class ImportState:
    """What earlier imports left: file path -> (bytes, lines) read; project path -> name."""

    offsets: dict[str, tuple[int, int]]
    project_names: dict[str, str]


@dataclass(frozen=True, slots=True)
class PendingSession:
    """A session waiting for distillation; `new_turns` have not been distilled yet, `source` is
    the agent it came from (each distilled memory keeps it as `metadata.agent`)."""

    session_id: str
    source: str
    project: str
    title: str | None
    distill_failures: int
    new_turns: int
    owner_id: int | None = None  # the user whose session it is; distillation acts for them


@dataclass(frozen=True, slots=True)
class StoredTurn:
    """A raw turn as the learning jobs read it."""

    id: int
    role: str
    content: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class DistillOutcome:
    """What storing one session's distilled items did; `memory_ids` are the new memories and
    `links` the (newer, older, reason) supersession links the rules made for them."""

    saved: int
    duplicates: int
    archived: int
    memory_ids: tuple[int, ...] = ()
    links: tuple[tuple[int, int, str], ...] = ()


@dataclass(frozen=True, slots=True)
class LinkPair:
    """A supersession pair put to the model: does `newer` replace the fact `older` states?

    `rule_reason` is the link's reason when the rules linked the pair, None for a pair the
    rules left apart that is close enough to ask about.
    """

    newer_id: int
    newer_text: str
    newer_at: datetime
    older_id: int
    older_text: str
    older_at: datetime
    similarity: float
    rule_reason: str | None


@dataclass(frozen=True, slots=True)
class LinkVerdict:
    """The model's answer for one pair: whether its newer memory replaces the older's fact."""

    pair: LinkPair
    replaces: bool


@dataclass(frozen=True, slots=True)
class LinkReviewOutcome:
    """What the model's verdicts changed. `skipped`: verdicts that could not apply (the pair
    changed since it was read, or the newer memory or the older one is linked already)."""

    confirmed: int = 0
    rejected: int = 0
    added: int = 0
    skipped: int = 0


@dataclass(frozen=True, slots=True)
class SignalOutcome:
    """What storing signal memories did: new, rewritten in place, or left as they were."""

    created: int
    updated: int
    unchanged: int


@dataclass(frozen=True, slots=True)
class SessionTurnRow:
    """A raw turn with the session and project it belongs to, for mining signals."""

    id: int
    session_id: str
    project: str
    role: str
    content: str
    created_at: datetime
    record_uuid: str | None


@dataclass(frozen=True, slots=True)
class EventRow:
    """A stored tool call (table `session_events`)."""

    session_id: str
    project: str
    tool: str
    target: str | None
    success: bool | None
    at: datetime | None


@dataclass(frozen=True, slots=True)
class SignalsInput:
    """What `claude-memory signals` reads: sessions to mine, their turns, their projects' calls."""

    session_ids: list[str]
    projects: list[str]
    turns: list[SessionTurnRow]
    events: list[EventRow]
    project_paths: dict[str, str]
