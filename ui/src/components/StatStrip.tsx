import { formatBytes, formatCount } from "../lib/format";
import type { SessionPage, Stats } from "../types";
import { Figures, type Figure } from "./Figures";

export type StatStripProps = {
  stats: Stats | undefined;
  sessions: SessionPage | undefined;
  error: string | null;
};

export function statFigures(stats: Stats, sessions: SessionPage | undefined): Figure[] {
  return [
    { label: "memories", value: formatCount(stats.active) },
    { label: "deleted", value: formatCount(stats.deleted), title: "soft-deleted, restorable" },
    {
      label: "projects",
      value: formatCount(Object.keys(stats.by_project).filter(Boolean).length),
      title: "memories without a project are not counted as one",
    },
    {
      label: "sessions",
      value: formatCount(sessions?.total ?? stats.sessions.imported),
      title: "imported sessions",
    },
    {
      label: "pending distillation",
      value: formatCount(stats.sessions.pending),
      title: `${formatCount(stats.sessions.failed)} failed, ${formatCount(stats.sessions.distilled)} distilled`,
    },
    {
      label: "storage",
      value: formatBytes(stats.storage.total_bytes),
      title: `table ${formatBytes(stats.storage.table_bytes)}, indexes ${formatBytes(stats.storage.index_bytes)}`,
    },
  ];
}

/** The figures that matter at a glance, all from /api/stats and /api/sessions. */
export function StatStrip({ stats, sessions, error }: StatStripProps) {
  if (!stats) {
    return (
      <section className="stat-strip" aria-label="Statistics">
        <p className="stat-missing">
          {error ? `Statistics unavailable: ${error}` : "Loading statistics…"}
        </p>
      </section>
    );
  }
  return (
    <section className="stat-strip" aria-label="Statistics">
      <Figures figures={statFigures(stats, sessions)} />
    </section>
  );
}
