// The REST API's JSON shapes, in the server's snake_case (the source: server/core/models.py
// and server/schemas/, from which /api/openapi.json is derived).

export const MEMORY_KINDS = [
  "raw",
  "distilled",
  "note",
  "preference",
  "pattern",
  "behavior",
  "manual",
  "trajectory",
] as const;
export type MemoryKind = (typeof MEMORY_KINDS)[number];

export const SEARCH_MODES = ["semantic", "keyword", "hybrid"] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];

/** On a team's server: private to its owner, or shared with the team in its project. */
export type Visibility = "private" | "shared";

/** Who saved a memory or a search hit, on a server with users (docs/TEAM.md). */
export type Ownership = {
  /** The user who saved it; null on a server without users, or saved before it had any. */
  owner?: string | null;
  /** Always "shared" (and meaningless) on a server without users. */
  visibility?: Visibility;
};

export type Memory = Ownership & {
  id: number;
  content: string;
  content_hash: string;
  kind: MemoryKind;
  tags: string[];
  source: string;
  project: string;
  project_path: string;
  session_id: string | null;
  role: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
  metadata: Record<string, unknown>;
  supersedes: number | null;
  archived_at: string | null;
  /** Why this memory replaced the one it supersedes ("number 20 -> 22", "set by hand"). */
  supersede_reason: string;
  /** The newest live memory that replaces this one, if any. */
  superseded_by: number | null;
};

/** One version of a changed fact, in the chain a memory belongs to (oldest first). */
export type MemoryVersion = {
  id: number;
  created_at: string;
  kind: string;
  preview: string;
  reason: string;
  deleted: boolean;
  current: boolean;
};

export type MemoryPage = {
  total: number;
  limit: number;
  offset: number;
  memories: Memory[];
};

export type SimilarMemory = {
  id: number;
  similarity: number;
  preview: string;
};

export type UpdateOutcome = {
  /** "recorded": the code's current value was saved as a new memory, which `memory` is. */
  status: "updated" | "unchanged" | "noop" | "duplicate" | "recorded";
  memory: Memory;
  similar: SimilarMemory | null;
  redacted: number;
};

export type BulkDeleteResult = {
  dry_run: boolean;
  matched: number;
  deleted: number;
  preview: { id: number; preview: string }[];
};

export type SearchHit = Ownership & {
  id: number;
  content: string;
  kind: string;
  tags: string[];
  source: string;
  project: string;
  project_path: string;
  session_id: string | null;
  created_at: string;
  similarity: number | null;
  keyword_score: number | null;
  fused_score: number | null;
  score: number;
  supersedes: number | null;
  superseded_by: number | null;
  version_note: string | null;
  time_note: string | null;
  rerank_score?: number | null;
};

export type SearchResponse = {
  mode: SearchMode;
  query: string;
  hits: SearchHit[];
  took_ms: number;
  reranked_by?: string | null;
  rerank_skipped?: string | null;
};

export type SearchRequest = {
  query: string;
  mode: SearchMode;
  limit?: number;
  project?: string;
  kind?: MemoryKind;
  source?: string;
  min_similarity?: number;
};

export type RelatedMemory = {
  id: number;
  similarity: number;
  kind: string;
  project: string;
  created_at: string;
  preview: string;
};

/** A coding agent the server knows (GET /api/agents): its name, as a memory's `source`. */
export type AgentInfo = { name: string; label: string };

export type Stats = {
  total: number;
  active: number;
  deleted: number;
  by_project: Record<string, number>;
  by_source: Record<string, number>;
  by_kind: Record<string, number>;
  storage: {
    table_bytes: number;
    index_bytes: number;
    vector_bytes: number;
    total_bytes: number;
  };
  sessions: { imported: number; distilled: number; failed: number; pending: number };
  cache: { size: number; max_size: number; ttl_seconds: number; hits: number; misses: number };
  embedding_model: string;
  embedding_dimension: number;
  embedding_provider: string;
  vectors_waiting: number;
  /** What the hooks injected for you (receipts kept): injections, memory ids, chars, tokens. */
  context: { injections: number; memories: number; chars: number; tokens: number };
};

