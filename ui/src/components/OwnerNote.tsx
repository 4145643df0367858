import type { Ownership } from "../types";

export type OwnerNoteProps = Ownership & {
  /** Text before "by <owner>": " · " after other text in a line, "" as an item of its own. */
  separator?: string;
};

/**
 * Who saved a memory, and a "private" badge when only they can see it, on a team's server.
 * Nothing at all without an owner: a server without users looks as it always did.
 */
export function OwnerNote({ owner, visibility, separator = " · " }: OwnerNoteProps) {
  if (!owner) return null;
  return (
    <>
      <span className="owner-note muted">
        {separator}by {owner}
      </span>
      {visibility === "private" && (
        <span className="badge badge-private" title={`Only ${owner} can see it`}>
          private
        </span>
      )}
    </>
  );
}
