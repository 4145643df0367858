import { useState } from "react";
import { errorMessage, listMemories, purgeMemory, restoreMemory } from "../../api";
import { ConfirmButton } from "../../components/ConfirmButton";
import { ErrorNotice } from "../../components/ErrorNotice";
import { KindBadge } from "../../components/KindBadge";
import { LoadingNotice } from "../../components/LoadingNotice";
import { OwnerNote } from "../../components/OwnerNote";
import { bumpData } from "../../lib/dataVersion";
import { firstLine, formatCount, formatDateTime } from "../../lib/format";
import { useApi } from "../../lib/useApi";

const PAGE = 50;

/** Soft-deleted memories, newest first: restore one, or purge it for good. */
export function DeletedMemoriesSection() {
  const [offset, setOffset] = useState(0);
  const deleted = useApi(
    `deleted:${offset}`,
    (signal) =>
      listMemories({ only_deleted: true, include_archived: true, limit: PAGE, offset }, signal),
    { keepPrevious: true },
  );
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<string | null>(null);
  const [failure, setFailure] = useState<string | null>(null);

  async function act(work: () => Promise<string>) {
    setBusy(true);
    setFailure(null);
    setMessage(null);
    try {
      setMessage(await work());
      bumpData();
    } catch (error) {
      setFailure(errorMessage(error));
    } finally {
      setBusy(false);
    }
  }

  const page = deleted.data;
  return (
    <section className="panel" aria-labelledby="deleted-title">
      <h2 id="deleted-title">
        Deleted memories {page && <span className="count">{formatCount(page.total)}</span>}
      </h2>
      {message && (
        <p className="notice notice-ok" role="status">
          {message}
        </p>
      )}
      {failure && <ErrorNotice message={failure} />}
      {deleted.error && <ErrorNotice message={deleted.error} onRetry={deleted.reload} />}
      {!page && !deleted.error && <LoadingNotice label="Loading deleted memories…" />}
      {page && page.total === 0 && <p className="muted">Nothing deleted.</p>}
      {page && page.memories.length > 0 && (
        <ul className="deleted-list">
          {page.memories.map((memory) => (
            <li key={memory.id}>
              <div className="deleted-text">
                <span className="mono">#{memory.id}</span> <KindBadge kind={memory.kind} />{" "}
                <span className="muted">
                  {memory.project || "(no project)"} · deleted {formatDateTime(memory.deleted_at)}
                </span>
                <OwnerNote owner={memory.owner} visibility={memory.visibility} />
                <p>{firstLine(memory.content, 160)}</p>
              </div>
              <div className="row-actions">
                <button
                  type="button"
                  className="button button-small"
                  disabled={busy}
                  onClick={() =>
                    act(async () => {
                      await restoreMemory(memory.id);
                      return `Restored #${memory.id}.`;
                    })
                  }
                >
                  Restore
                </button>
                <ConfirmButton
                  label="Purge"
                  question={`Erase #${memory.id} for good?`}
                  confirmLabel="Purge"
                  disabled={busy}
                  onConfirm={() =>
                    act(async () => {
                      const { purged_id } = await purgeMemory(memory.id);
                      return `Purged #${purged_id}; it cannot be restored.`;
                    })
                  }
                />
              </div>
            </li>
          ))}
        </ul>
      )}
      {page && page.total > PAGE && (
        <nav className="pager" aria-label="Deleted memory pages">
          <button
            type="button"
            className="button button-small"
            disabled={offset === 0}
            onClick={() => setOffset(Math.max(0, offset - PAGE))}
          >
            Newer
          </button>
          <span>
            {offset + 1}–{Math.min(offset + PAGE, page.total)} of {formatCount(page.total)}
          </span>
          <button
            type="button"
            className="button button-small"
            disabled={offset + PAGE >= page.total}
            onClick={() => setOffset(offset + PAGE)}
          >
            Older
          </button>
        </nav>
      )}
    </section>
  );
}
