import { useSourceLabel } from "../lib/agents";
import { formatCount, formatDateTime, relativeTime } from "../lib/format";
import { distillTone, sessionTitle } from "../lib/sessions";
import type { ImportedSession } from "../types";

export type SessionRowProps = {
  session: ImportedSession;
  selected: boolean;
  busy: boolean;
  onSelect: (id: string) => void;
  onReset: (id: string) => void;
};

export function SessionRow({ session, selected, busy, onSelect, onReset }: SessionRowProps) {
  const sourceLabel = useSourceLabel();
  const lastActive = session.last_message_at ?? session.imported_at;
  return (
    <tr className={selected ? "is-selected" : undefined}>
      <td>
        <button
          type="button"
          className="session-open"
          aria-expanded={selected}
          onClick={() => onSelect(session.session_id)}
        >
          {sessionTitle(session)}
        </button>
        <div className="session-sub">
          <span>{session.project || "(no project)"}</span> ·{" "}
          <span>{sourceLabel(session.source)}</span> ·{" "}
          <span className="mono" title="session id">
            {session.session_id}
          </span>
        </div>
      </td>
      <td className="numeric">{formatCount(session.message_count)}</td>
      <td>
        <span title={formatDateTime(lastActive)}>{relativeTime(lastActive)}</span>
        <div className="session-sub">
          imported {formatDateTime(session.imported_at)} · {formatCount(session.lines_imported)}{" "}
          lines
        </div>
      </td>
      <td>
        <span className={`badge badge-${distillTone(session.distill_state)}`}>
          {session.distill_state}
        </span>
        <div className="session-sub">
          signals {session.signals_state} · behavior {session.behavior_state}
        </div>
        {session.distill_failures > 0 && (
          <div className="session-failure">
            <span>
              {session.distill_failures} failure{session.distill_failures === 1 ? "" : "s"}
            </span>
            {session.distill_last_error && (
              <span className="failure-reason">{session.distill_last_error}</span>
            )}
            {session.distill_state === "failed" && (
              <button
                type="button"
                className="button button-small"
                disabled={busy}
                onClick={() => onReset(session.session_id)}
              >
                Retry
              </button>
            )}
          </div>
        )}
      </td>
    </tr>
  );
}
