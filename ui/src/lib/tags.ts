/** "tooling, decision,, tooling " -> ["tooling", "decision"]: trimmed, no blanks, no repeats. */
export function parseTags(text: string): string[] {
  const tags: string[] = [];
  for (const part of text.split(",")) {
    const tag = part.trim();
    if (tag && !tags.includes(tag)) tags.push(tag);
  }
  return tags;
}

export function formatTags(tags: string[]): string {
  return tags.join(", ");
}
