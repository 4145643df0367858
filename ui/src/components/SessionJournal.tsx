import { getSessionJournal } from "../api";
import { formatDateTime } from "../lib/format";
import { SESSION_JOURNAL_LIMIT } from "../lib/sessions";
import { useApi } from "../lib/useApi";
import type { JournalCall } from "../types";
import { ErrorNotice } from "./ErrorNotice";
import { LoadingNotice } from "./LoadingNotice";

export type SessionJournalProps = { sessionId: string };

/** What the agent did in a session: each prompt, with the tool calls that followed it. */
export function SessionJournal({ sessionId }: SessionJournalProps) {
  const journal = useApi(`journal:${sessionId}`, (signal) =>
    getSessionJournal(sessionId, SESSION_JOURNAL_LIMIT, signal),
  );
  if (journal.error) return <ErrorNotice message={journal.error} onRetry={journal.reload} />;
  if (!journal.data) return <LoadingNotice label="Loading what was done…" />;
  const { entries, truncated } = journal.data;
  if (entries.length === 0) {
    return <p className="muted">No prompts or tool calls of this session are journaled.</p>;
  }
  return (
    <section className="journal" aria-label="What was done">
      <h3>What was done</h3>
      {truncated && (
        <p className="muted">The newest {SESSION_JOURNAL_LIMIT} calls and prompts are shown.</p>
      )}
      <ol className="journal-list">
        {[...entries].reverse().map((entry) => (
          <li key={`${entry.prompt_key ?? "none"}:${entry.calls[0]?.tool_use_id ?? ""}`}>
            <div className="journal-prompt">
              {entry.at && <time dateTime={entry.at}>{formatDateTime(entry.at)}</time>}
              <span className={entry.prompt ? "journal-prompt-text" : "muted"}>
                {entry.prompt ?? "Calls whose prompt is not known"}
              </span>
            </div>
            {entry.calls.length > 0 && (
              <ul className="journal-calls">
                {entry.calls.map((call) => (
                  <JournalCallItem key={call.tool_use_id} call={call} />
                ))}
              </ul>
            )}
          </li>
        ))}
      </ol>
    </section>
  );
}

function JournalCallItem({ call }: { call: JournalCall }) {
  const state = call.success === false ? "failed" : call.success ? "ok" : "pending";
  return (
    <li className={`journal-call journal-call-${state}`}>
      <span className="journal-tool">{call.tool}</span>
      {call.target && <code className="journal-target">{call.target}</code>}
      {call.success === false && <span className="badge badge-danger">failed</span>}
      {call.agent_id && <span className="badge">sub-agent</span>}
      {call.error && <div className="journal-error">{call.error}</div>}
      {call.output_preview && <div className="journal-preview">{call.output_preview}</div>}
    </li>
  );
}
