import { useState } from "react";
import { errorMessage, getProjects, getPromotion, writePromotion } from "../api";
import { EmptyState } from "../components/EmptyState";
import { ErrorNotice } from "../components/ErrorNotice";
import { Link } from "../components/Link";
import { LoadingNotice } from "../components/LoadingNotice";
import { ProjectField } from "../components/ProjectField";
import { bumpData } from "../lib/dataVersion";
import { formatCount } from "../lib/format";
import { routePath, setParams } from "../lib/router";
import { useApi } from "../lib/useApi";
import { verdictOfReason } from "../lib/verdicts";
import type { PromoteChange, PromoteFile, PromoteResult } from "../types";

export type InstructionsPageProps = { params: URLSearchParams };

type Decision = "accept" | "reject";

const ACTION_LABELS: Record<PromoteChange["action"], string> = {
  add: "add",
  change: "change",
  remove: "remove",
  keep: "keep",
};

/** A change the user decides on: it carries a memory and is not a line that stays as it is. */
function decidable(change: PromoteChange): change is PromoteChange & { memory_id: number } {
  return change.action !== "keep" && change.memory_id !== null;
}

/**
 * What memory has proven, proposed as lines of the repository's instruction files (CLAUDE.md,
 * AGENTS.md, GEMINI.md, .github/copilot-instructions.md): each change with its reason, accepted
 * unless the user rejects it, and written only when they press Write.
 */
export function InstructionsPage({ params }: InstructionsPageProps) {
  const project = params.get("project") ?? "";
  const projects = useApi("projects", (signal) => getProjects(signal));
  const proposal = useApi(project ? `promote:${project}` : null, (signal) =>
    getPromotion(project, signal),
  );
  // Keyed by project, so another project's choices and result never show here.
  const [decisions, setDecisions] = useState<{ project: string; byId: Map<number, Decision> }>({
    project,
    byId: new Map(),
  });
  const [written, setWritten] = useState<{ project: string; result: PromoteResult } | null>(null);
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);

  const chosen = decisions.project === project ? decisions.byId : new Map<number, Decision>();
  const decisionOf = (id: number): Decision => chosen.get(id) ?? "accept";

  function decide(id: number, decision: Decision) {
    const next = new Map(chosen);
    next.set(id, decision);
    setDecisions({ project, byId: next });
  }

  const data = proposal.data;
  // One decision per memory: a line proposed for two files is written to both or neither.
  const uniqueIds = [
    ...new Set(
      (data?.files ?? []).flatMap((file) =>
        file.changes.filter(decidable).map((change) => change.memory_id),
      ),
    ),
  ];
  const accept = uniqueIds.filter((id) => decisionOf(id) === "accept");
  const reject = uniqueIds.filter((id) => decisionOf(id) === "reject");

  async function write() {
    setBusy(true);
    setFailure(null);
    try {
      const result = await writePromotion({ project, cwd: null, accept, reject });
      setWritten({ project, result });
      setDecisions({ project, byId: new Map() });
      bumpData();
    } catch (error) {
      setFailure(errorMessage(error));
    } finally {
      setBusy(false);
    }
  }

  const result = written?.project === project ? written.result : null;
  return (
    <section className="page instructions-page" aria-labelledby="instructions-title">
      <div className="page-head">
        <h1 id="instructions-title">Instructions</h1>
        <ProjectField
          projects={projects.data}
          value={project}
          onChange={(value) => setParams({ project: value || null })}
          emptyLabel="choose a project"
        />
      </div>
      <p className="page-intro">
        What memory has proven in a project (used again and again with no correction, rules you
        stated), proposed as lines of its repository&apos;s instruction files, and lines whose
        memory stopped being true proposed for change or removal. Only the section between
        claude-memory&apos;s markers is written, after a backup of the file; nothing is committed. A
        rejected line is not proposed again.
      </p>
      {failure && <ErrorNotice message={failure} />}
      {result && <WrittenNotice result={result} />}
      {proposal.error && <ErrorNotice message={proposal.error} onRetry={proposal.reload} />}
      {!project && <EmptyState title="Choose a project to see what its instructions could say." />}
      {project && !data && !proposal.error && <LoadingNotice label="Reading the proposal…" />}
      {data && (
        <p className="page-summary">
          Repository <span className="mono">{data.root}</span>:{" "}
          {uniqueIds.length
            ? `${formatCount(uniqueIds.length)} proposed ${uniqueIds.length === 1 ? "change" : "changes"}`
            : "nothing new to propose"}
          {data.left_out
            ? `; ${formatCount(data.left_out)} more did not fit the section and stay in memory`
            : ""}
          .
        </p>
      )}
      {data && uniqueIds.length > 0 && (
        <div className="toolbar">
          <button
            type="button"
            className="button button-primary"
            disabled={busy}
            onClick={() => void write()}
          >
            Write
          </button>
          <span className="hint">
            {formatCount(accept.length)} accepted, {formatCount(reject.length)} rejected
          </span>
        </div>
      )}
      {data?.files.map((file, index) => (
        <FileProposalView
          key={file.path}
          file={file}
          index={index}
          decisionOf={decisionOf}
          onDecide={decide}
        />
      ))}
    </section>
  );
}

