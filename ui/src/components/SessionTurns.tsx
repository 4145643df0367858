import { listMemories } from "../api";
import { formatDateTime } from "../lib/format";
import { setParams } from "../lib/router";
import { chronological, SESSION_TURN_LIMIT } from "../lib/sessions";
import { useApi } from "../lib/useApi";
import { ErrorNotice } from "./ErrorNotice";
import { KindBadge } from "./KindBadge";
import { LoadingNotice } from "./LoadingNotice";

export type SessionTurnsProps = { sessionId: string };

/** The memories a session produced (its turns, archived ones included), in order. */
export function SessionTurns({ sessionId }: SessionTurnsProps) {
  const turns = useApi(`turns:${sessionId}`, (signal) =>
    listMemories(
      { session_id: sessionId, include_archived: true, limit: SESSION_TURN_LIMIT },
      signal,
    ),
  );
  if (turns.error) return <ErrorNotice message={turns.error} onRetry={turns.reload} />;
  if (!turns.data) return <LoadingNotice label="Loading the session's turns…" />;
  const page = turns.data;
  if (page.memories.length === 0) {
    return (
      <p className="muted">No turns of this session are stored (they may have been deleted).</p>
    );
  }
  return (
    <div className="turns">
      <p className="muted">
        {page.total} {page.total === 1 ? "memory" : "memories"}
        {page.total > page.memories.length && `, the newest ${page.memories.length} shown`}
      </p>
      <ol className="turn-list">
        {chronological(page.memories).map((turn) => (
          <li key={turn.id} className={`turn turn-${turn.role ?? "other"}`}>
            <div className="turn-head">
              <span className="turn-role">{turn.role ?? turn.kind}</span>
              {turn.kind !== "raw" && <KindBadge kind={turn.kind} />}
              <time dateTime={turn.created_at}>{formatDateTime(turn.created_at)}</time>
              {turn.archived_at && <span className="badge">archived</span>}
              <button
                type="button"
                className="link-button"
                onClick={() => setParams({ memory: String(turn.id) }, { replace: false })}
              >
                #{turn.id}
              </button>
            </div>
            <div className="turn-content">{turn.content}</div>
          </li>
        ))}
      </ol>
    </div>
  );
}
