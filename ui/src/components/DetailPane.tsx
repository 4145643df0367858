import { useEffect } from "react";
import { routePath, setParams } from "../lib/router";
import { Link } from "./Link";
import { MemoryDetail } from "./MemoryDetail";

export type DetailPaneProps = { id: number };

const close = () => setParams({ memory: null }, { replace: false });

/** The selected memory beside a list (?memory=ID), closable, with a link to its own page. */
export function DetailPane({ id }: DetailPaneProps) {
  useEffect(() => {
    // Escape closes the pane, unless a field or a modal (reader, token prompt) has it.
    function onKeyDown(event: KeyboardEvent) {
      if (event.key !== "Escape" || event.defaultPrevented) return;
      const target = event.target instanceof Element ? event.target : null;
      if (target?.closest("input, textarea, select, [aria-modal='true']")) return;
      close();
    }
    window.addEventListener("keydown", onKeyDown);
    return () => window.removeEventListener("keydown", onKeyDown);
  }, []);

  return (
    <aside className="detail-pane" aria-label={`Memory ${id}`}>
      <div className="pane-bar">
        <Link href={routePath({ name: "memory", id })} className="pane-link">
          Open on its own page
        </Link>
        <button
          type="button"
          className="button button-small"
          aria-label="Close memory details"
          onClick={close}
        >
          Close <kbd>Esc</kbd>
        </button>
      </div>
      <MemoryDetail
        id={id}
        onNavigate={(next) => setParams({ memory: String(next) }, { replace: false })}
      />
    </aside>
  );
}
