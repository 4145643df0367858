import { formatMs } from "../lib/format";
import type { HealthState } from "../lib/useHealth";

export type HealthBadgeProps = { state: HealthState };

/** "DB ok · 4 ms": the database's state and the last measured /health round trip. */
export function HealthBadge({ state }: HealthBadgeProps) {
  const { reading, error } = state;
  let tone = "unknown";
  let text = "checking…";
  let detail = "Checking the server";
  if (reading) {
    const ok = reading.health.database === "ok";
    tone = ok ? "ok" : "bad";
    text = `DB ${ok ? "ok" : "unavailable"} · ${formatMs(reading.rttMs)}`;
    detail =
      `${reading.health.database_kind} database ${reading.health.database}; ` +
      `model ${reading.health.embedding_model} (${reading.health.embedding_dimension}-d); ` +
      `server ${reading.health.version}; round trip ${formatMs(reading.rttMs)}`;
  } else if (error) {
    tone = "bad";
    text = "server unreachable";
    detail = error;
  }
  return (
    <span className={`health health-${tone}`} title={detail} role="status" aria-live="polite">
      <span className="health-dot" aria-hidden="true" />
      <span className="visually-hidden">Health: </span>
      {text}
    </span>
  );
}
