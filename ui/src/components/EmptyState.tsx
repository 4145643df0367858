import type { ReactNode } from "react";

export type EmptyStateProps = { title: string; children?: ReactNode };

/** What an empty view means and what to try next. */
export function EmptyState({ title, children }: EmptyStateProps) {
  return (
    <div className="empty-state">
      <p className="empty-title">{title}</p>
      {children && <div className="empty-hint">{children}</div>}
    </div>
  );
}
