// A memory's verdict against the code (server/worktree/tree_check.py), said the same way on
// every page that shows one: the memory's own page, Drifted and Instructions (#68).

import type { CodeCheck } from "../types";

export type Verdict = CodeCheck["verdict"];

const VERDICT_TEXT: Record<Verdict, string> = {
  fresh: "The code still agrees.",
  drifted: "The code has changed since.",
  orphaned: "The files it is about are gone.",
  unchecked: "Not checked.",
};

const PREFIX = /^(fresh|drifted|orphaned|unchecked): /;

/**
 * What to say beside a verdict's badge: the server's note without the "drifted: " it starts
 * with (the badge says it), or the verdict's own sentence when there is no note.
 */
export function verdictText(verdict: Verdict, note: string | null): string {
  return note ? note.replace(PREFIX, "") : VERDICT_TEXT[verdict];
}

/**
 * The verdict a server reason starts with ("orphaned: docs/runbook.md was deleted", as
 * promote says why a line goes), split from the rest; null for any other reason.
 */
export function verdictOfReason(reason: string): { verdict: Verdict; rest: string } | null {
  const match = PREFIX.exec(reason);
  if (!match) return null;
  return { verdict: match[1] as Verdict, rest: reason.slice(match[0].length) };
}
