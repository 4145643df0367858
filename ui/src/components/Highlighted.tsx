import { splitHighlights } from "../lib/highlight";

export type HighlightedProps = { text: string; terms: string[] };

/** `text` as React text, with the query terms wrapped in <mark>; never parsed as HTML. */
export function Highlighted({ text, terms }: HighlightedProps) {
  return (
    <>
      {splitHighlights(text, terms).map((segment, index) =>
        segment.match ? <mark key={index}>{segment.text}</mark> : segment.text,
      )}
    </>
  );
}
