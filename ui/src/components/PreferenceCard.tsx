import { formatDate } from "../lib/format";
import { confidenceLabel, evidenceLabel } from "../lib/preferences";
import type { Preference } from "../types";
import { ConfirmButton } from "./ConfirmButton";
import { MeterBar } from "./MeterBar";

export type PreferenceCardProps = {
  item: Preference;
  replacement: Preference | undefined;
  busy: boolean;
  onOpen: (id: number) => void;
  onLock: (item: Preference) => void;
  onDismiss: (item: Preference) => void;
};

/** One preference: what it says, how sure we are and why, and lock / dismiss. */
export function PreferenceCard({
  item,
  replacement,
  busy,
  onOpen,
  onLock,
  onDismiss,
}: PreferenceCardProps) {
  const superseded = item.superseded_by !== null;
  const { memory } = item;
  return (
    <li className={`preference${superseded ? " is-superseded" : ""}`}>
      <p className="preference-text">{memory.content}</p>
      <div className="preference-facts">
        <MeterBar fraction={item.confidence} label={confidenceLabel(item)} name="confidence" />
        <span>{evidenceLabel(item)}</span>
        <span>last seen {formatDate(item.last_seen)}</span>
        {memory.project && <span>{memory.project}</span>}
        {item.confirmed && <span className="badge badge-ok">confirmed</span>}
      </div>
      {superseded && (
        <p className="superseded-note">
          Replaced by{" "}
          <button type="button" className="link-button" onClick={() => onOpen(item.superseded_by!)}>
            #{item.superseded_by}
          </button>
          {replacement && <>: “{replacement.memory.content}”</>}
        </p>
      )}
      <div className="row-actions">
        <button type="button" className="link-button" onClick={() => onOpen(memory.id)}>
          #{memory.id}
        </button>
        {item.tier !== "explicit" && !superseded && (
          <button
            type="button"
            className="button button-small"
            disabled={busy}
            onClick={() => onLock(item)}
          >
            Lock
          </button>
        )}
        <ConfirmButton
          label="Dismiss"
          question="Dismiss this preference?"
          confirmLabel="Dismiss"
          disabled={busy}
          onConfirm={() => onDismiss(item)}
        />
      </div>
    </li>
  );
}
