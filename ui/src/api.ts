// The one module that talks to the server: one typed function per endpoint.
//
// Every request carries the bearer token kept in sessionStorage, if there is one. A 401 asks
// the user for the token through the prompt the app registers (one prompt at a time, shared
// by every request waiting on it), stores it and retries. Failures become ApiError with the
// server's own message from {"error": {"code", "message"}}.

import type {
  AgentInfo,
  BulkDeleteResult,
  CodeCheck,
  ContextReport,
  DriftedList,
  Health,
  JournalPage,
  Lesson,
  LessonList,
  Memory,
  MemoryVersion,
  MemoryPage,
  NewLesson,
  PreferenceTiers,
  ProjectSummary,
  PromoteProposal,
  PromoteRequest,
  PromoteResult,
  RelatedMemory,
  SearchRequest,
  SearchResponse,
  SessionPage,
  Stats,
  Timeline,
  UpdateOutcome,
} from "./types";

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;

  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
  }
}

export function isAbort(error: unknown): boolean {
  return error instanceof DOMException && error.name === "AbortError";
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

// ---- bearer token -------------------------------------------------------------------------

export const TOKEN_STORAGE_KEY = "claude-memory.token";

/** Why the token is asked for: none was stored, or the stored one was refused. */
export type TokenReason = "required" | "refused";
/** Resolves to the token the user entered, or null if they cancelled. */
export type TokenPrompt = (reason: TokenReason) => Promise<string | null>;

let tokenPrompt: TokenPrompt | null = null;
let pendingPrompt: Promise<string | null> | null = null;

export function storedToken(): string | null {
  try {
    return sessionStorage.getItem(TOKEN_STORAGE_KEY);
  } catch {
    return null;
  }
}

export function storeToken(token: string | null): void {
  try {
    if (token) sessionStorage.setItem(TOKEN_STORAGE_KEY, token);
    else sessionStorage.removeItem(TOKEN_STORAGE_KEY);
  } catch {
    // Storage can be disabled; the token then lasts as long as this request.
  }
}

export function setTokenPrompt(prompt: TokenPrompt | null): void {
  tokenPrompt = prompt;
}

function askForToken(reason: TokenReason): Promise<string | null> {
  if (!pendingPrompt) {
    const asked = tokenPrompt ? tokenPrompt(reason) : Promise.resolve(null);
    pendingPrompt = asked.finally(() => {
      pendingPrompt = null;
    });
  }
  return pendingPrompt;
}

// ---- transport ----------------------------------------------------------------------------

type QueryValue = string | number | boolean | null | undefined;
export type Query = Record<string, QueryValue>;

export function withQuery(path: string, query?: Query): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === "") continue;
    params.set(name, String(value));
  }
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

function withToken(init: RequestInit, token: string | null): RequestInit {
  const headers = new Headers(init.headers);
  if (token) headers.set("Authorization", `Bearer ${token}`);
  else headers.delete("Authorization");
  return { ...init, headers };
}

const MAX_TOKEN_ATTEMPTS = 5;

/** fetch() with the bearer token, asking for a token on 401 and retrying with it. */
export async function authorizedFetch(path: string, init: RequestInit = {}): Promise<Response> {
  let token = storedToken();
  for (let attempt = 0; attempt < MAX_TOKEN_ATTEMPTS; attempt++) {
    const response = await fetch(path, withToken(init, token));
    if (response.status !== 401) return response;
    const current = storedToken();
    if (current && current !== token) {
      // Another request already got a new token from the user while this one was in flight.
      token = current;
      continue;
    }
    if (token) storeToken(null);
    const entered = await askForToken(token ? "refused" : "required");
    if (!entered) throw await errorFrom(response);
    storeToken(entered);
    token = entered;
  }
  throw new ApiError(401, "unauthorized", "the server refused the token");
}

async function errorFrom(response: Response): Promise<ApiError> {
  const fallback = `${response.status} ${response.statusText}`.trim();
  let text = "";
  try {
    text = await response.text();
  } catch {
    return new ApiError(response.status, "http_error", fallback);
  }
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    const code = typeof body.error?.code === "string" ? body.error.code : "http_error";
    const message = typeof body.error?.message === "string" ? body.error.message : fallback;
    return new ApiError(response.status, code, message);
  } catch {
    return new ApiError(response.status, "http_error", text.trim().slice(0, 200) || fallback);
  }
}

type Options = {
  query?: Query;
  body?: unknown;
  signal?: AbortSignal;
};

async function request<T>(method: string, path: string, options: Options = {}): Promise<T> {
  const init: RequestInit = { method, signal: options.signal, headers: {} };
  if (options.body !== undefined) {
    init.headers = { "Content-Type": "application/json" };
    init.body = JSON.stringify(options.body);
  }
  const response = await authorizedFetch(withQuery(path, options.query), init);
  if (!response.ok) throw await errorFrom(response);
  return (await response.json()) as T;
}

// ---- endpoints ----------------------------------------------------------------------------

export type HealthReading = { health: Health; rttMs: number };

/** /health, with the measured round trip; a 503 with a health body is a reading, not an error. */
export async function getHealth(signal?: AbortSignal): Promise<HealthReading> {
  const started = performance.now();
  const response = await authorizedFetch("/health", { signal });
  const rttMs = performance.now() - started;
  if (response.ok || response.status === 503) {
    const body = (await response.json().catch(() => null)) as Health | null;
    if (body && typeof body.status === "string") return { health: body, rttMs };
  }
  throw await errorFrom(response);
}

export const getStats = (signal?: AbortSignal) => request<Stats>("GET", "/api/stats", { signal });

