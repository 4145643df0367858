import { type ReactNode, useId } from "react";
import { routePath } from "../lib/router";
import { Link } from "./Link";

/** A memory in one of the Context page's lists: its start and what the list counts of it. */
export type ContextMemoryItem = { id: number; preview: string; note: string };

export type ContextMemoryListProps = {
  title: string;
  /** What the list is for and what to do with its memories. */
  hint: string;
  items: ContextMemoryItem[];
  /** Said when there are no items. */
  empty: string;
  /** Controls shown beside each memory (Retire). */
  actions?: (item: ContextMemoryItem) => ReactNode;
};

/** One of the Context page's lists of memories, each a link to the memory to edit it. */
export function ContextMemoryList({ title, hint, items, empty, actions }: ContextMemoryListProps) {
  const headingId = useId();
  return (
    <section className="panel" aria-labelledby={headingId}>
      <h2 id={headingId}>{title}</h2>
      <p className="hint">{hint}</p>
      {items.length === 0 ? (
        <p className="muted">{empty}</p>
      ) : (
        <ul className="context-list" aria-labelledby={headingId}>
          {items.map((item) => (
            <li key={item.id}>
              <div className="context-text">
                <Link
                  href={routePath({ name: "memory", id: item.id })}
                  title={`Open #${item.id} to read or edit it`}
                >
                  <span className="mono">#{item.id}</span> {item.preview}
                </Link>
                <span className="context-note muted">{item.note}</span>
              </div>
              {actions && <div className="row-actions">{actions(item)}</div>}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
