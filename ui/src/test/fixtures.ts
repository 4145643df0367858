// Small values in the API's shapes, for tests.

import type { Lesson, Memory, Preference, SearchHit, Stats, TimelinePoint } from "../types";

export function memory(overrides: Partial<Memory> = {}): Memory {
  return {
    id: 1,
    content: "This repository uses pnpm, never npm.",
    content_hash: "hash",
    kind: "preference",
    tags: [],
    source: "api",
    project: "acme-api",
    project_path: "/home/dev/acme-api",
    session_id: null,
    role: null,
    created_at: "2026-04-14T09:00:00+00:00",
    updated_at: "2026-04-14T09:00:00+00:00",
    deleted_at: null,
    metadata: {},
    supersedes: null,
    archived_at: null,
    supersede_reason: "",
    superseded_by: null,
    ...overrides,
  };
}

export function preference(overrides: Partial<Preference> = {}): Preference {
  return {
    memory: memory(),
    tier: "explicit",
    confidence: 0.9,
    confidence_percent: 90,
    evidence_sessions: 0,
    last_seen: "2026-04-14T09:00:00+00:00",
    confirmed: false,
    superseded_by: null,
    ...overrides,
  };
}

export function hit(overrides: Partial<SearchHit> = {}): SearchHit {
  return {
    id: 1,
    content: "This repository uses pnpm, never npm.",
    kind: "preference",
    tags: [],
    source: "api",
    project: "acme-api",
    project_path: "/home/dev/acme-api",
    session_id: null,
    created_at: "2026-04-14T09:00:00+00:00",
    similarity: 0.61,
    keyword_score: null,
    fused_score: null,
    score: 0.61,
    supersedes: null,
    superseded_by: null,
    version_note: null,
    time_note: null,
    ...overrides,
  };
}

export function point(overrides: Partial<TimelinePoint> = {}): TimelinePoint {
  return {
    id: 1,
    project: "acme-api",
    created_at: "2026-04-14T09:00:00+00:00",
    kind: "raw",
    length: 120,
    title: "Add cursor-based pagination",
    ...overrides,
  };
}

export function stats(overrides: Partial<Stats> = {}): Stats {
  return {
    total: 60,
    active: 54,
    deleted: 6,
    by_project: { "acme-api": 38, "acme.web_ui": 6, "": 10 },
    by_source: { "claude-code": 40 },
    by_kind: { raw: 40 },
    storage: {
      table_bytes: 400_000,
      index_bytes: 200_000,
      vector_bytes: 80_000,
      total_bytes: 614_400,
    },
    sessions: { imported: 4, distilled: 1, failed: 1, pending: 2 },
    cache: { size: 1, max_size: 100, ttl_seconds: 60, hits: 1, misses: 1 },
    embedding_model: "all-MiniLM-L6-v2",
    embedding_dimension: 384,
    embedding_provider: "local",
    vectors_waiting: 0,
    context: { injections: 0, memories: 0, chars: 0, tokens: 0 },
    ...overrides,
  };
}

export function lesson(overrides: Partial<Lesson> = {}): Lesson {
  return {
    id: 1,
    tool: "Bash",
    pattern: "staging",
    project: "acme-api",
    message: "Don't run load tests against staging: use the local stack.",
    strictness: "warn",
    origin: "user",
    active: true,
    created_at: "2026-04-14T09:00:00+00:00",
    updated_at: "2026-04-14T09:00:00+00:00",
    proposed: false,
    ...overrides,
  };
}
