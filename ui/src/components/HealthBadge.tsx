import { formatCount, formatMs } from "../lib/format";
import type { HealthState } from "../lib/useHealth";

export type HealthBadgeProps = { state: HealthState };

/** "DB ok · 4 ms": the database's state and the last measured /health round trip, and how
 * many memories wait for their vectors while an embeddings endpoint is down. */
export function HealthBadge({ state }: HealthBadgeProps) {
  const { reading, error } = state;
  let tone = "unknown";
  let text = "checking…";
  let detail = "Checking the server";
  if (reading) {
    const { health } = reading;
    const ok = health.database === "ok";
    const waiting = health.vectors_waiting ?? 0;
    const embeddingsDown = health.embeddings === "unavailable";
    tone = !ok ? "bad" : embeddingsDown || waiting > 0 ? "warn" : "ok";
    text = `DB ${ok ? "ok" : "unavailable"} · ${formatMs(reading.rttMs)}`;
    if (embeddingsDown) text += " · embeddings down";
    if (waiting > 0) text += ` · ${formatCount(waiting)} waiting for vectors`;
    detail =
      `${health.database_kind} database ${health.database}; ` +
      `model ${health.embedding_model} (${health.embedding_dimension}-d, ` +
      `${health.embedding_provider}, ${health.embeddings}); ` +
      `server ${health.version}; round trip ${formatMs(reading.rttMs)}`;
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
