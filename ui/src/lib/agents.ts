// Where memories come from, as filter choices. A source is an agent (its sessions imported or
// its hooks) or a way in (api, mcp, distill...); the server matches an agent's filter against
// what was distilled from its sessions too, so "Codex CLI" keeps Codex's distilled facts.

export type SourceChoice = { value: string; label: string };

/** Display names of the agents the importers and hooks know; other sources show as stored. */
const AGENT_NAMES: Record<string, string> = {
  "claude-code": "Claude Code",
  codex: "Codex CLI",
  gemini: "Gemini CLI",
  opencode: "OpenCode",
  "claude-ai": "claude.ai",
};

export function sourceLabel(source: string): string {
  return AGENT_NAMES[source] ?? source;
}

/**
 * Choices for a source filter, most used first, from a count per source (the stats' or the
 * session list's). The current value stays offered even when nothing counts it any more, so
 * the select never shows a filter it cannot display.
 */
export function sourceChoices(
  counts: Record<string, number> | undefined,
  current: string,
): SourceChoice[] {
  const rows = Object.entries(counts ?? {}).filter(([source, n]) => source && n > 0);
  if (current && !rows.some(([source]) => source === current)) rows.push([current, 0]);
  return rows
    .sort(([a, n], [b, m]) => m - n || a.localeCompare(b))
    .map(([source, n]) => ({ value: source, label: `${sourceLabel(source)} (${n})` }));
}