export const getAgents = (signal?: AbortSignal) =>
  request<AgentInfo[]>("GET", "/api/agents", { signal });

export const getProjects = (signal?: AbortSignal) =>
  request<ProjectSummary[]>("GET", "/api/projects", { signal });

export type TimelineQuery = { since?: string; project?: string; source?: string; limit?: number };

export const getTimeline = (query: TimelineQuery, signal?: AbortSignal) =>
  request<Timeline>("GET", "/api/timeline", { query, signal });

export const searchMemories = (body: SearchRequest, signal?: AbortSignal) =>
  request<SearchResponse>("POST", "/api/search", { body, signal });

export const getMemory = (id: number, signal?: AbortSignal) =>
  request<Memory>("GET", `/api/memories/${id}`, { signal });

export type MemoryListQuery = {
  project?: string;
  session_id?: string;
  include_archived?: boolean;
  only_deleted?: boolean;
  limit?: number;
  offset?: number;
};

export const listMemories = (query: MemoryListQuery, signal?: AbortSignal) =>
  request<MemoryPage>("GET", "/api/memories", { query, signal });

/** `supersedes`: the id of the older memory this one replaces; 0 removes the link. */
export type MemoryChanges = {
  content?: string;
  tags?: string[];
  supersedes?: number;
  force?: boolean;
  /** A working folder: record what the code there says now, as a new memory (sent alone). */
  current_from?: string;
};

export const updateMemory = (id: number, changes: MemoryChanges) =>
  request<UpdateOutcome>("PATCH", `/api/memories/${id}`, { body: changes });

export const deleteMemory = (id: number) => request<Memory>("DELETE", `/api/memories/${id}`);

export const purgeMemory = (id: number) =>
  request<{ purged_id: number }>("DELETE", `/api/memories/${id}`, { query: { purge: true } });

export const restoreMemory = (id: number) => request<Memory>("POST", `/api/memories/${id}/restore`);

export const getRelated = (id: number, limit: number, signal?: AbortSignal) =>
  request<RelatedMemory[]>("GET", `/api/memories/${id}/related`, { query: { limit }, signal });

export const checkMemory = (id: number, signal?: AbortSignal) =>
  request<CodeCheck>("GET", `/api/memories/${id}/check`, { signal });

export const getDrifted = (project: string, signal?: AbortSignal) =>
  request<DriftedList>("GET", "/api/drifted", { query: { project }, signal });

export const getVersions = (id: number, signal?: AbortSignal) =>
  request<MemoryVersion[]>("GET", `/api/memories/${id}/versions`, { signal });

export type BulkDeleteTarget = { project: string } | { all: true };

/** Soft-delete a project's memories or all of them; a dry run unless `dryRun` is false. */
export const bulkDelete = (target: BulkDeleteTarget, dryRun: boolean) =>
  request<BulkDeleteResult>("DELETE", "/api/memories", {
    query: { ...target, dry_run: dryRun },
  });

export const getPreferences = (project: string | undefined, signal?: AbortSignal) =>
  request<PreferenceTiers>("GET", "/api/preferences", { query: { project }, signal });

export const lockPreference = (id: number, locked: boolean) =>
  request<Memory>("POST", `/api/memories/${id}/lock`, { body: { locked } });

export type ContextQuery = { project?: string; days?: number; top?: number };

/** What the hooks injected over the last `days` days and what the agent used of it. */
export const getContext = (query: ContextQuery, signal?: AbortSignal) =>
  request<ContextReport>("GET", "/api/context", { query, signal });

/** Lessons newest first, disabled ones included; with a project, its own and the general ones. */
export const getLessons = (project: string | undefined, signal?: AbortSignal) =>
  request<LessonList>("GET", "/api/lessons", { query: { project }, signal });

export const addLesson = (lesson: NewLesson) =>
  request<Lesson>("POST", "/api/lessons", { body: lesson });

/** Disable a lesson (agents stop seeing it) or enable it again. */
export const setLessonActive = (id: number, active: boolean) =>
  request<Lesson>("PATCH", `/api/lessons/${id}`, { body: { active } });

/** What promote proposes for the project's instruction files (nothing is written). */
export const getPromotion = (project: string, signal?: AbortSignal) =>
  request<PromoteProposal>("GET", "/api/promote", { query: { project }, signal });

/** Write the accepted changes (a backup beside each file first); rejected lines stay declined. */
export const writePromotion = (body: PromoteRequest) =>
  request<PromoteResult>("POST", "/api/promote", { body });

export type SessionQuery = { limit: number; offset: number; source?: string };

export const getSessions = (query: SessionQuery, signal?: AbortSignal) =>
  request<SessionPage>("GET", "/api/sessions", { query, signal });

/** The journal of one session: its prompts and the tool calls under each, newest first. */
export const getSessionJournal = (sessionId: string, limit: number, signal?: AbortSignal) =>
  request<JournalPage>("GET", "/api/journal", {
    query: { session_id: sessionId, limit },
    signal,
  });

export const resetFailures = (sessionId?: string) =>
  request<{ reset: number }>("POST", "/api/sessions/reset-failures", {
    body: sessionId ? { session: sessionId } : {},
  });

export type ExportFormat = "json" | "markdown";

export const exportUrl = (format: ExportFormat) => withQuery("/api/export", { format });

/** The export as a file, through the token-carrying fetch (a plain link cannot send it). */
export async function downloadExport(format: ExportFormat): Promise<Blob> {
  const response = await authorizedFetch(exportUrl(format));
  if (!response.ok) throw await errorFrom(response);
  return response.blob();
}
