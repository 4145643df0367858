// Search page logic as plain functions: the request sent for the URL's state, how each hit's
// score is shown, and a hit's title and snippet.

import {
  MEMORY_KINDS,
  type MemoryKind,
  SEARCH_MODES,
  type SearchHit,
  type SearchMode,
  type SearchRequest,
} from "../types";
import { firstLine, formatScore } from "./format";
import { snippet } from "./highlight";

export const DEFAULT_MODE: SearchMode = "hybrid";
/** The semantic cut-off measured for the bundled model (server/service/cutoffs.py): below
 * it, almost nothing answers a question; above, ranking orders the hits. */
export const DEFAULT_MIN_SIMILARITY = 0.15;
export const SEARCH_LIMIT = 30;

export type SearchState = {
  query: string;
  mode: SearchMode;
  project: string;
  kind: MemoryKind | "";
  source: string;
  minSimilarity: number;
};

export function searchStateFrom(params: URLSearchParams): SearchState {
  const mode = params.get("mode");
  const kind = params.get("kind");
  const min = Number(params.get("min"));
  return {
    query: params.get("q") ?? "",
    mode: SEARCH_MODES.includes(mode as SearchMode) ? (mode as SearchMode) : DEFAULT_MODE,
    project: params.get("project") ?? "",
    kind: MEMORY_KINDS.includes(kind as MemoryKind) ? (kind as MemoryKind) : "",
    source: params.get("source") ?? "",
    minSimilarity:
      params.has("min") && Number.isFinite(min)
        ? Math.min(1, Math.max(0, min))
        : DEFAULT_MIN_SIMILARITY,
  };
}

/** The body for POST /api/search, or null when there is nothing to search for. */
export function searchRequest(state: SearchState): SearchRequest | null {
  const query = state.query.trim();
  if (!query) return null;
  const request: SearchRequest = { query, mode: state.mode, limit: SEARCH_LIMIT };
  if (state.project) request.project = state.project;
  if (state.kind) request.kind = state.kind;
  if (state.source) request.source = state.source;
  // Keyword search ranks by text match alone; a similarity floor means nothing there.
  if (state.mode !== "keyword") request.min_similarity = state.minSimilarity;
  return request;
}

export type ScoreView = { fraction: number; label: string; name: string; detail: string };

/**
 * How full a hit's bar is and the number beside it. Similarity is already 0..1; keyword and
 * fused scores have no fixed scale, so their bars are relative to the best hit.
 */
export function scoreView(hit: SearchHit, mode: SearchMode, best: number): ScoreView {
  const parts: string[] = [];
  if (hit.similarity !== null) parts.push(`similarity ${formatScore(hit.similarity)}`);
  if (hit.keyword_score !== null) parts.push(`keyword ${formatScore(hit.keyword_score)}`);
  if (hit.fused_score !== null) parts.push(`fused ${formatScore(hit.fused_score)}`);
  const detail = parts.join(" · ");
  if (mode === "semantic") {
    const similarity = hit.similarity ?? hit.score;
    return { fraction: similarity, label: formatScore(similarity), name: "similarity", detail };
  }
  return {
    fraction: best > 0 ? hit.score / best : 0,
    label: formatScore(hit.score),
    name: mode === "keyword" ? "keyword rank" : "fused score",
    detail,
  };
}

export function bestScore(hits: SearchHit[]): number {
  return hits.reduce((best, hit) => Math.max(best, hit.score), 0);
}

export const TITLE_CHARS = 110;

export function hitTitle(hit: SearchHit): string {
  return firstLine(hit.content, TITLE_CHARS) || "(empty)";
}

/**
 * The text under the title, around the first query term: the lines after the title, or the
 * whole content when the title had to cut its line short; empty when the title says it all.
 */
export function hitSnippet(hit: SearchHit, terms: string[]): string {
  const content = hit.content.trim();
  const newline = content.indexOf("\n");
  const first = newline === -1 ? content : content.slice(0, newline);
  const rest = newline === -1 ? "" : content.slice(newline + 1).trim();
  if (first.trim().length > TITLE_CHARS) return snippet(content, terms, 260);
  return rest ? snippet(rest, terms, 260) : "";
}

/** What to suggest when a search finds nothing, given what was asked. */
export function noResultHints(state: SearchState): string[] {
  const hints: string[] = [];
  if (state.mode === "keyword") {
    hints.push("Keyword mode needs the exact words: try semantic or hybrid to match by meaning.");
  } else if (state.minSimilarity > 0) {
    hints.push(`Lower the similarity threshold (now ${state.minSimilarity.toFixed(2)}).`);
  }
  if (state.mode === "semantic")
    hints.push("Try hybrid, which also matches exact words and identifiers.");
  if (state.project) hints.push(`Search all projects, not only ${state.project}.`);
  if (state.kind) hints.push(`Include every kind, not only ${state.kind}.`);
  hints.push("Use fewer or different words.");
  return hints;
}

/**
 * "replaced by #N" for a hit a newer memory superseded (it stays searchable, ranked below its
 * successor by the server), or null for a current one.
 */
export function replacedByLabel(hit: Pick<SearchHit, "superseded_by">): string | null {
  return hit.superseded_by === null ? null : `replaced by #${hit.superseded_by}`;
}
