import { useState } from "react";
import { deleteMemory, errorMessage, getContext, getProjects } from "../api";
import { ConfirmButton } from "../components/ConfirmButton";
import { ContextMemoryList } from "../components/ContextMemoryList";
import { EmptyState } from "../components/EmptyState";
import { ErrorNotice } from "../components/ErrorNotice";
import { Link } from "../components/Link";
import { LoadingNotice } from "../components/LoadingNotice";
import { ProjectField } from "../components/ProjectField";
import { SelectField } from "../components/SelectField";
import { CONTEXT_PERIODS, formatDay, periodDays, shareUsed, times } from "../lib/context";
import { bumpData } from "../lib/dataVersion";
import { formatCount, formatDate } from "../lib/format";
import { routePath, setParams } from "../lib/router";
import { useApi } from "../lib/useApi";
import type { ContextReport, JudgedMemory } from "../types";
import { Figures, type Figure } from "../components/Figures";

export type ContextPageProps = { params: URLSearchParams };

export function contextFigures(report: ContextReport): Figure[] {
  const totals = report.totals;
  return [
    {
      label: "injections",
      value: formatCount(totals.injections),
      title: "times the hooks added memories to an agent's context",
    },
    {
      label: "estimated tokens",
      value: formatCount(totals.tokens),
      title: `${formatCount(totals.chars)} characters, at four characters a token`,
    },
    {
      label: "memories injected",
      value: formatCount(totals.memories),
      title: "counting a memory each time it was injected",
    },
    {
      label: "share used",
      value: shareUsed(totals.used, totals.judged),
      title: `${formatCount(totals.used)} of ${formatCount(totals.judged)} judged injections used`,
    },
    {
      label: "used, then corrected",
      value: formatCount(totals.contradicted),
      title: "used by the agent, then the user's next prompt corrected it",
    },
  ];
}

/** Judged memories as list items, with what `says` counts of each. */
function judgedItems(memories: JudgedMemory[], says: (memory: JudgedMemory) => string) {
  return memories.map((memory) => ({ id: memory.id, preview: memory.preview, note: says(memory) }));
}

/**
 * What the hooks put into agents' context (receipts of every injection) and what the agents
 * used of it (verdicts from the imported transcripts): to retire memories that only cost
 * tokens and review those the user had to correct.
 */
