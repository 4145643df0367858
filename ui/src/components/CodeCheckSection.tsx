import { useState } from "react";
import { checkMemory, errorMessage, updateMemory } from "../api";
import { bumpData } from "../lib/dataVersion";
import { useApi } from "../lib/useApi";
import { verdictText } from "../lib/verdicts";
import type { Memory } from "../types";
import { ErrorNotice } from "./ErrorNotice";

export type CodeCheckSectionProps = {
  memory: Memory;
  onNavigate: (id: number) => void;
};

/**
 * What this memory names in the code (files, symbols, settings, versions) and whether the code
 * in its project's folder still agrees; a drifted memory can be brought up to date in one
 * step, as a new memory that supersedes this one.
 */
export function CodeCheckSection({ memory, onNavigate }: CodeCheckSectionProps) {
  const check = useApi(`check:${memory.id}:${memory.content_hash}`, (signal) =>
    checkMemory(memory.id, signal),
  );
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const headingId = `code-check-${memory.id}`;
  const result = check.data;

  async function record(cwd: string) {
    setBusy(true);
    setFailure(null);
    try {
      const outcome = await updateMemory(memory.id, { current_from: cwd });
      bumpData();
      onNavigate(outcome.memory.id);
    } catch (error) {
      setFailure(errorMessage(error));
    } finally {
      setBusy(false);
    }
  }

  if (result && result.anchors.length === 0) return null; // names nothing the code can confirm
  return (
    <section className="code-check" aria-labelledby={headingId}>
      <h3 id={headingId}>In the code</h3>
      {check.error && <ErrorNotice message={check.error} onRetry={check.reload} />}
      {failure && <ErrorNotice message={failure} />}
      {result && (
        <>
          <p className={`verdict verdict-${result.verdict}`} role="status">
            <span className={`badge verdict-badge verdict-badge-${result.verdict}`}>
              {result.verdict}
            </span>{" "}
            {verdictText(result.verdict, result.note)}
          </p>
          {writtenOn(memory.metadata) && (
            <p className="muted written-on">{writtenOn(memory.metadata)}</p>
          )}
          <ul className="anchor-list" aria-label="What it names">
            {result.anchors.map((anchor) => (
              <li key={`${anchor.kind}:${anchor.name}`}>
                <span className="muted">{anchor.kind}</span> <code>{anchor.name}</code>
                {anchor.value !== null && (
                  <>
                    {" "}
                    = <code>{anchor.value}</code>
                  </>
                )}
              </li>
            ))}
          </ul>
          {result.can_record && result.cwd && memory.deleted_at === null && (
            <button
              type="button"
              className="button button-small button-primary"
              disabled={busy}
              onClick={() => record(result.cwd!)}
            >
              Record the current value
            </button>
          )}
        </>
      )}
    </section>
  );
}

/**
 * Where the session that said it was, as its agent recorded it (Claude Code: the branch;
 * Codex: the branch and commit): a drift may be another branch's code, not a later one.
 */
export function writtenOn(metadata: Record<string, unknown>): string | null {
  const branch = typeof metadata.git_branch === "string" ? metadata.git_branch : null;
  const commit = typeof metadata.git_commit === "string" ? metadata.git_commit.slice(0, 12) : null;
  if (!branch && !commit) return null;
  const where = [branch && `on branch ${branch}`, commit && `at commit ${commit}`];
  return `Said ${where.filter(Boolean).join(" ")}.`;
}
