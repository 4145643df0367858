import { Fragment, useState } from "react";
import { errorMessage, getSessions, getStats, resetFailures } from "../api";
import { EmptyState } from "../components/EmptyState";
import { ErrorNotice } from "../components/ErrorNotice";
import { LoadingNotice } from "../components/LoadingNotice";
import { SessionRow } from "../components/SessionRow";
import { SessionJournal } from "../components/SessionJournal";
import { SessionTurns } from "../components/SessionTurns";
import { SourceField } from "../components/SourceField";
import { useSourceLabel } from "../lib/agents";
import { bumpData } from "../lib/dataVersion";
import { formatCount } from "../lib/format";
import { setParams } from "../lib/router";
import { SESSION_PAGE_SIZE } from "../lib/sessions";
import { useApi } from "../lib/useApi";

export type SessionsPageProps = { params: URLSearchParams };

export function SessionsPage({ params }: SessionsPageProps) {
  const sourceLabel = useSourceLabel();
  const pageNumber = Math.max(1, Number.parseInt(params.get("page") ?? "1", 10) || 1);
  const offset = (pageNumber - 1) * SESSION_PAGE_SIZE;
  const selected = params.get("session");
  const source = params.get("source") ?? "";
  const sessions = useApi(
    `sessions:${offset}:${source}`,
    (signal) =>
      getSessions({ limit: SESSION_PAGE_SIZE, offset, source: source || undefined }, signal),
    { keepPrevious: true },
  );
  // Whether any session has failed to distill: "Reset all failures" is offered only then.
  const stats = useApi("stats", (signal) => getStats(signal), { keepPrevious: true });
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<string | null>(null);
  const [failure, setFailure] = useState<string | null>(null);

  async function reset(sessionId?: string) {
    setBusy(true);
    setFailure(null);
    setMessage(null);
    try {
      const { reset: count } = await resetFailures(sessionId);
      setMessage(
        count === 0
          ? "No failed sessions to reset."
          : `${count} session${count === 1 ? "" : "s"} set back to pending; the next distill run retries ${count === 1 ? "it" : "them"}.`,
      );
      bumpData();
    } catch (error) {
      setFailure(errorMessage(error));
    } finally {
      setBusy(false);
    }
  }

  const data = sessions.data;
  const failed =
    (stats.data?.sessions.failed ?? 0) > 0 ||
    (data?.sessions.some((session) => session.distill_failures > 0) ?? false);
  const pages = data ? Math.max(1, Math.ceil(data.total / SESSION_PAGE_SIZE)) : 1;
  return (
    <section className="page sessions-page" aria-labelledby="sessions-title">
      <div className="page-head">
        <h1 id="sessions-title">Sessions</h1>
        {data && (
          <p className="page-summary">
            {formatCount(data.total)} imported{source && ` from ${sourceLabel(source)}`}
          </p>
        )}
        {failed && (
          <button type="button" className="button" disabled={busy} onClick={() => reset()}>
            Reset all failures
          </button>
        )}
      </div>
      <p className="page-intro">
        Agent sessions imported so far, and whether they have been distilled into memories. Select a
        session to read its turns.
      </p>
      {data && (Object.keys(data.by_source).length > 1 || source) && (
        <div className="toolbar">
          <SourceField
            counts={data.by_source}
            value={source}
            onChange={(value) => setParams({ source: value || null, page: null })}
          />
        </div>
      )}
      {message && (
        <p className="notice notice-ok" role="status">
          {message}
        </p>
      )}
      {failure && <ErrorNotice message={failure} />}
      {sessions.error && <ErrorNotice message={sessions.error} onRetry={sessions.reload} />}
      {!data && !sessions.error && <LoadingNotice label="Loading sessions…" />}
      {data && data.total === 0 && !source && (
        <EmptyState title="No sessions imported yet.">
          <p>
            Run <code>claude-memory import</code> to read Claude Code transcripts from{" "}
            <code>~/.claude/projects</code>.
          </p>
        </EmptyState>
      )}
      {data && selected && !data.sessions.some((s) => s.session_id === selected) && (
        <section className="panel" aria-label={`Session ${selected}`}>
          <h2 className="mono">Session {selected}</h2>
          <SessionJournal sessionId={selected} />
          <SessionTurns sessionId={selected} />
        </section>
      )}
      {data && data.sessions.length > 0 && (
        <div className="table-wrap">
          <table className="sessions">
            <thead>
              <tr>
                <th scope="col">Session</th>
                <th scope="col" className="numeric">
                  Messages
                </th>
                <th scope="col">Last activity</th>
                <th scope="col">Distill</th>
              </tr>
            </thead>
            <tbody>
              {data.sessions.map((session) => (
                <Fragment key={session.session_id}>
                  <SessionRow
                    session={session}
                    selected={session.session_id === selected}
                    busy={busy}
                    onSelect={(id) =>
                      setParams(
                        { session: id === selected ? null : id, memory: null },
                        { replace: false },
                      )
                    }
                    onReset={(id) => reset(id)}
                  />
                  {session.session_id === selected && (
                    <tr className="turns-row">
                      <td colSpan={4}>
                        <SessionJournal sessionId={session.session_id} />
                        <SessionTurns sessionId={session.session_id} />
                      </td>
                    </tr>
                  )}
                </Fragment>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {data && pages > 1 && (
        <nav className="pager" aria-label="Session pages">
          <button
            type="button"
            className="button button-small"
            disabled={pageNumber <= 1}
            onClick={() =>
              setParams(
                { page: pageNumber - 1 > 1 ? String(pageNumber - 1) : null },
                { replace: false },
              )
            }
          >
            Newer
          </button>
          <span>
            Page {pageNumber} of {pages}
          </span>
          <button
            type="button"
            className="button button-small"
            disabled={pageNumber >= pages}
            onClick={() => setParams({ page: String(pageNumber + 1) }, { replace: false })}
          >
            Older
          </button>
        </nav>
      )}
    </section>
  );
}
