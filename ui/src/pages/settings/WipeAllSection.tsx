import { type FormEvent, useState } from "react";
import { bulkDelete, errorMessage } from "../../api";
import { ErrorNotice } from "../../components/ErrorNotice";
import { bumpData } from "../../lib/dataVersion";
import { formatCount } from "../../lib/format";

export const WIPE_PHRASE = "delete everything";

type Step =
  { name: "idle" } | { name: "confirm"; matched: number } | { name: "done"; deleted: number };

/** Soft-delete every memory: counted first, then confirmed by typing a phrase. */
export function WipeAllSection() {
  const [step, setStep] = useState<Step>({ name: "idle" });
  const [typed, setTyped] = useState("");
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);

  async function begin() {
    setBusy(true);
    setFailure(null);
    try {
      const dryRun = await bulkDelete({ all: true }, true);
      setTyped("");
      setStep({ name: "confirm", matched: dryRun.matched });
    } catch (error) {
      setFailure(errorMessage(error));
    } finally {
      setBusy(false);
    }
  }

  async function wipe(event: FormEvent) {
    event.preventDefault();
    if (typed.trim().toLowerCase() !== WIPE_PHRASE) return;
    setBusy(true);
    setFailure(null);
    try {
      const result = await bulkDelete({ all: true }, false);
      setStep({ name: "done", deleted: result.deleted });
      bumpData();
    } catch (error) {
      setFailure(errorMessage(error));
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="panel panel-danger" aria-labelledby="wipe-title">
      <h2 id="wipe-title">Wipe all memories</h2>
      <p>Soft-deletes every memory of every project. They can be restored until purged.</p>
      {step.name !== "confirm" && (
        <button type="button" className="button button-danger" disabled={busy} onClick={begin}>
          Wipe all memories…
        </button>
      )}
      {step.name === "confirm" && (
        <form className="confirm-box" onSubmit={wipe}>
          <p>
            This deletes <strong>{formatCount(step.matched)}</strong>{" "}
            {step.matched === 1 ? "memory" : "memories"}. Type <kbd>{WIPE_PHRASE}</kbd> to confirm.
          </p>
          <label className="field">
            <span>Confirmation</span>
            <input
              type="text"
              value={typed}
              autoComplete="off"
              autoFocus
              onChange={(event) => setTyped(event.target.value)}
            />
          </label>
          <div className="row-actions">
            <button
              type="submit"
              className="button button-danger"
              disabled={busy || typed.trim().toLowerCase() !== WIPE_PHRASE}
            >
              Delete {formatCount(step.matched)} {step.matched === 1 ? "memory" : "memories"}
            </button>
            <button type="button" className="button" onClick={() => setStep({ name: "idle" })}>
              Cancel
            </button>
          </div>
        </form>
      )}
      {step.name === "done" && (
        <p className="notice notice-ok" role="status">
          Deleted {formatCount(step.deleted)} {step.deleted === 1 ? "memory" : "memories"}. Restore
          them from the list below.
        </p>
      )}
      {failure && <ErrorNotice message={failure} />}
    </section>
  );
}
