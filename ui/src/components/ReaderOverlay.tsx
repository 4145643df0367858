import { type RefObject, useMemo, useRef } from "react";
import { formatDateTime } from "../lib/format";
import { useFocusTrap } from "../lib/focusTrap";
import { renderMarkdown } from "../lib/markdown";
import type { Memory } from "../types";
import { KindBadge } from "./KindBadge";
import { OwnerNote } from "./OwnerNote";

export type ReaderOverlayProps = {
  memory: Memory;
  onClose: () => void;
  /** Where focus goes back to on close: the button that opened the reader. */
  returnFocusTo?: RefObject<HTMLElement | null>;
};

/**
 * The memory as Markdown, full screen for reading. The HTML comes from renderMarkdown, which
 * escapes any HTML in the content, so nothing in a memory can add elements or run scripts.
 */
export function ReaderOverlay({ memory, onClose, returnFocusTo }: ReaderOverlayProps) {
  const dialog = useRef<HTMLDivElement>(null);
  useFocusTrap(dialog, onClose, returnFocusTo);
  const html = useMemo(() => renderMarkdown(memory.content), [memory.content]);

  return (
    <div
      className="overlay"
      onMouseDown={(event) => {
        if (event.target === event.currentTarget) onClose();
      }}
    >
      <div
        ref={dialog}
        className="reader"
        role="dialog"
        aria-modal="true"
        aria-labelledby="reader-title"
      >
        <header className="reader-header">
          <div>
            <h2 id="reader-title">Memory #{memory.id}</h2>
            <p className="reader-meta">
              <KindBadge kind={memory.kind} /> {memory.project || "(no project)"} ·{" "}
              {formatDateTime(memory.created_at)}
              <OwnerNote owner={memory.owner} visibility={memory.visibility} />
            </p>
          </div>
          <button type="button" className="button" onClick={onClose} data-autofocus>
            Close <kbd>Esc</kbd>
          </button>
        </header>
        <article
          className="reader-body markdown"
          tabIndex={0}
          aria-label="Memory content"
          dangerouslySetInnerHTML={{ __html: html }}
        />
      </div>
    </div>
  );
}
