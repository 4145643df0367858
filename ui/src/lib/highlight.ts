// Query-term highlighting as data: text is split into plain and matching segments, which the
// Highlighted component renders as text and <mark> elements. No HTML strings are ever built.

export type Segment = { text: string; match: boolean };

const OPERATORS = new Set(["or", "and", "not"]);

/** The words of a search query worth highlighting, longest first (so "pnpm" beats "p"). */
export function queryTerms(query: string): string[] {
  const seen = new Set<string>();
  for (const raw of query.split(/\s+/)) {
    const term = raw.replace(/^[-"'(]+|["'),.;:!?]+$/g, "").toLowerCase();
    if (term.length < 2 || OPERATORS.has(term)) continue;
    seen.add(term);
  }
  return [...seen].sort((a, b) => b.length - a.length || a.localeCompare(b));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
}

/** A case-insensitive pattern matching any of `terms`, or null when there are none. */
export function termPattern(terms: string[]): RegExp | null {
  if (terms.length === 0) return null;
  return new RegExp(`(${terms.map(escapeRegExp).join("|")})`, "gi");
}

/** `text` cut into segments, the ones matching a term marked. Joined, they give `text` back. */
export function splitHighlights(text: string, terms: string[]): Segment[] {
  const pattern = termPattern(terms);
  if (!pattern || text === "") return text === "" ? [] : [{ text, match: false }];
  const segments: Segment[] = [];
  let last = 0;
  for (const found of text.matchAll(pattern)) {
    const start = found.index ?? 0;
    if (found[0].length === 0) continue;
    if (start > last) segments.push({ text: text.slice(last, start), match: false });
    segments.push({ text: found[0], match: true });
    last = start + found[0].length;
  }
  if (last < text.length) segments.push({ text: text.slice(last), match: false });
  return segments;
}

/**
 * About `width` characters of `text` on one line, around the first term found (or from the
 * start), with ellipses where it was cut.
 */
export function snippet(text: string, terms: string[], width = 240): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (flat.length <= width) return flat;
  const pattern = termPattern(terms);
  const found = pattern ? pattern.exec(flat) : null;
  const hit = found?.index ?? 0;
  let start = Math.max(0, hit - Math.floor(width / 3));
  const end = Math.min(flat.length, start + width);
  start = Math.max(0, end - width);
  const head = start > 0 ? "…" : "";
  const tail = end < flat.length ? "…" : "";
  return head + flat.slice(start, end).trim() + tail;
}