export function ContextPage({ params }: ContextPageProps) {
  const project = params.get("project") ?? "";
  const days = periodDays(params.get("days"));
  const projects = useApi("projects", (signal) => getProjects(signal));
  const context = useApi(`context:${project}:${days}`, (signal) =>
    getContext({ project: project || undefined, days }, signal),
  );
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const [retired, setRetired] = useState<number | null>(null);

  async function retire(id: number) {
    setBusy(true);
    setFailure(null);
    setRetired(null);
    try {
      const memory = await deleteMemory(id);
      setRetired(memory.id);
      bumpData();
    } catch (error) {
      setFailure(errorMessage(error));
    } finally {
      setBusy(false);
    }
  }

  const report = context.data;
  const judged = report?.totals.judged ?? 0;
  const notJudged = "Nothing judged yet.";
  return (
    <section className="page context-page" aria-labelledby="context-title">
      <div className="page-head">
        <h1 id="context-title">Context</h1>
        <ProjectField
          projects={projects.data}
          value={project}
          onChange={(value) => setParams({ project: value || null })}
          emptyLabel="all projects"
        />
        <SelectField
          label="Period"
          value={String(days)}
          onChange={(value) => setParams({ days: value === "30" ? null : value })}
        >
          {CONTEXT_PERIODS.map((period) => (
            <option key={period} value={period}>
              last {period} days
            </option>
          ))}
        </SelectField>
      </div>
      <p className="page-intro">
        What the hooks added to agents&apos; context, and whether the agent used it: each injected
        memory is judged when its session&apos;s transcript is imported. Retire what is never used,
        edit what misleads.
      </p>
      {failure && <ErrorNotice message={failure} />}
      {retired !== null && (
        <p className="notice notice-ok" role="status">
          Retired #{retired}. Restore it from{" "}
          <Link href={routePath({ name: "settings" })}>Settings › Deleted memories</Link>.
        </p>
      )}
      {context.error && <ErrorNotice message={context.error} onRetry={context.reload} />}
      {!report && !context.error && <LoadingNotice label="Adding up the receipts…" />}
      {report && report.totals.injections === 0 && (
        <EmptyState title="Nothing injected yet in this period.">
          <p>
            The hooks keep a receipt each time they add memories to an agent&apos;s context (at
            session start and with each prompt). Connect an agent with{" "}
            <code>claude-memory connect</code>, or choose a longer period.
          </p>
        </EmptyState>
      )}
      {report && report.totals.injections > 0 && (
        <>
          <p className="page-summary">
            Since {formatDate(report.since)}, {report.project ?? "all projects"}:{" "}
            {formatCount(judged)} of {formatCount(report.totals.memories)} injected memories judged
            so far.
          </p>
          <section className="context-totals" aria-label="Totals">
            <Figures figures={contextFigures(report)} />
          </section>
          <section className="panel" aria-labelledby="context-days-title">
            <h2 id="context-days-title">By day and project</h2>
            <div className="table-wrap">
              <table className="sessions">
                <thead>
                  <tr>
                    <th scope="col">Day (UTC)</th>
                    <th scope="col">Project</th>
                    <th scope="col" className="numeric">
                      Injections
                    </th>
                    <th scope="col" className="numeric">
                      Tokens (est.)
                    </th>
                    <th scope="col" className="numeric">
                      Share used
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {report.days.map((day) => (
                    <tr key={`${day.day}:${day.project}`}>
                      <td>
                        <time dateTime={day.day}>{formatDay(day.day)}</time>
                      </td>
                      <td>{day.project || "(no project)"}</td>
                      <td className="numeric">{formatCount(day.injections)}</td>
                      <td className="numeric">{formatCount(day.tokens)}</td>
                      <td
                        className="numeric"
                        title={`${formatCount(day.used)} of ${formatCount(day.judged)} judged`}
                      >
                        {shareUsed(day.used, day.judged)}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </section>
          <ContextMemoryList
            title="Never used"
            hint="Judged unused every time they were injected: they cost tokens and help nothing. Retire one, or open it to make it say something the agent can act on."
            items={judgedItems(report.never_used, (m) => `judged ${times(m.judged)}, never used`)}
            empty={judged ? "None: every judged memory was used at least once." : notJudged}
            actions={(item) => (
              <ConfirmButton
                label="Retire"
                accessibleLabel={`Retire #${item.id}`}
                question={`Retire #${item.id}? It moves to Deleted memories.`}
                confirmLabel="Retire"
                disabled={busy}
                onConfirm={() => retire(item.id)}
              />
            )}
          />
          <ContextMemoryList
            title="Used most"
            hint="What the agent's calls and replies drew on most often."
            items={judgedItems(report.most_used, (m) => `used ${m.count} of ${times(m.judged)}`)}
            empty={judged ? "None of the judged memories was used." : notJudged}
          />
          <ContextMemoryList
            title="Used, then corrected — review"
            hint="The agent used these and the user's next prompt corrected it: they may be wrong or out of date. Open one to edit it."
            items={judgedItems(
              report.contradicted,
              (m) => `corrected ${m.count} of ${times(m.judged)}`,
            )}
            empty={judged ? "None: no correction followed a used memory." : notJudged}
          />
          <ContextMemoryList
            title="Injected most often"
            hint="Judged or not, the memories the hooks injected most."
            items={report.most_injected.map((m) => ({
              id: m.id,
              preview: m.preview,
              note: `injected ${times(m.injections)}`,
            }))}
            empty="None left: the memories injected were deleted since."
          />
        </>
      )}
    </section>
  );
}
