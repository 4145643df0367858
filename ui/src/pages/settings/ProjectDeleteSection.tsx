import { useState } from "react";
import { bulkDelete, errorMessage, getProjects } from "../../api";
import { ProjectField } from "../../components/ProjectField";
import { ErrorNotice } from "../../components/ErrorNotice";
import { bumpData } from "../../lib/dataVersion";
import { formatCount } from "../../lib/format";
import { useApi } from "../../lib/useApi";
import type { BulkDeleteResult } from "../../types";

type Step =
  | { name: "choose" }
  | { name: "checked"; project: string; dryRun: BulkDeleteResult }
  | { name: "done"; project: string; result: BulkDeleteResult; expected: number };

/** Delete a project's memories: a dry run shows the count first, then the real soft delete. */
export function ProjectDeleteSection() {
  const projects = useApi("projects", (signal) => getProjects(signal));
  const [project, setProject] = useState("");
  const [step, setStep] = useState<Step>({ name: "choose" });
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);

  async function run<T>(work: () => Promise<T>, next: (value: T) => Step) {
    setBusy(true);
    setFailure(null);
    try {
      setStep(next(await work()));
    } catch (error) {
      setFailure(errorMessage(error));
    } finally {
      setBusy(false);
    }
  }

  const check = () =>
    run(
      () => bulkDelete({ project }, true),
      (dryRun): Step => ({ name: "checked", project, dryRun }),
    );
  const confirm = (chosen: string, expected: number) =>
    run(
      () => bulkDelete({ project: chosen }, false),
      (result): Step => {
        bumpData();
        return { name: "done", project: chosen, result, expected };
      },
    );

  return (
    <section className="panel" aria-labelledby="project-delete-title">
      <h2 id="project-delete-title">Delete a project</h2>
      <p>Soft-deletes every memory of one project. They stay restorable below until purged.</p>
      <div className="row-actions">
        <ProjectField
          projects={projects.data}
          value={project}
          onChange={(value) => {
            setProject(value);
            setStep({ name: "choose" });
          }}
          emptyLabel="choose a project…"
          withCounts
        />
        <button type="button" className="button" disabled={!project || busy} onClick={check}>
          Count its memories
        </button>
      </div>
      {projects.error && <ErrorNotice message={projects.error} onRetry={projects.reload} />}
      {failure && <ErrorNotice message={failure} />}
      {step.name === "checked" && (
        <div className="confirm-box" role="group" aria-label="Confirm project delete">
          <p>
            <strong data-testid="matched-count">{formatCount(step.dryRun.matched)}</strong>{" "}
            {step.dryRun.matched === 1 ? "memory" : "memories"} in <strong>{step.project}</strong>{" "}
            will be deleted.
          </p>
          {step.dryRun.preview.length > 0 && (
            <ul className="preview-list">
              {step.dryRun.preview.map((item) => (
                <li key={item.id}>
                  <span className="mono">#{item.id}</span> {item.preview}
                </li>
              ))}
            </ul>
          )}
          <div className="row-actions">
            <button
              type="button"
              className="button button-danger"
              disabled={busy || step.dryRun.matched === 0}
              onClick={() => confirm(step.project, step.dryRun.matched)}
            >
              Delete {formatCount(step.dryRun.matched)}{" "}
              {step.dryRun.matched === 1 ? "memory" : "memories"}
            </button>
            <button type="button" className="button" onClick={() => setStep({ name: "choose" })}>
              Cancel
            </button>
          </div>
        </div>
      )}
      {step.name === "done" && (
        <p className="notice notice-ok" role="status">
          Deleted {formatCount(step.result.deleted)}{" "}
          {step.result.deleted === 1 ? "memory" : "memories"} of {step.project}.
          {step.result.deleted !== step.expected &&
            ` (${formatCount(step.expected)} were counted before; the project changed in between.)`}
        </p>
      )}
    </section>
  );
}