export type ProjectSummary = {
  project: string;
  project_path: string;
  count: number;
  last_at: string;
};

export type TimelinePoint = {
  id: number;
  project: string;
  created_at: string;
  kind: string;
  length: number;
  title: string;
};

export type TimelineDay = {
  day: string;
  project: string;
  count: number;
};

export type Timeline = {
  total: number;
  truncated: boolean;
  points: TimelinePoint[];
  days: TimelineDay[];
};

export type ImportedSession = {
  session_id: string;
  title: string | null;
  source: string;
  project: string;
  project_path: string;
  file_path: string | null;
  bytes_imported: number;
  lines_imported: number;
  message_count: number;
  first_message_at: string | null;
  last_message_at: string | null;
  imported_at: string;
  distill_state: string;
  distill_failures: number;
  distill_last_error: string | null;
  distilled_at: string | null;
  signals_state: string;
  behavior_state: string;
};

export type SessionPage = {
  total: number;
  limit: number;
  offset: number;
  sessions: ImportedSession[];
  /** Sessions per agent, whatever the list's own source filter. */
  by_source: Record<string, number>;
};

export const PREFERENCE_TIERS = ["explicit", "signals", "inferred"] as const;
export type PreferenceTier = (typeof PREFERENCE_TIERS)[number];

export type Preference = {
  memory: Memory;
  tier: PreferenceTier;
  confidence: number;
  /** `confidence` as the whole percent to show, rounded by the server (core/percent.py). */
  confidence_percent: number;
  evidence_sessions: number;
  last_seen: string;
  confirmed: boolean;
  superseded_by: number | null;
};

export type PreferenceTiers = Record<PreferenceTier, Preference[]>;

export type Health = {
  status: "ok" | "degraded";
  database: "ok" | "unavailable";
  database_kind: "embedded" | "external";
  embedding_provider: "local" | "openai";
  embedding_model: string;
  embedding_dimension: number;
  embeddings: "ok" | "unavailable";
  /** Memories saved while the embeddings endpoint was down, not yet embedded. */
  vectors_waiting: number | null;
  version: string;
};

export type ErrorBody = {
  error: { code: string; message: string };
};

/** One tool call in the journal: what it acted on and how it went. */
export type JournalCall = {
  tool_use_id: string;
  tool: string;
  target: string | null;
  success: boolean | null;
  error: string | null;
  output_preview: string | null;
  at: string | null;
  agent_id: string | null;
};

/** A prompt and the calls that followed it (oldest first); prompt is null when unknown. */
export type JournalEntry = {
  session_id: string;
  project: string;
  prompt_key: string | null;
  prompt: string | null;
  at: string | null;
  calls: JournalCall[];
};

export type JournalPage = { entries: JournalEntry[]; calls: number; truncated: boolean };

export const LESSON_STRICTNESS = ["warn", "ask"] as const;
/** warn: the agent is told before the call; ask: Claude Code also asks the user first. */
export type LessonStrictness = (typeof LESSON_STRICTNESS)[number];

/** A reminder shown to the agent before a tool call whose input matches `pattern`. */
export type Lesson = {
  id: number;
  /** The tool it applies to (Bash, Edit, ...); "" for any tool. */
  tool: string;
  /** A regular expression, matched case-insensitively anywhere in the call's input. */
  pattern: string;
  /** "" for every project. */
  project: string;
  message: string;
  strictness: LessonStrictness;
  /** Who wrote it: user, agent, or `journal:<session id>` / `correction:<session id>` when it
   * was proposed from that session's journal. */
  origin: string;
  active: boolean;
  created_at: string;
  updated_at: string;
  /** Proposed from the journal and not yet accepted (enabled) or dismissed (disabled). */
  proposed: boolean;
};

export type LessonList = { lessons: Lesson[] };

/** POST /api/lessons; absent fields take the server's defaults ("" tool and project, warn). */
export type NewLesson = {
  pattern: string;
  message: string;
  tool?: string;
  project?: string;
  strictness?: LessonStrictness;
  origin?: string;
};

