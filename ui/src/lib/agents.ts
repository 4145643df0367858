// Where memories come from, as filter choices. A source is an agent (its sessions imported or
// its hooks) or a way in (api, mcp, distill...); the server matches an agent's filter against
// what was distilled from its sessions too, so "Codex CLI" keeps Codex's distilled facts.
// The agents' labels come from the server (GET /api/agents), loaded once when the app starts.

import { useCallback, useSyncExternalStore } from "react";
import { getAgents } from "../api";
import type { AgentInfo } from "../types";

export type SourceChoice = { value: string; label: string };
export type SourceLabel = (source: string) => string;

/** Sources that are not agents but have a name for people. */
const OTHER_SOURCES: Record<string, string> = { "claude-ai": "claude.ai" };

let labels: Record<string, string> = OTHER_SOURCES;
const listeners = new Set<() => void>();

/** Take the agents' labels (from GET /api/agents); components showing sources re-render. */
export function setAgents(agents: AgentInfo[]): void {
  labels = { ...OTHER_SOURCES, ...Object.fromEntries(agents.map((a) => [a.name, a.label])) };
  listeners.forEach((listener) => listener());
}

/** Load the agents' labels; until they arrive (or if they cannot), sources show as stored. */
export async function loadAgents(signal?: AbortSignal): Promise<void> {
  try {
    setAgents(await getAgents(signal));
  } catch {
    // Labels are a nicety: the names stay shown as stored.
  }
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function sourceLabel(source: string, known: Record<string, string> = labels): string {
  return known[source] ?? source;
}

/** `sourceLabel` for a component, which re-renders when the agents' labels arrive. */
export function useSourceLabel(): SourceLabel {
  const known = useSyncExternalStore(subscribe, () => labels);
  return useCallback((source: string) => sourceLabel(source, known), [known]);
}

/**
 * Choices for a source filter, most used first, from a count per source (the stats' or the
 * session list's). The current value stays offered even when nothing counts it any more, so
 * the select never shows a filter it cannot display.
 */
export function sourceChoices(
  counts: Record<string, number> | undefined,
  current: string,
  label: SourceLabel = sourceLabel,
): SourceChoice[] {
  const rows = Object.entries(counts ?? {}).filter(([source, n]) => source && n > 0);
  if (current && !rows.some(([source]) => source === current)) rows.push([current, 0]);
  return rows
    .sort(([a, n], [b, m]) => m - n || a.localeCompare(b))
    .map(([source, n]) => ({ value: source, label: `${label(source)} (${n})` }));
}
