import { useState } from "react";
import { errorMessage, getDrifted, getProjects, updateMemory } from "../api";
import { ProjectField } from "../components/ProjectField";
import { EmptyState } from "../components/EmptyState";
import { ErrorNotice } from "../components/ErrorNotice";
import { Link } from "../components/Link";
import { LoadingNotice } from "../components/LoadingNotice";
import { bumpData } from "../lib/dataVersion";
import { formatCount } from "../lib/format";
import { routePath, setParams } from "../lib/router";
import { useApi } from "../lib/useApi";
import { verdictText } from "../lib/verdicts";
import type { DriftedMemory } from "../types";

export type DriftedPageProps = { params: URLSearchParams };

/**
 * A project's memories that its code no longer agrees with (a changed setting or version, a
 * renamed or deleted file), so the user can record the current value or retire them.
 */
export function DriftedPage({ params }: DriftedPageProps) {
  const project = params.get("project") ?? "";
  const projects = useApi("projects", (signal) => getProjects(signal));
  const drifted = useApi(`drifted:${project}`, (signal) =>
    project ? getDrifted(project, signal) : Promise.resolve(null),
  );
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);

  async function record(item: DriftedMemory) {
    setBusy(true);
    setFailure(null);
    setMessage(null);
    try {
      const outcome = await updateMemory(item.memory.id, { current_from: item.cwd });
      setMessage(`Recorded the current value as memory #${outcome.memory.id}.`);
      bumpData();
    } catch (error) {
      setFailure(errorMessage(error));
    } finally {
      setBusy(false);
    }
  }

  const data = drifted.data;
  return (
    <section className="page drifted-page" aria-labelledby="drifted-title">
      <div className="page-head">
        <h1 id="drifted-title">Drifted</h1>
        <ProjectField
          projects={projects.data}
          value={project}
          onChange={(value) => setParams({ project: value || null })}
          emptyLabel="choose a project"
        />
      </div>
      <p className="page-intro">
        Memories the project&apos;s code no longer agrees with, checked against its folder on this
        machine. Record the current value, or open a memory to edit or delete it.
      </p>
      {failure && <ErrorNotice message={failure} />}
      {message && (
        <div className="notice notice-ok" role="status">
          {message}
        </div>
      )}
      {drifted.error && <ErrorNotice message={drifted.error} onRetry={drifted.reload} />}
      {!project && <EmptyState title="Choose a project to check its memories against its code." />}
      {project && !data && !drifted.error && <LoadingNotice label="Checking against the code…" />}
      {data && (
        <p className="page-summary">
          {formatCount(data.checked)} memories name code in{" "}
          {data.folders.length ? data.folders.join(", ") : "no folder on this machine"};{" "}
          {formatCount(data.memories.length)} no longer agree
          {data.unchecked ? `; ${formatCount(data.unchecked)} could not be checked here` : ""}
          {data.complete ? "" : " (the newest checked)"}.
        </p>
      )}
      {data && data.memories.length > 0 && (
        <ul className="drifted-list" aria-label="Memories the code no longer agrees with">
          {data.memories.map((item) => (
            <li key={item.memory.id} className="drifted-item">
              <span className={`badge verdict-badge verdict-badge-${item.verdict}`}>
                {item.verdict}
              </span>{" "}
              <Link href={routePath({ name: "memory", id: item.memory.id })} className="mono">
                #{item.memory.id}
              </Link>{" "}
              <span className="drifted-content">{item.memory.content}</span>
              <span className="drifted-note muted">{verdictText(item.verdict, item.note)}</span>
              {item.can_record && (
                <button
                  type="button"
                  className="button button-small button-primary"
                  disabled={busy}
                  onClick={() => record(item)}
                >
                  Record the current value
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