/** One thing a memory names that the code can confirm. */
export type Anchor = {
  kind: "path" | "symbol" | "setting" | "version";
  name: string;
  value: string | null;
};

/** A memory checked against the code in `cwd` (its project's folder by default). */
export type CodeCheck = {
  memory_id: number;
  cwd: string | null;
  verdict: "fresh" | "drifted" | "orphaned" | "unchecked";
  note: string | null;
  anchors: Anchor[];
  can_record: boolean;
};

/** A project's memory the code no longer agrees with. */
export type DriftedMemory = {
  memory: Memory;
  /** The folder it was checked against. */
  cwd: string;
  verdict: "drifted" | "orphaned";
  note: string;
  can_record: boolean;
};

/** A project's memories checked against its folder. */
export type DriftedList = {
  project: string;
  /** The folders checked (each memory against its own project path). */
  folders: string[];
  checked: number;
  /** Memories naming code whose folder is not on this machine. */
  unchecked: number;
  complete: boolean;
  memories: DriftedMemory[];
};

/** GET /api/context: counts over the period's receipts (a memory injected twice counts twice). */
export type ContextTotals = {
  injections: number;
  /** Memories injected, counting repeats. */
  memories: number;
  chars: number;
  /** Estimated: four characters a token. */
  tokens: number;
  /** Of those memories, how many were judged (their session imported)... */
  judged: number;
  /** ...judged used... */
  used: number;
  /** ...and used, then corrected by the user's next prompt. */
  contradicted: number;
};

/** What the hooks injected on one day (UTC) into one project's sessions. */
export type ContextDay = {
  /** YYYY-MM-DD */
  day: string;
  project: string;
  injections: number;
  memories: number;
  tokens: number;
  judged: number;
  used: number;
};

export type InjectedMemory = { id: number; injections: number; preview: string };

/** `count` of the memory's `judged` injections were judged the way its list says. */
export type JudgedMemory = { id: number; judged: number; count: number; preview: string };

export type ContextReport = {
  since: string;
  project: string | null;
  totals: ContextTotals;
  /** Newest day first. */
  days: ContextDay[];
  most_injected: InjectedMemory[];
  /** Judged unused every time (count == judged): to retire or edit. */
  never_used: JudgedMemory[];
  /** count: times judged used. */
  most_used: JudgedMemory[];
  /** Used, then the user corrected the agent: to review. */
  contradicted: JudgedMemory[];
};

/** One line of promote's section in an instruction file, and why it is proposed (#58). */
export type PromoteChange = {
  action: "add" | "change" | "remove" | "keep";
  /** The memory the line carries (for a change, the successor); null for a hand-written line. */
  memory_id: number | null;
  /** The line's text; null for a removal. */
  text: string | null;
  /** The text the line had (change, remove). */
  old_text: string | null;
  reason: string;
  old_memory_id?: number | null;
  uses?: number;
  /** Who the line's words come from: "the user", "an agent", "an import", "a teammate (bob)"
   * or "the file" (a line promote did not write there, left as it is). */
  source?: string;
};

export type PromoteFile = {
  path: string;
  name: string;
  exists: boolean;
  /** The file does not exist and would be created (AGENTS.md, when the repository has none). */
  creates: boolean;
  /** Unified diff of the file with every proposed change written. */
  diff: string;
  changes: PromoteChange[];
};

/** GET /api/promote: what memory proposes for a project's instruction files. */
export type PromoteProposal = {
  project: string;
  root: string;
  files: PromoteFile[];
  /** Memories that earned a line but did not fit the section's budget. */
  left_out: number;
};

export type PromoteRequest = {
  project: string;
  cwd: string | null;
  accept: number[];
  reject: number[];
};

/** POST /api/promote: the files written (each with the backup kept beside it first). */
export type PromoteResult = {
  written: { path: string; backup: string | null }[];
  files: PromoteFile[];
  left_out?: number;
};
