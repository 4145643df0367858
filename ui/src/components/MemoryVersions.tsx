import { type FormEvent, useState } from "react";
import { getVersions } from "../api";
import { formatDate } from "../lib/format";
import { useApi } from "../lib/useApi";
import type { Memory } from "../types";
import { ErrorNotice } from "./ErrorNotice";

export type MemoryVersionsProps = {
  memory: Memory;
  busy: boolean;
  onNavigate: (id: number) => void;
  /** Link this memory to the older one it replaces; 0 removes the link. */
  onLink: (supersedes: number) => void;
};

/**
 * The versions of this memory's fact, oldest first, with their dates and why each replaced the
 * one before; and the link to the memory this one replaces, which the user can set or remove.
 */
export function MemoryVersions({ memory, busy, onNavigate, onLink }: MemoryVersionsProps) {
  const versions = useApi(`versions:${memory.id}`, (signal) => getVersions(memory.id, signal));
  const [target, setTarget] = useState("");
  const headingId = `versions-${memory.id}`;
  const chain = versions.data ?? [];

  function link(event: FormEvent) {
    event.preventDefault();
    const id = Number(target);
    if (Number.isInteger(id) && id > 0) {
      onLink(id);
      setTarget("");
    }
  }

  return (
    <section className="versions" aria-labelledby={headingId}>
      <h3 id={headingId}>Versions</h3>
      {versions.error && <ErrorNotice message={versions.error} onRetry={versions.reload} />}
      {versions.data && chain.length <= 1 && (
        <p className="muted">No other version of this fact.</p>
      )}
      {chain.length > 1 && (
        <ol className="version-list" aria-label="Versions, oldest first">
          {chain.map((version) => (
            <li
              key={version.id}
              className={`version${version.id === memory.id ? " is-this" : ""}${
                version.current ? " is-current" : ""
              }`}
            >
              <span className="version-head">
                {version.id === memory.id ? (
                  <span className="mono">#{version.id}</span>
                ) : (
                  <button
                    type="button"
                    className="link-button mono"
                    onClick={() => onNavigate(version.id)}
                  >
                    #{version.id}
                  </button>
                )}
                <time dateTime={version.created_at}>{formatDate(version.created_at)}</time>
                {version.current && <span className="badge">current</span>}
                {version.deleted && <span className="badge badge-danger">deleted</span>}
                {version.reason && <span className="muted version-reason">{version.reason}</span>}
              </span>
              <span className="version-preview">{version.preview}</span>
            </li>
          ))}
        </ol>
      )}
      <form className="version-link" onSubmit={link}>
        <label>
          Replaces memory #
          <input
            type="number"
            min={1}
            inputMode="numeric"
            value={target}
            disabled={busy || memory.deleted_at !== null}
            onChange={(event) => setTarget(event.target.value)}
          />
        </label>
        <button
          type="submit"
          className="button button-small"
          disabled={busy || memory.deleted_at !== null || !target}
        >
          Link
        </button>
        {memory.supersedes !== null && (
          <button
            type="button"
            className="button button-small"
            disabled={busy}
            onClick={() => onLink(0)}
          >
            Unlink #{memory.supersedes}
          </button>
        )}
      </form>
    </section>
  );
}
