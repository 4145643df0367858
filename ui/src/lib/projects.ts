// Projects as filter choices. The API lists one row per (name, path); filters take the name,
// so rows that share a name are merged. Memories without a project can't be filtered for
// (an empty filter means "any"), so they are not offered as a choice.

import type { ProjectSummary } from "../types";

export type ProjectChoice = { project: string; count: number };

export function projectChoices(projects: ProjectSummary[] | undefined): ProjectChoice[] {
  const counts = new Map<string, number>();
  for (const row of projects ?? []) {
    if (!row.project) continue;
    counts.set(row.project, (counts.get(row.project) ?? 0) + row.count);
  }
  return [...counts]
    .map(([project, count]) => ({ project, count }))
    .sort((a, b) => b.count - a.count || a.project.localeCompare(b.project));
}
