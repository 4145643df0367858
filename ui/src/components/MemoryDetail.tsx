import { useRef, useState } from "react";
import { deleteMemory, errorMessage, getMemory, restoreMemory, updateMemory } from "../api";
import { bumpData } from "../lib/dataVersion";
import { describeUpdate, type Outcome } from "../lib/outcomes";
import { useApi } from "../lib/useApi";
import { CodeCheckSection } from "./CodeCheckSection";
import { CopyButton } from "./CopyButton";
import { ErrorNotice } from "./ErrorNotice";
import { LoadingNotice } from "./LoadingNotice";
import { type MemoryEdit, MemoryEditor } from "./MemoryEditor";
import { MemoryMeta } from "./MemoryMeta";
import { MemoryVersions } from "./MemoryVersions";
import { ReaderOverlay } from "./ReaderOverlay";
import { RelatedMemories } from "./RelatedMemories";

export type MemoryDetailProps = {
  id: number;
  onNavigate: (id: number) => void;
};

type Notice = Outcome & { retry?: MemoryEdit };

/** One memory: its fields, content, related memories and what can be done with it. */
export function MemoryDetail({ id, onNavigate }: MemoryDetailProps) {
  const memory = useApi(`memory:${id}`, (signal) => getMemory(id, signal));
  const [editing, setEditing] = useState(false);
  const [reading, setReading] = useState(false);
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<Notice | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [shownId, setShownId] = useState(id);
  const readButton = useRef<HTMLButtonElement>(null);

  if (shownId !== id) {
    // A different memory: drop the previous one's editor and messages.
    setShownId(id);
    setEditing(false);
    setReading(false);
    setNotice(null);
    setFailure(null);
  }

  async function act(work: () => Promise<Notice | null>) {
    setBusy(true);
    setFailure(null);
    setNotice(null);
    try {
      setNotice(await work());
      bumpData();
    } catch (error) {
      setFailure(errorMessage(error));
    } finally {
      setBusy(false);
    }
  }

  const save = (edit: MemoryEdit, force = false) =>
    act(async () => {
      const outcome = await updateMemory(id, { ...edit, ...(force ? { force: true } : {}) });
      const described = describeUpdate(outcome);
      if (outcome.status === "updated" || outcome.status === "unchanged") setEditing(false);
      return { ...described, retry: described.canForce ? edit : undefined };
    });

  const link = (supersedes: number) =>
    act(async () => {
      await updateMemory(id, { supersedes });
      return {
        tone: "ok",
        text: supersedes ? `Linked: this replaces #${supersedes}.` : "Link removed.",
        canForce: false,
      };
    });

  if (memory.error && !memory.data) {
    return <ErrorNotice message={memory.error} onRetry={memory.reload} />;
  }
  const current = memory.data;
  if (!current) return <LoadingNotice label={`Loading memory #${id}…`} />;
  const deleted = current.deleted_at !== null;

  return (
    <article
      className={`memory-detail${deleted ? " is-deleted" : ""}`}
      aria-labelledby={`memory-title-${id}`}
    >
      <header className="detail-header">
        <h2 id={`memory-title-${id}`}>
          Memory <span className="mono">#{current.id}</span>
          {deleted && <span className="badge badge-danger">deleted</span>}
        </h2>
        <div className="row-actions" role="toolbar" aria-label="Memory actions">
          <button
            ref={readButton}
            type="button"
            className="button button-small"
            onClick={() => setReading(true)}
          >
            Read
          </button>
          {!editing && (
            <button
              type="button"
              className="button button-small"
              disabled={busy || deleted}
              onClick={() => setEditing(true)}
            >
              Edit
            </button>
          )}
          {deleted ? (
            <button
              type="button"
              className="button button-small button-primary"
              disabled={busy}
              onClick={() =>
                act(async () => {
                  await restoreMemory(id);
                  return { tone: "ok", text: "Restored.", canForce: false };
                })
              }
            >
              Restore
            </button>
          ) : (
            <button
              type="button"
              className="button button-small button-danger"
              disabled={busy}
              onClick={() =>
                act(async () => {
                  await deleteMemory(id);
                  setEditing(false);
                  return {
                    tone: "ok",
                    text: "Deleted. It stays restorable until purged.",
                    canForce: false,
                  };
                })
              }
            >
              Delete
            </button>
          )}
          <CopyButton text={String(current.id)} label="Copy id" />
        </div>
      </header>

      {failure && <ErrorNotice message={failure} />}
      {notice && (
        <div className={`notice notice-${notice.tone}`} role="status">
          <span>{notice.text}</span>
          {notice.retry && (
            <button
              type="button"
              className="button button-small"
              disabled={busy}
              onClick={() => save(notice.retry!, true)}
            >
              Save anyway
            </button>
          )}
        </div>
      )}

      {editing ? (
        <MemoryEditor
          memory={current}
          busy={busy}
          onSave={(edit) => save(edit)}
          onCancel={() => setEditing(false)}
        />
      ) : (
        <div className="memory-content" aria-label="Content">
          {current.content}
        </div>
      )}

      <MemoryMeta memory={current} onNavigate={onNavigate} />
      <CodeCheckSection memory={current} onNavigate={onNavigate} />
      <MemoryVersions memory={current} busy={busy} onNavigate={onNavigate} onLink={link} />
      <RelatedMemories id={id} onNavigate={onNavigate} />
      {reading && (
        <ReaderOverlay
          memory={current}
          onClose={() => setReading(false)}
          returnFocusTo={readButton}
        />
      )}
    </article>
  );
}
