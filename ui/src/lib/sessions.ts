// Sessions view helpers: state wording and turn order.

import type { ImportedSession, Memory } from "../types";

export const SESSION_PAGE_SIZE = 50;
export const SESSION_TURN_LIMIT = 500;
/** Calls (and prompts) of the journal shown under a session: the API's largest page. */
export const SESSION_JOURNAL_LIMIT = 500;

export function distillTone(state: string): "ok" | "warn" | "danger" | "neutral" {
  if (state === "done") return "ok";
  if (state === "failed") return "danger";
  if (state === "pending") return "warn";
  return "neutral";
}

export function sessionTitle(session: ImportedSession): string {
  return session.title?.trim() || `Session ${session.session_id.slice(0, 8)}…`;
}

/** Turns oldest first, in transcript order (the API lists newest first). */
export function chronological(turns: Memory[]): Memory[] {
  const line = (memory: Memory) => {
    const value = memory.metadata?.["line"];
    return typeof value === "number" ? value : 0;
  };
  return [...turns].sort(
    (a, b) => a.created_at.localeCompare(b.created_at) || line(a) - line(b) || a.id - b.id,
  );
}
