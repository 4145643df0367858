import { useState } from "react";

export type ConfirmButtonProps = {
  label: string;
  /** The button's accessible name when its label alone is ambiguous (one per list row);
   * it should start with `label`, e.g. "Retire #42". */
  accessibleLabel?: string;
  /** The question asked before acting, e.g. "Purge #42 for good?" */
  question: string;
  confirmLabel: string;
  onConfirm: () => void;
  disabled?: boolean;
  danger?: boolean;
};

/** A destructive action that asks once, inline, before it runs. */
export function ConfirmButton({
  label,
  accessibleLabel,
  question,
  confirmLabel,
  onConfirm,
  disabled,
  danger = true,
}: ConfirmButtonProps) {
  const [asking, setAsking] = useState(false);
  const tone = danger ? "button-danger" : "";
  if (!asking) {
    return (
      <button
        type="button"
        className={`button button-small ${tone}`}
        disabled={disabled}
        aria-label={accessibleLabel}
        onClick={() => setAsking(true)}
      >
        {label}
      </button>
    );
  }
  return (
    <span className="confirm" role="group" aria-label={question}>
      <span className="confirm-question">{question}</span>
      <button
        type="button"
        className={`button button-small ${tone}`}
        autoFocus
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        {confirmLabel}
      </button>
      <button type="button" className="button button-small" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}