function WrittenNotice({ result }: { result: PromoteResult }) {
  if (result.written.length === 0) {
    return (
      <div className="notice notice-ok" role="status">
        Nothing to write: the files already say this.
      </div>
    );
  }
  return (
    <div className="notice notice-ok" role="status">
      <p className="written-title">Written:</p>
      <ul className="written-list" aria-label="Files written">
        {result.written.map((item) => (
          <li key={item.path}>
            <span className="mono">{item.path}</span>
            {item.backup ? (
              <>
                {" "}
                (backup: <span className="mono">{item.backup}</span>)
              </>
            ) : (
              " (new file)"
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}

type FileProposalProps = {
  file: PromoteFile;
  index: number;
  decisionOf: (id: number) => Decision;
  onDecide: (id: number, decision: Decision) => void;
};

function FileProposalView({ file, index, decisionOf, onDecide }: FileProposalProps) {
  const proposed = file.changes.filter((change) => change.action !== "keep");
  const kept = file.changes.filter((change) => change.action === "keep");
  const headingId = `promote-file-${index}`;
  return (
    <section className="panel promote-file" aria-labelledby={headingId}>
      <h2 id={headingId} className="promote-file-name">
        {file.name}
        {file.creates && <span className="badge promote-creates">will be created</span>}
      </h2>
      <p className="hint mono">{file.path}</p>
      {proposed.length === 0 && <p className="muted">No change proposed.</p>}
      {proposed.length > 0 && (
        <ul className="promote-changes" aria-label={`Proposed changes to ${file.name}`}>
          {proposed.map((change, position) => (
            <ChangeRow
              key={`${change.action}:${change.memory_id ?? "none"}:${position}`}
              change={change}
              group={`${index}-${position}`}
              decisionOf={decisionOf}
              onDecide={onDecide}
            />
          ))}
        </ul>
      )}
      {kept.length > 0 && (
        <details className="promote-kept">
          <summary className="muted">
            {formatCount(kept.length)} {kept.length === 1 ? "line stays" : "lines stay"} as it is
          </summary>
          <ul aria-label={`Lines kept in ${file.name}`}>
            {kept.map((change, position) => (
              <li key={`${change.memory_id ?? "none"}:${position}`} className="muted">
                {change.text ?? change.old_text}
                {change.memory_id !== null && (
                  <>
                    {" "}
                    <MemoryLink id={change.memory_id} />
                  </>
                )}
              </li>
            ))}
          </ul>
        </details>
      )}
      {file.diff && (
        <details className="promote-diff" open>
          <summary>Diff (a rejected line is struck through: it is left as it is)</summary>
          <DiffView diff={file.diff} label={`Diff of ${file.name}`} decisionOf={decisionOf} />
        </details>
      )}
    </section>
  );
}

type ChangeRowProps = {
  change: PromoteChange;
  group: string;
  decisionOf: (id: number) => Decision;
  onDecide: (id: number, decision: Decision) => void;
};

function ChangeRow({ change, group, decisionOf, onDecide }: ChangeRowProps) {
  const id = change.memory_id;
  const decision = id === null ? null : decisionOf(id);
  return (
    <li
      className={`promote-change promote-change-${change.action}${decision === "reject" ? " is-rejected" : ""}`}
    >
      <span className={`badge promote-action promote-action-${change.action}`}>
        {ACTION_LABELS[change.action]}
      </span>
      <div className="promote-line">
        {change.action === "change" && change.old_text !== null && (
          <p className="promote-old">
            <del>{change.old_text}</del>
          </p>
        )}
        {change.action === "remove" ? (
          <p className="promote-text">
            <del>{change.old_text ?? change.text}</del>
          </p>
        ) : (
          <p className="promote-text">{change.text}</p>
        )}
        <p className="promote-reason muted">
          <Reason reason={change.reason} />
          {change.source ? ` · from ${change.source}` : ""}
          {id !== null && (
            <>
              {" · "}
              <MemoryLink id={id} />
            </>
          )}
        </p>
      </div>
      {id !== null && decision !== null && (
        <fieldset className="promote-decision">
          <legend className="visually-hidden">Decision on memory #{id}</legend>
          <label>
            <input
              type="radio"
              name={`promote-${group}`}
              value="accept"
              checked={decision === "accept"}
              onChange={() => onDecide(id, "accept")}
            />{" "}
            Accept
          </label>
          <label>
            <input
              type="radio"
              name={`promote-${group}`}
              value="reject"
              checked={decision === "reject"}
              onChange={() => onDecide(id, "reject")}
            />{" "}
            Reject
          </label>
        </fieldset>
      )}
    </li>
  );
}

/** Why a line changes; a verdict against the code is its badge, as on the memory's page. */
function Reason({ reason }: { reason: string }) {
  const verdict = verdictOfReason(reason);
  if (!verdict) return <>{reason}</>;
  return (
    <>
      <span className={`badge verdict-badge verdict-badge-${verdict.verdict}`}>
        {verdict.verdict}
      </span>{" "}
      {verdict.rest}
    </>
  );
}

function MemoryLink({ id }: { id: number }) {
  return (
    <Link href={routePath({ name: "memory", id })} className="mono">
      #{id}
    </Link>
  );
}

const LINE_MEMORY = /<!--\s*memory:(\d+)\s*-->\s*$/;

function diffClass(line: string, decisionOf: (id: number) => Decision): string {
  if (line.startsWith("+++") || line.startsWith("---")) return "diff-file";
  if (line.startsWith("@@")) return "diff-hunk";
  if (!line.startsWith("+") && !line.startsWith("-")) return "diff-context";
  const kind = line.startsWith("+") ? "diff-add" : "diff-remove";
  const memory = LINE_MEMORY.exec(line);
  const rejected = memory !== null && decisionOf(Number(memory[1])) === "reject";
  return rejected ? `${kind} diff-rejected` : kind;
}

type DiffViewProps = { diff: string; label: string; decisionOf: (id: number) => Decision };

/** A unified diff as text, each line coloured by what it does; a rejected line struck out. */
function DiffView({ diff, label, decisionOf }: DiffViewProps) {
  const lines = diff.endsWith("\n") ? diff.slice(0, -1).split("\n") : diff.split("\n");
  return (
    <pre className="promote-diff-text" aria-label={label}>
      {lines.map((line, position) => (
        <span key={position} className={diffClass(line, decisionOf)}>
          {line}
          {"\n"}
        </span>
      ))}
    </pre>
  );
}
