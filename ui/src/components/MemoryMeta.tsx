import { useSourceLabel } from "../lib/agents";
import { formatDateTime } from "../lib/format";
import { routePath } from "../lib/router";
import type { Memory } from "../types";
import { KindBadge } from "./KindBadge";
import { Link } from "./Link";
import { OwnerNote } from "./OwnerNote";

export type MemoryMetaProps = { memory: Memory; onNavigate: (id: number) => void };

/** Every stored field of a memory but its content. */
export function MemoryMeta({ memory, onNavigate }: MemoryMetaProps) {
  const sourceLabel = useSourceLabel();
  const hasMetadata = Object.keys(memory.metadata ?? {}).length > 0;
  // Distilled memories keep the agent of the session they came from.
  const agent =
    typeof memory.metadata?.agent === "string" && memory.metadata.agent !== memory.source
      ? memory.metadata.agent
      : null;
  return (
    <>
      <dl className="meta">
        <dt>Kind</dt>
        <dd>
          <KindBadge kind={memory.kind} />
          {memory.role && <span className="muted"> · {memory.role}</span>}
        </dd>
        <dt>Project</dt>
        <dd title={memory.project_path || undefined}>{memory.project || "(no project)"}</dd>
        {memory.project_path && memory.project_path !== memory.project && (
          <>
            <dt>Path</dt>
            <dd className="mono">{memory.project_path}</dd>
          </>
        )}
        <dt>Source</dt>
        <dd>
          {memory.source ? sourceLabel(memory.source) : "–"}
          {agent && <span className="muted"> · from a {sourceLabel(agent)} session</span>}
          <OwnerNote owner={memory.owner} visibility={memory.visibility} />
        </dd>
        {memory.session_id && (
          <>
            <dt>Session</dt>
            <dd className="mono">
              <Link
                href={`${routePath({ name: "sessions" })}?session=${encodeURIComponent(memory.session_id)}`}
              >
                {memory.session_id}
              </Link>
            </dd>
          </>
        )}
        <dt>Created</dt>
        <dd>{formatDateTime(memory.created_at)}</dd>
        <dt>Updated</dt>
        <dd>{formatDateTime(memory.updated_at)}</dd>
        {memory.archived_at && (
          <>
            <dt>Archived</dt>
            <dd>{formatDateTime(memory.archived_at)}</dd>
          </>
        )}
        {memory.deleted_at && (
          <>
            <dt>Deleted</dt>
            <dd className="danger-text">{formatDateTime(memory.deleted_at)}</dd>
          </>
        )}
        {memory.supersedes !== null && (
          <>
            <dt>Replaces</dt>
            <dd>
              <button
                type="button"
                className="link-button"
                onClick={() => onNavigate(memory.supersedes!)}
              >
                #{memory.supersedes}
              </button>
              {memory.supersede_reason && (
                <span className="muted"> ({memory.supersede_reason})</span>
              )}
            </dd>
          </>
        )}
        {memory.superseded_by !== null && (
          <>
            <dt>Superseded by</dt>
            <dd>
              <button
                type="button"
                className="link-button"
                onClick={() => onNavigate(memory.superseded_by!)}
              >
                #{memory.superseded_by}
              </button>
            </dd>
          </>
        )}
        <dt>Tags</dt>
        <dd>
          {memory.tags.length === 0 ? (
            <span className="muted">none</span>
          ) : (
            <ul className="tag-list">
              {memory.tags.map((tag) => (
                <li key={tag} className="tag">
                  {tag}
                </li>
              ))}
            </ul>
          )}
        </dd>
      </dl>
      {hasMetadata && (
        <details className="metadata">
          <summary>Metadata</summary>
          <pre>{JSON.stringify(memory.metadata, null, 2)}</pre>
        </details>
      )}
    </>
  );
}
