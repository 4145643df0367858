import { useMemo, useRef } from "react";
import { getProjects, getStats, getTimeline } from "../api";
import { EmptyState } from "../components/EmptyState";
import { ErrorNotice } from "../components/ErrorNotice";
import { type ChipOption, FilterChips } from "../components/FilterChips";
import { KindLegend } from "../components/KindLegend";
import { LoadingNotice } from "../components/LoadingNotice";
import { SelectField } from "../components/SelectField";
import { SourceField } from "../components/SourceField";
import { TimelineRiver } from "../components/TimelineRiver";
import { useSourceLabel } from "../lib/agents";
import { formatCount } from "../lib/format";
import { projectChoices } from "../lib/projects";
import { idParam, setParams } from "../lib/router";
import { isRangeKey, layoutTimeline, RANGES, type RangeKey } from "../lib/timeline";
import { useApi } from "../lib/useApi";
import { useElementWidth } from "../lib/useElementWidth";
import type { ProjectSummary } from "../types";

/** Points asked for: the endpoint returns at most this many newest memories, whatever the total. */
export const TIMELINE_POINTS = 2000;
const PROJECT_CHIPS = 8;

export type TimelinePageProps = { params: URLSearchParams };

export function projectChips(
  projects: ProjectSummary[] | undefined,
  current: string,
): ChipOption[] {
  const choices = projectChoices(projects);
  const shown = choices.slice(0, PROJECT_CHIPS);
  if (current && !shown.some((choice) => choice.project === current)) {
    shown.push(
      choices.find((choice) => choice.project === current) ?? { project: current, count: 0 },
    );
  }
  return [
    { value: "", label: "All projects" },
    ...shown.map((choice) => ({
      value: choice.project,
      label: choice.project,
      count: choice.count,
    })),
  ];
}

export function TimelinePage({ params }: TimelinePageProps) {
  const sourceLabel = useSourceLabel();
  const rawRange = params.get("range");
  const range: RangeKey = isRangeKey(rawRange) ? rawRange : "all";
  const project = params.get("project") ?? "";
  const source = params.get("source") ?? "";
  const selectedId = idParam(params);

  const box = useRef<HTMLDivElement>(null);
  const width = useElementWidth(box);
  const projects = useApi("projects", (signal) => getProjects(signal));
  const stats = useApi("stats", (signal) => getStats(signal), { keepPrevious: true });
  const timeline = useApi(
    `timeline:${range}:${project}:${source}`,
    async (signal) => {
      const data = await getTimeline(
        {
          since: range === "all" ? undefined : range,
          project: project || undefined,
          source: source || undefined,
          limit: TIMELINE_POINTS,
        },
        signal,
      );
      return { data, loadedAt: Date.now() };
    },
    { keepPrevious: true },
  );

  const layout = useMemo(
    () =>
      timeline.data
        ? layoutTimeline(timeline.data.data, { width, range, now: timeline.data.loadedAt })
        : null,
    [timeline.data, width, range],
  );
  const kinds = useMemo(
    () => [...new Set(timeline.data?.data.points.map((p) => p.kind) ?? [])].sort(),
    [timeline.data],
  );
  const data = timeline.data?.data;
  const choices = projectChoices(projects.data);
  const moreProjects = choices.length > PROJECT_CHIPS;

  return (
    <section className="page timeline-page" aria-labelledby="timeline-title">
      <div className="page-head">
        <h1 id="timeline-title">Timeline</h1>
        {data && (
          <p className="page-summary" role="status">
            {data.truncated
              ? `Showing the newest ${formatCount(data.points.length)} of ${formatCount(data.total)} memories; the river counts all of them.`
              : `${formatCount(data.total)} ${data.total === 1 ? "memory" : "memories"}`}
            {timeline.loading && " · updating…"}
          </p>
        )}
      </div>
      <div className="toolbar">
        <FilterChips
          label="Range"
          options={RANGES.map((r) => ({ value: r.key, label: r.label }))}
          value={range}
          onChange={(value) => setParams({ range: value === "all" ? null : value })}
        />
        <FilterChips
          label="Project"
          options={projectChips(projects.data, project)}
          value={project}
          onChange={(value) => setParams({ project: value || null })}
        />
        {moreProjects && (
          <SelectField
            label="All projects"
            value={project}
            onChange={(value) => setParams({ project: value || null })}
          >
            <option value="">any</option>
            {choices.map((choice) => (
              <option key={choice.project} value={choice.project}>
                {choice.project} ({choice.count})
              </option>
            ))}
          </SelectField>
        )}
        <SourceField
          counts={stats.data?.by_source}
          value={source}
          onChange={(value) => setParams({ source: value || null })}
        />
      </div>
      {projects.error && <ErrorNotice message={projects.error} onRetry={projects.reload} />}
      <div className="river-box" ref={box}>
        {timeline.error && <ErrorNotice message={timeline.error} onRetry={timeline.reload} />}
        {!data && !timeline.error && <LoadingNotice label="Loading the timeline…" />}
        {data && data.total === 0 && (
          <EmptyState
            title={
              range !== "all"
                ? `No memories in the last ${RANGES.find((r) => r.key === range)?.label}.`
                : source
                  ? `No memories from ${sourceLabel(source)}.`
                  : "No memories yet."
            }
          >
            {range === "all" && !source ? (
              <p>
                Import your agent sessions with <code>claude-memory import</code>, or save one
                through the MCP tools or <code>POST /api/memories</code>.
              </p>
            ) : (
              <p>
                Try {range === "all" ? "another agent" : "a longer range or “All”"}
                {project ? ", or all projects" : ""}
                {range !== "all" && source ? ", or every agent" : ""}.
              </p>
            )}
          </EmptyState>
        )}
        {layout && data && data.total > 0 && (
          <TimelineRiver
            layout={layout}
            selectedId={selectedId}
            onSelect={(id) => setParams({ memory: String(id) }, { replace: false })}
          />
        )}
      </div>
      {data && data.total > 0 && <KindLegend kinds={kinds} />}
      {data && data.total > 0 && (
        <p className="hint">
          Click a dot, or Tab to the river and use the arrow keys and Enter, to open a memory.
        </p>
      )}
    </section>
  );
}
